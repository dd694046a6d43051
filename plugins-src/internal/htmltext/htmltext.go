// Package htmltext extracts the readable text of an HTML document with
// golang.org/x/net/html's tokenizer (the HTML5 tokenization rules,
// entities decoded). It is a reading of the markup, not a layout: block
// elements break lines, paragraphs and headings are separated by a blank
// line, list items start with "- " (or their number in an ordered list),
// table cells are separated by a tab, white space collapses as a browser
// collapses it except inside <pre>, and what is never shown — script,
// style, head, template, noscript's twin, comments — is dropped.
package htmltext

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ErrTooLarge is returned when the text would pass Options.MaxBytes.
var ErrTooLarge = errors.New("htmltext: output exceeds the size limit")

// Options control Text.
type Options struct {
	// Links writes an http, https or mailto link's URL after its text, in
	// angle brackets, when the text is not the URL itself.
	Links bool
	// MaxBytes bounds the output; 0: none.
	MaxBytes int
}

// Text returns the text of src. HTML has no syntax errors: any text gives
// a result.
func Text(src string, o Options) (string, error) {
	z := html.NewTokenizer(strings.NewReader(src))
	w := &writer{o: o}
	var lists []int // per open list: -1 unordered, else the next number
	var hrefs []string
	var hidden []atom.Atom // the open elements whose content is not shown
	pre := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF: the tokenizer never fails otherwise on a string
		}
		if w.o.MaxBytes > 0 && w.b.Len() > w.o.MaxBytes {
			return "", ErrTooLarge
		}
		switch tt {
		case html.TextToken:
			if len(hidden) == 0 {
				w.text(string(z.Text()), pre > 0)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Body && len(hidden) > 0 && hidden[0] == atom.Head {
				hidden = hidden[:0] // the head ends where the body starts, </head> or not
			}
			if hides(a) {
				if tt == html.StartTagToken {
					hidden = append(hidden, a)
				}
				continue
			}
			if len(hidden) > 0 {
				continue
			}
			switch a {
			case atom.Br:
				w.lineBreak()
			case atom.Hr:
				w.block(2)
			case atom.Pre:
				w.block(2)
				pre++
			case atom.Ul, atom.Ol:
				w.block(1)
				if len(lists) == 0 {
					w.block(2)
				}
				next := -1
				if a == atom.Ol {
					next = 1
					for hasAttr {
						var k, v []byte
						k, v, hasAttr = z.TagAttr()
						if string(k) == "start" {
							if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 && n < 1e9 {
								next = n
							}
						}
					}
				}
				lists = append(lists, next)
			case atom.Li:
				w.block(1)
				indent := strings.Repeat("  ", max(len(lists)-1, 0))
				marker := "- "
				if n := len(lists); n > 0 && lists[n-1] >= 0 {
					marker = strconv.Itoa(lists[n-1]) + ". "
					lists[n-1]++
				}
				w.prefix(indent + marker)
			case atom.Td, atom.Th:
				w.cell()
			case atom.Img:
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "alt" && len(v) > 0 {
						w.text(string(v), false)
					}
				}
			case atom.A:
				href := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						href = strings.TrimSpace(string(v))
					}
				}
				if tt == html.StartTagToken {
					hrefs = append(hrefs, href)
					w.linkStart()
				}
			default:
				if lvl := blockLevel(a); lvl > 0 {
					w.block(lvl)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if hides(a) {
				for i := len(hidden) - 1; i >= 0; i-- {
					if hidden[i] == a {
						hidden = hidden[:i]
						break
					}
				}
				continue
			}
			if len(hidden) > 0 {
				continue
			}
			switch a {
			case atom.Pre:
				if pre > 0 {
					pre--
				}
				w.block(2)
			case atom.Ul, atom.Ol:
				if len(lists) > 0 {
					lists = lists[:len(lists)-1]
				}
				w.block(1)
				if len(lists) == 0 {
					w.block(2)
				}
			case atom.A:
				if n := len(hrefs); n > 0 {
					w.linkEnd(hrefs[n-1])
					hrefs = hrefs[:n-1]
				}
			case atom.Tr:
				w.block(1)
			default:
				if lvl := blockLevel(a); lvl > 0 {
					w.block(lvl)
				}
			}
		}
	}
	out := w.finish()
	if w.o.MaxBytes > 0 && len(out) > w.o.MaxBytes {
		return "", ErrTooLarge
	}
	return out, nil
}

// hides reports whether an element's content is never shown as text.
func hides(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Head, atom.Template, atom.Noscript, atom.Svg, atom.Math,
		atom.Iframe, atom.Object, atom.Canvas, atom.Select, atom.Textarea, atom.Button:
		return true
	}
	return false
}

// blockLevel is the break an element puts around it: 2 a blank line, 1 a
// line break, 0 none (inline).
func blockLevel(a atom.Atom) int {
	switch a {
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Blockquote, atom.Table,
		atom.Figure, atom.Dl, atom.Address, atom.Fieldset, atom.Form, atom.Details:
		return 2
	case atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main, atom.Nav, atom.Aside,
		atom.Tr, atom.Dt, atom.Dd, atom.Figcaption, atom.Summary, atom.Caption, atom.Legend, atom.Body, atom.Html,
		atom.Thead, atom.Tbody, atom.Tfoot, atom.Center, atom.Option, atom.Label:
		return 1
	}
	return 0
}

// writer assembles the text: breaks and spaces are pending until text
// follows, so none is doubled and none ends the result.
type writer struct {
	o       Options
	b       strings.Builder
	brk     int  // pending break: 0, 1 (line) or 2 (blank line)
	space   bool // pending space
	pfx     string
	line    bool // the current line has text
	cellGap bool // a table cell separator is pending
	linkAt  int  // output length when the innermost link started
}

func (w *writer) block(level int) {
	w.brk = max(w.brk, level)
	w.space = false
	w.cellGap = false
}

func (w *writer) lineBreak() {
	if w.brk == 0 {
		w.b.WriteByte('\n')
		w.line = false
	}
	w.space = false
}

func (w *writer) prefix(p string) { w.pfx = p }

func (w *writer) cell() {
	if w.line && w.brk == 0 {
		w.cellGap = true
	}
}

func (w *writer) flush() {
	if w.brk > 0 {
		if w.b.Len() > 0 {
			w.b.WriteString("\n\n"[:w.brk])
		}
		w.line, w.brk = false, 0
	}
	if !w.line {
		w.space = false
	}
	if w.pfx != "" {
		w.b.WriteString(w.pfx)
		w.pfx = ""
		w.space = false
	}
	if w.cellGap {
		w.b.WriteByte('\t')
		w.cellGap, w.space = false, false
	}
	if w.space {
		w.b.WriteByte(' ')
		w.space = false
	}
}

func (w *writer) text(s string, pre bool) {
	if pre {
		if s == "" {
			return
		}
		w.flush()
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
		w.b.WriteString(s)
		w.line = !strings.HasSuffix(s, "\n")
		return
	}
	if s != "" && isSpace(rune(s[0])) {
		w.space = w.line
	}
	words := strings.FieldsFunc(s, isSpace)
	for i, word := range words {
		if i > 0 {
			w.space = true
		}
		w.flush()
		w.b.WriteString(word)
		w.line = true
	}
	if len(words) > 0 && isSpace(rune(s[len(s)-1])) {
		w.space = true
	}
}

// isSpace is HTML's ASCII white space (U+00A0 is not white space: it stays).
func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

func (w *writer) linkStart() {
	w.linkAt = w.b.Len()
}

func (w *writer) linkEnd(href string) {
	if !w.o.Links || href == "" || w.b.Len() < w.linkAt {
		return
	}
	lower := strings.ToLower(href)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "mailto:") {
		return
	}
	label := strings.TrimSpace(w.b.String()[w.linkAt:])
	if label == href || "mailto:"+label == href {
		return
	}
	w.space = true
	w.flush()
	w.b.WriteString("<" + href + ">")
	w.line = true
}

// finish ends the text: no trailing white space on any line, no trailing
// break.
func (w *writer) finish() string {
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// Package xmlfmt formats and minifies XML. It reads the text with
// encoding/xml's token stream (strict: well-formed XML 1.0, the five
// predefined entities and character references), checks that end tags
// match and that there is one root element, and writes the tree back:
// indented one element a line, or with the white space between elements
// removed. Text is never trimmed: an element holding text keeps its
// content exactly, so formatting changes no text node that has characters
// other than white space.
package xmlfmt

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxDepth is the deepest element nesting accepted.
const MaxDepth = 1000

// MaxIndent is the widest indentation accepted.
const MaxIndent = 8

var (
	// ErrTooLarge is returned when the output would pass Options.MaxBytes.
	ErrTooLarge = errors.New("xmlfmt: output exceeds the size limit")
	// ErrIndent is returned for an indent outside 0..MaxIndent.
	ErrIndent = errors.New("xmlfmt: indent must be between 0 and 8")
)

const subject = "text is not well-formed XML"

// Options control Format.
type Options struct {
	Indent   int  // spaces per level, 1..MaxIndent (0 behaves as Minify)
	Comments bool // keep comments (Minify drops them)
	MaxBytes int  // bound on the output; 0: none
}

type kind uint8

const (
	element kind = iota
	text
	comment
	procInst
	directive
)

type node struct {
	kind     kind
	name     string // element name with its prefix, or a processing instruction's target
	attrs    []xml.Attr
	data     string // text, comment, instruction or directive
	children []*node
}

// Format re-indents text.
func Format(src string, o Options) (string, error) {
	if o.Indent < 0 || o.Indent > MaxIndent {
		return "", ErrIndent
	}
	doc, err := parse(src)
	if err != nil {
		return "", err
	}
	w := &writer{indent: o.Indent, comments: o.Comments, max: o.MaxBytes}
	for i, n := range doc {
		if o.Indent > 0 && i > 0 {
			w.b.WriteByte('\n')
		}
		w.node(n, 0)
	}
	if w.full {
		return "", ErrTooLarge
	}
	return w.b.String(), nil
}

// Minify removes the white space between elements (text nodes of white
// space alone) and comments; everything else is kept.
func Minify(src string, maxBytes int) (string, error) {
	return Format(src, Options{MaxBytes: maxBytes})
}

// parse reads src into its top-level nodes.
func parse(src string) ([]*node, error) {
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return nil, textpos.New(src, i, subject, "invalid UTF-8")
	}
	d := xml.NewDecoder(strings.NewReader(src))
	d.Strict = true
	// The text is already UTF-8 (it came as a JSON string), whatever its
	// declaration says.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var top []*node
	var stack []*node
	roots := 0
	for {
		start := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fault(src, int(d.InputOffset()), err)
		}
		var n *node
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if roots++; roots > 1 {
					return nil, textpos.New(src, start, subject, "more than one root element")
				}
			}
			if len(stack) == MaxDepth {
				return nil, textpos.New(src, start, subject, "elements nested deeper than 1000 levels")
			}
			n = &node{kind: element, name: name(t.Name), attrs: t.Attr}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != name(t.Name) {
				return nil, textpos.New(src, start, subject, "end tag does not match the open element")
			}
			stack = stack[:len(stack)-1]
			continue
		case xml.CharData:
			if len(stack) == 0 {
				if strings.TrimLeft(string(t), " \t\r\n") != "" {
					return nil, textpos.New(src, start, subject, "text outside the root element")
				}
				continue
			}
			n = &node{kind: text, data: string(t)}
		case xml.Comment:
			n = &node{kind: comment, data: string(t)}
		case xml.ProcInst:
			n = &node{kind: procInst, name: t.Target, data: string(t.Inst)}
		case xml.Directive:
			n = &node{kind: directive, data: string(t)}
		}
		if len(stack) == 0 {
			top = append(top, n)
		} else {
			p := stack[len(stack)-1]
			p.children = append(p.children, n)
		}
		if n.kind == element {
			stack = append(stack, n)
		}
	}
	if len(stack) > 0 {
		return nil, textpos.New(src, len(src), subject, "unexpected end of input, an element is not closed")
	}
	if roots == 0 {
		return nil, textpos.New(src, len(src), subject, "no root element")
	}
	return top, nil
}

func name(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// fault turns an encoding/xml error into a *textpos.Error with a reason of
// the package's own: encoding/xml's messages can quote the text.
func fault(src string, offset int, err error) error {
	var se *xml.SyntaxError
	if !errors.As(err, &se) {
		return textpos.New(src, offset, subject, "malformed markup")
	}
	msg := se.Msg
	reason := "malformed markup"
	switch {
	case strings.Contains(msg, "unexpected EOF"):
		reason, offset = "unexpected end of input", len(src)
	case strings.Contains(msg, "entity"):
		reason = "unknown or malformed entity or character reference"
	case strings.Contains(msg, "attribute"):
		reason = "malformed attribute"
	case strings.Contains(msg, "UTF-8"), strings.Contains(msg, "illegal character"):
		reason = "character not allowed in XML"
	case strings.Contains(msg, "element name"), strings.Contains(msg, "invalid XML name"):
		reason = "malformed element name"
	}
	return textpos.New(src, offset, subject, reason)
}

type writer struct {
	b        strings.Builder
	indent   int
	comments bool
	max      int
	full     bool
}

func (w *writer) newline(depth int) {
	if w.indent == 0 {
		return
	}
	w.b.WriteByte('\n')
	for range depth * w.indent {
		w.b.WriteByte(' ')
	}
}

// keeps reports whether n is written at all.
func (w *writer) keeps(n *node) bool {
	switch n.kind {
	case comment:
		return w.comments
	case text:
		return strings.Trim(n.data, " \t\r\n") != ""
	}
	return true
}

func (w *writer) node(n *node, depth int) {
	if w.full || w.max > 0 && w.b.Len() > w.max {
		w.full = true
		return
	}
	switch n.kind {
	case text:
		escape(&w.b, n.data, false)
	case comment:
		w.b.WriteString("<!--")
		w.b.WriteString(n.data)
		w.b.WriteString("-->")
	case procInst:
		w.b.WriteString("<?")
		w.b.WriteString(n.name)
		if n.data != "" {
			w.b.WriteByte(' ')
			w.b.WriteString(n.data)
		}
		w.b.WriteString("?>")
	case directive:
		w.b.WriteString("<!")
		w.b.WriteString(n.data)
		w.b.WriteByte('>')
	case element:
		for _, c := range n.children {
			if c.kind == text && w.keeps(c) {
				// Mixed content: the text is content, and white space
				// added between its elements would be text too.
				w.raw(n)
				return
			}
		}
		var kept []*node
		for _, c := range n.children {
			if w.keeps(c) {
				kept = append(kept, c)
			}
		}
		w.open(n)
		if len(kept) == 0 {
			w.b.WriteString("/>")
			return
		}
		w.b.WriteByte('>')
		for _, c := range kept {
			w.newline(depth + 1)
			w.node(c, depth+1)
		}
		w.newline(depth)
		w.close(n)
	}
}

// raw writes n and its descendants with no white space added or removed
// (comments still follow Options.Comments).
func (w *writer) raw(n *node) {
	if n.kind != element {
		w.node(n, 0)
		return
	}
	if w.full || w.max > 0 && w.b.Len() > w.max {
		w.full = true
		return
	}
	w.open(n)
	var kids []*node
	for _, c := range n.children {
		if c.kind != comment || w.comments {
			kids = append(kids, c)
		}
	}
	if len(kids) == 0 {
		w.b.WriteString("/>")
		return
	}
	w.b.WriteByte('>')
	for _, c := range kids {
		w.raw(c)
	}
	w.close(n)
}

// open writes an element's start tag without its final '>'.
func (w *writer) open(n *node) {
	w.b.WriteByte('<')
	w.b.WriteString(n.name)
	for _, a := range n.attrs {
		w.b.WriteByte(' ')
		w.b.WriteString(name(a.Name))
		w.b.WriteString(`="`)
		escape(&w.b, a.Value, true)
		w.b.WriteByte('"')
	}
}

func (w *writer) close(n *node) {
	w.b.WriteString("</")
	w.b.WriteString(n.name)
	w.b.WriteByte('>')
}

// escape writes s as character data, or as an attribute value in double
// quotes (attr), escaping what XML requires: & and < always, > (so that
// "]]>" cannot appear), and in attributes " and the white space that
// attribute-value normalisation would otherwise turn into spaces.
func escape(b *strings.Builder, s string, attr bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			if attr {
				b.WriteString("&quot;")
			} else {
				b.WriteByte(c)
			}
		case '\t', '\n', '\r':
			if attr {
				b.WriteString([]string{'\t': "&#9;", '\n': "&#10;", '\r': "&#13;"}[c])
			} else if c == '\r' {
				b.WriteString("&#13;")
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
}

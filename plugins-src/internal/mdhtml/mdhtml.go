// Package mdhtml renders Markdown to HTML with github.com/yuin/goldmark:
// CommonMark, and with GFM on its tables, strikethrough, autolinks and
// task lists. The output is safe to insert in a page: raw HTML in the
// Markdown is never passed through (goldmark writes a comment in its
// place), and a link or image whose URL has a scheme other than http,
// https or mailto loses its URL (javascript:, data:, vbscript:, file: and
// every other scheme), so nothing the Markdown says can run script.
package mdhtml

import (
	"bytes"
	"errors"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// ErrTooLarge is returned when the HTML would pass Options.MaxBytes.
var ErrTooLarge = errors.New("mdhtml: output exceeds the size limit")

// MaxNesting bounds the container markers ('>' and list markers) that
// open one line and the depth of nested '[': goldmark's work grows with
// the square of either (120 KB of '>' takes it a minute), so deeper
// nesting is refused before parsing. No real document comes near.
const MaxNesting = 100

const subject = "text cannot be rendered as Markdown"

// Options control ToHTML.
type Options struct {
	GFM       bool // GitHub Flavored Markdown's extensions
	HardWraps bool // a line break in a paragraph is <br>
	MaxBytes  int  // bound on the HTML; 0: none
}

// ToHTML renders src. It cannot fail on any text: Markdown has no syntax
// errors. It builds a new goldmark instance per call (cheap: no tables).
func ToHTML(src string, o Options) (string, error) {
	if off, reason := tooNested(src); off >= 0 {
		return "", textpos.New(src, off, subject, reason)
	}
	var exts []goldmark.Extender
	if o.GFM {
		exts = append(exts, extension.GFM)
	}
	var ropts []goldmark.Option
	if o.HardWraps {
		ropts = append(ropts, goldmark.WithRendererOptions(html.WithHardWraps()))
	}
	md := goldmark.New(append(ropts, goldmark.WithExtensions(exts...))...)
	source := []byte(src)
	doc := md.Parser().Parse(text.NewReader(source))
	if err := secure(doc, source); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := md.Renderer().Render(&limited{w: &buf, max: o.MaxBytes}, source, doc); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return "", ErrTooLarge
		}
		return "", err
	}
	return buf.String(), nil
}

// secure removes the URLs of links and images that are not Safe, and turns
// autolinks that are not into text.
func secure(doc ast.Node, source []byte) error {
	var autolinks []*ast.AutoLink
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Link:
			if !Safe(string(t.Destination)) {
				t.Destination = nil
			}
		case *ast.Image:
			if !Safe(string(t.Destination)) {
				t.Destination = nil
			}
		case *ast.AutoLink:
			if !Safe(string(t.URL(source))) {
				autolinks = append(autolinks, t)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, a := range autolinks {
		a.Parent().ReplaceChild(a.Parent(), a, ast.NewString(a.Label(source)))
	}
	return err
}

// Safe reports whether a link or image URL may be kept: a relative URL
// (no scheme: a path, a query, a fragment, //host) or one whose scheme is
// http, https or mailto. As browsers do, ASCII tabs, line breaks and
// other control characters are ignored when reading the scheme, and the
// scheme is compared in lower case.
func Safe(url string) bool {
	var b strings.Builder
	for i := 0; i < len(url); i++ {
		if c := url[i]; c > ' ' && c != 0x7f {
			b.WriteByte(c)
		}
	}
	u := b.String()
	colon := strings.IndexByte(u, ':')
	if colon < 0 {
		return true
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 && i < colon {
		return true // the colon is in the path, query or fragment
	}
	switch strings.ToLower(u[:colon]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// tooNested returns the offset and reason of the first place where src
// nests deeper than MaxNesting, or -1: a line opening with more than
// MaxNesting container markers ("> > - > 1. …"), or '[' nested deeper
// than MaxNesting (backslash-escaped brackets aside; a bound, not a
// parse).
func tooNested(src string) (int, string) {
	depth := 0
	lineStart := true
	for i := 0; i < len(src); i++ {
		if lineStart {
			lineStart = false
			if n, at := markers(src[i:]); n > MaxNesting {
				return i + at, "more than 100 nested quote or list markers open a line"
			}
		}
		switch src[i] {
		case '\\':
			i++
		case '[':
			if depth++; depth > MaxNesting {
				return i, "brackets nested deeper than 100 levels"
			}
		case ']':
			depth = max(depth-1, 0)
		case '\n':
			lineStart = true
		}
	}
	return -1, ""
}

// markers counts the block container markers that open line (up to its
// end), and returns the offset of the one past the limit.
func markers(line string) (int, int) {
	n, i := 0, 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		start := i
		switch c := line[i]; {
		case c == '>':
			i++
		case (c == '-' || c == '+' || c == '*') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			i += 2
		case '0' <= c && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && '0' <= line[j] && line[j] <= '9' {
				j++
			}
			if j+1 < len(line) && (line[j] == '.' || line[j] == ')') && (line[j+1] == ' ' || line[j+1] == '\t') {
				i = j + 2
			} else {
				return n, i
			}
		default:
			return n, i
		}
		if n++; n > MaxNesting {
			return n, start
		}
	}
	return n, i
}

// limited stops writing past max bytes.
type limited struct {
	w   *bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.max > 0 && l.w.Len()+len(p) > l.max {
		return 0, ErrTooLarge
	}
	return l.w.Write(p)
}

func (l *limited) WriteString(s string) (int, error) { return l.Write([]byte(s)) }
func (l *limited) WriteByte(c byte) error {
	_, err := l.Write([]byte{c})
	return err
}
func (l *limited) WriteRune(r rune) (int, error) { return l.Write([]byte(string(r))) }

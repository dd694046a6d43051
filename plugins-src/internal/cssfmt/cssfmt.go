// Package cssfmt re-indents CSS text: one declaration per line, a block's
// contents one level deeper than its prelude, a blank line between top-level
// rules. Only whitespace changes: strings, comments, url() arguments and
// escapes are copied as written, nothing is added, reordered or removed
// except whitespace and empty statements (";;"). CSS has no syntax errors that
// stop a parser, so neither does Beautify: unbalanced braces and unterminated
// strings or comments are laid out as well as they can be.
package cssfmt

import (
	"errors"
	"strings"
)

// MaxIndent is the widest indentation accepted, in spaces per level.
const MaxIndent = 8

var (
	// ErrTooLarge is returned when the output would exceed the maxBytes bound.
	ErrTooLarge = errors.New("cssfmt: output exceeds the size limit")
	// ErrIndent is returned when the indent is outside 0..MaxIndent.
	ErrIndent = errors.New("cssfmt: indent must be between 0 and 8")
)

// Beautify re-indents text with indent spaces per level (0 to MaxIndent).
// maxBytes bounds the output, 0 meaning no bound. The result has no trailing
// newline.
func Beautify(text string, indent, maxBytes int) (string, error) {
	if indent < 0 || indent > MaxIndent {
		return "", ErrIndent
	}
	if maxBytes <= 0 {
		maxBytes = int(^uint(0) >> 1)
	}
	w := writer{indent: indent, out: make([]byte, 0, len(text)+len(text)/4+16)}
	start, parens := 0, 0
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case '"', '\'':
			i = skipString(text, i)
		case '/':
			if i+1 < len(text) && text[i+1] == '*' {
				i = skipComment(text, i)
			} else {
				i++
			}
		case '\\':
			i = min(i+2, len(text))
		case '(':
			parens++
			i++
		case ')':
			parens = max(parens-1, 0)
			i++
		case ';':
			if parens > 0 {
				i++
				continue
			}
			fallthrough
		case '{', '}':
			w.statement(text[start:i], c)
			parens = 0
			i++
			start = i
		default:
			i++
		}
		if len(w.out) > maxBytes {
			return "", ErrTooLarge
		}
	}
	w.statement(text[start:], 0)
	if len(w.out) > maxBytes {
		return "", ErrTooLarge
	}
	return string(w.out), nil
}

// skipString returns the index after the string starting at i: after its
// closing quote, at an unescaped newline (a CSS bad string, which the
// newline ends), or the end of text.
func skipString(text string, i int) int {
	end, _ := stringEnd(text, i)
	return end
}

// stringEnd is skipString, also reporting whether a newline ended the
// string.
func stringEnd(text string, i int) (end int, badString bool) {
	quote := text[i]
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case quote:
			return i + 1, false
		case '\n':
			return i, true
		}
	}
	return len(text), false
}

// skipComment returns the index after the comment starting at i, or the end
// of text when it is not closed.
func skipComment(text string, i int) int {
	if end := strings.Index(text[i+2:], "*/"); end >= 0 {
		return i + 2 + end + 2
	}
	return len(text)
}

type writer struct {
	indent  int
	depth   int
	out     []byte
	pending bool // a top-level block closed: the next line follows a blank line
}

const spaces = "                                                                "

// line writes the concatenation of parts as one line at the current depth.
func (w *writer) line(parts ...string) {
	if len(w.out) > 0 {
		w.out = append(w.out, '\n')
		if w.pending {
			w.out = append(w.out, '\n')
		}
	}
	w.pending = false
	for n := w.depth * w.indent; n > 0; {
		k := min(n, len(spaces))
		w.out = append(w.out, spaces[:k]...)
		n -= k
	}
	for _, p := range parts {
		w.out = append(w.out, p...)
	}
}

// statement lays out the statement s, ended by end ('{', '}', ';', or 0 at
// the end of the text).
func (w *writer) statement(s string, end byte) {
	s = collapse(s)
	for strings.HasPrefix(s, "/*") {
		n := skipComment(s, 0)
		w.line(s[:n])
		s = strings.TrimLeft(s[n:], " ")
	}
	switch end {
	case '{':
		if s == "" {
			w.line("{")
		} else {
			w.line(s, " {")
		}
		w.depth++
	case ';':
		if s != "" {
			w.declaration(s, ";")
		}
	case '}':
		if s != "" {
			w.declaration(s, "")
		}
		w.depth = max(w.depth-1, 0)
		w.line("}")
		w.pending = w.depth == 0
	default:
		if s != "" {
			w.declaration(s, "")
		}
	}
}

// declaration writes the statement s, then end, as a line: "name: value"
// when s is inside a block and its first top-level colon separates a
// property name from its value; as is otherwise (top-level at-rules, a
// colon only inside parentheses or strings).
func (w *writer) declaration(s, end string) {
	if w.depth == 0 || s[0] == '@' {
		w.line(s, end)
		return
	}
	parens := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '"', '\'':
			i = skipString(s, i)
			continue
		case '/':
			if i+1 < len(s) && s[i+1] == '*' {
				i = skipComment(s, i)
				continue
			}
		case '\\':
			i += 2
			continue
		case '(', '[':
			parens++
		case ')', ']':
			parens--
		case ':':
			if parens == 0 {
				name := strings.TrimRight(s[:i], " ")
				value := strings.TrimLeft(s[i+1:], " ")
				if value == "" {
					w.line(name, ":", end)
				} else {
					w.line(name, ": ", value, end)
				}
				return
			}
		}
		i++
	}
	w.line(s, end)
}

// collapse trims s and turns each run of whitespace outside strings and
// comments into one space. Text that needs no change (minified CSS, most
// of all) is returned as is, without a copy.
func collapse(s string) string {
	if collapsed(s) {
		return s
	}
	var b []byte
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
			continue
		case c == '"' || c == '\'':
			n, bad := stringEnd(s, i)
			if bad {
				// The newline that ends a bad string stays, so that the
				// string still ends there when the output is read again.
				n++
			}
			b = appendSpaced(b, space, s[i:n])
			i = n
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			n := skipComment(s, i)
			b = appendSpaced(b, space, s[i:n])
			i = n
		case c == '\\':
			n := min(i+2, len(s))
			b = appendSpaced(b, space, s[i:n])
			i = n
		default:
			b = appendSpaced(b, space, s[i:i+1])
			i++
		}
		space = false
	}
	return string(b)
}

// collapsed reports whether collapse(s) is s: no white space at either end,
// and only single spaces inside. (A space inside a string or comment is
// kept by collapse too, so the check needs no tokenizing; a newline ending
// a bad string makes it answer false, which is merely slower.)
func collapsed(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\r', '\f':
			return false
		case ' ':
			if s[i+1] == ' ' {
				return false
			}
		}
	}
	return true
}

func appendSpaced(b []byte, space bool, s string) []byte {
	if space && len(b) > 0 {
		b = append(b, ' ')
	}
	return append(b, s...)
}

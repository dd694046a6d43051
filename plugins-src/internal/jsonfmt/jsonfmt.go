// Package jsonfmt validates, formats and minifies JSON text.
//
// The input is strict RFC 8259 JSON. Output is lossless: strings and numbers
// are copied exactly as written (escapes, exponents and big integers kept),
// duplicate object keys are kept in their order, and only whitespace changes —
// plus the member order when keys are sorted. Faults are *textpos.Error values
// with a position and a short reason that never quotes the text.
package jsonfmt

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted.
const MaxDepth = 1000

// MaxIndent is the widest indentation accepted, in spaces per level.
const MaxIndent = 8

const subject = "text is not valid JSON"

var (
	// ErrTooLarge is returned when the output would exceed Options.MaxBytes.
	ErrTooLarge = errors.New("jsonfmt: output exceeds the size limit")
	// ErrIndent is returned when Options.Indent is outside 0..MaxIndent.
	ErrIndent = errors.New("jsonfmt: indent must be between 0 and 8")
)

// Options control Format.
type Options struct {
	// Indent is the number of spaces per nesting level, 0 to MaxIndent. With
	// 0 the output is compact (as JSON.stringify with no indent): no spaces,
	// no newlines.
	Indent int
	// SortKeys orders the members of every object by key, compared by code
	// point after unescaping. Members with equal keys keep their order.
	SortKeys bool
	// MaxBytes bounds the output; 0 means no bound. Formatting stops with
	// ErrTooLarge as soon as the bound is passed, so a deeply nested text with
	// a wide indent cannot grow without limit.
	MaxBytes int
}

// Validate reports whether text is one valid JSON value. It returns nil or a
// *textpos.Error locating the first fault.
func Validate(text string) error {
	_, err := parse(text)
	return err
}

// Minify returns text with all insignificant whitespace removed.
func Minify(text string) (string, error) {
	return Format(text, Options{})
}

// Format re-indents text according to o.
func Format(text string, o Options) (string, error) {
	if o.Indent < 0 || o.Indent > MaxIndent {
		return "", ErrIndent
	}
	toks, err := parse(text)
	if err != nil {
		return "", err
	}
	w := writer{
		text:  text,
		toks:  toks,
		o:     o,
		limit: o.MaxBytes,
		out:   make([]byte, 0, len(text)+len(text)/4+16),
	}
	if w.limit <= 0 {
		w.limit = int(^uint(0) >> 1)
	}
	if _, ok := w.value(0, 0); !ok {
		return "", ErrTooLarge
	}
	return string(w.out), nil
}

// writer renders a token list. Its value method is recursive; the parser
// bounds the depth at MaxDepth.
type writer struct {
	text  string
	toks  []token
	o     Options
	limit int
	out   []byte
}

const spaces = "                                                                "

func (w *writer) newline(depth int) {
	if w.o.Indent == 0 {
		return
	}
	w.out = append(w.out, '\n')
	for n := depth * w.o.Indent; n > 0; {
		k := min(n, len(spaces))
		w.out = append(w.out, spaces[:k]...)
		n -= k
	}
}

func (w *writer) raw(t token) {
	w.out = append(w.out, w.text[t.start:t.end]...)
}

// value writes the value starting at token i and returns the index after it.
// It reports false once the output passes the limit.
func (w *writer) value(i, depth int) (int, bool) {
	t := w.toks[i]
	switch t.kind {
	case objectStart, arrayStart:
		end := int(t.match)
		if end == i+1 {
			w.raw(t)
			w.raw(w.toks[end])
			return end + 1, len(w.out) <= w.limit
		}
		w.raw(t)
		var ok bool
		if t.kind == objectStart {
			ok = w.members(i+1, end, depth+1)
		} else {
			ok = w.elements(i+1, end, depth+1)
		}
		if !ok {
			return 0, false
		}
		w.newline(depth)
		w.raw(w.toks[end])
		return end + 1, len(w.out) <= w.limit
	default:
		w.raw(t)
		return i + 1, len(w.out) <= w.limit
	}
}

func (w *writer) elements(i, end, depth int) bool {
	for first := true; i < end; first = false {
		if !first {
			w.out = append(w.out, ',')
		}
		w.newline(depth)
		var ok bool
		if i, ok = w.value(i, depth); !ok {
			return false
		}
	}
	return true
}

// next returns the index after the value starting at token i.
func (w *writer) next(i int) int {
	if k := w.toks[i].kind; k == objectStart || k == arrayStart {
		return int(w.toks[i].match) + 1
	}
	return i + 1
}

func (w *writer) members(i, end, depth int) bool {
	if !w.o.SortKeys {
		for first := true; i < end; first = false {
			if !w.member(i, depth, first) {
				return false
			}
			i = w.next(i + 1)
		}
		return true
	}
	type member struct {
		key   string
		index int
	}
	n := 0
	for j := i; j < end; j = w.next(j + 1) {
		n++
	}
	ms := make([]member, 0, n)
	for i < end {
		ms = append(ms, member{key: w.key(w.toks[i]), index: i})
		i = w.next(i + 1)
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for n, m := range ms {
		if !w.member(m.index, depth, n == 0) {
			return false
		}
	}
	return true
}

// member writes the member whose key is token k.
func (w *writer) member(k, depth int, first bool) bool {
	if !first {
		w.out = append(w.out, ',')
	}
	w.newline(depth)
	w.raw(w.toks[k])
	w.out = append(w.out, ':')
	if w.o.Indent > 0 {
		w.out = append(w.out, ' ')
	}
	_, ok := w.value(k+1, depth)
	return ok
}

// key returns the unescaped content of a string token, for ordering only.
// Lone surrogates become their own code points in WTF-8 so that they still
// order by code point.
func (w *writer) key(t token) string {
	s := w.text[t.start+1 : t.end-1]
	if !strings.Contains(s, `\`) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b = append(b, s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s[i:])
			i += 4
			if utf16.IsSurrogate(r) && r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if lo := hex4(s[i+2:]); 0xDC00 <= lo && lo <= 0xDFFF {
					b = utf8.AppendRune(b, utf16.DecodeRune(r, lo))
					i += 6
					continue
				}
			}
			if utf16.IsSurrogate(r) {
				b = append(b, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
				continue
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, c)
		}
	}
	return string(b)
}

func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s[:4]) {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// Package percent percent-encodes text for a URL component and decodes it
// again (RFC 3986 §2.1, UTF-8, upper-case hex digits).
//
//   - Query encodes a query parameter name or value as forms do
//     (application/x-www-form-urlencoded): letters, digits and "-_.~" stay,
//     a space becomes "+", every other byte becomes %XX. Decoding turns "+"
//     into a space.
//   - Path encodes one path segment as Go's url.PathEscape does: letters,
//     digits, "-_.~" and "$&+=:@" stay, every other byte (a space, "/",
//     "?", "#", "%", ";", ",", non-ASCII) becomes %XX. Decoding leaves "+"
//     alone.
//
// Decoding accepts every character that is not a "%" as itself. A "%" not
// followed by two hex digits is a *textpos.Error; so are escapes whose bytes
// are not UTF-8, at the escape where the bad sequence starts.
package percent

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Component is the URL component text is encoded for; its values are the
// service's.
type Component string

// The components.
const (
	Query Component = "query"
	Path  Component = "path"
)

// ErrComponent is returned for a component the package does not know.
var ErrComponent = errors.New("percent: unknown component")

const subject = "text is not valid percent-encoding"

const hexDigits = "0123456789ABCDEF"

// keep reports whether b stays as itself in component c.
func keep(b byte, c Component) bool {
	switch {
	case 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '-', '_', '.', '~':
		return true
	case '$', '&', '+', '=', ':', '@':
		return c == Path
	}
	return false
}

// Encode percent-encodes text's UTF-8 bytes for component c.
func Encode(text string, c Component) (string, error) {
	if c != Query && c != Path {
		return "", ErrComponent
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/2)
	for i := 0; i < len(text); i++ {
		switch ch := text[i]; {
		case keep(ch, c):
			b.WriteByte(ch)
		case ch == ' ' && c == Query:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[ch>>4])
			b.WriteByte(hexDigits[ch&15])
		}
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Decode decodes text as percent-encoded for component c.
func Decode(text string, c Component) (string, error) {
	if c != Query && c != Path {
		return "", ErrComponent
	}
	out := make([]byte, 0, len(text))
	// from[i] is the offset in text of the character that produced out[i],
	// kept only once an escape has been seen, to place UTF-8 faults.
	var from []int
	escaped := false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '%':
			if i+2 >= len(text) {
				return "", textpos.New(text, i, subject, "'%' must be followed by two hex digits")
			}
			hi, ok1 := unhex(text[i+1])
			lo, ok2 := unhex(text[i+2])
			if !ok1 || !ok2 {
				return "", textpos.New(text, i, subject, "'%' must be followed by two hex digits")
			}
			if !escaped {
				escaped = true
				from = make([]int, len(out), len(text))
				for k := range from {
					from[k] = k
				}
			}
			out = append(out, hi<<4|lo)
			from = append(from, i)
			i += 2
			continue
		case ch == '+' && c == Query:
			ch = ' '
		}
		out = append(out, ch)
		if escaped {
			from = append(from, i)
		}
	}
	if escaped && !utf8.Valid(out) {
		for k := 0; k < len(out); {
			r, n := utf8.DecodeRune(out[k:])
			if r == utf8.RuneError && n == 1 {
				return "", textpos.New(text, from[k], subject, "escaped bytes are not UTF-8 text")
			}
			k += n
		}
	}
	return string(out), nil
}

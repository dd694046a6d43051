// Package base64text encodes text to base64 and decodes base64 to text, with
// the standard or the URL-safe alphabet (RFC 4648 §4 and §5), with or without
// "=" padding.
//
// Decoding ignores CR and LF (base64 wrapped at a line length) and nothing
// else: a space, a character of the other alphabet, misplaced or missing
// padding, or a final group too short to hold a byte is a *textpos.Error at
// the first bad byte. The decoded bytes must be UTF-8 text; when they are not,
// Decode returns a *NotUTF8Error.
package base64text

import (
	"encoding/base64"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Alphabet is a base64 alphabet; its values are the service's.
type Alphabet string

// The alphabets.
const (
	Standard Alphabet = "standard" // A–Z a–z 0–9 + /
	URL      Alphabet = "url"      // A–Z a–z 0–9 - _
)

// ErrAlphabet is returned for an alphabet the package does not know.
var ErrAlphabet = errors.New("base64text: unknown alphabet")

// NotUTF8Error is returned when decoded bytes are not UTF-8 text. Offset is
// the position of the first invalid byte in the decoded bytes.
type NotUTF8Error struct {
	Offset int
}

func (e *NotUTF8Error) Error() string {
	return "decoded bytes are not UTF-8 text: first invalid byte at offset " + strconv.Itoa(e.Offset) +
		" of the decoded data (this tool returns text only)"
}

func encoding(a Alphabet, padding bool) (*base64.Encoding, error) {
	var enc *base64.Encoding
	switch a {
	case Standard:
		enc = base64.StdEncoding
	case URL:
		enc = base64.URLEncoding
	default:
		return nil, ErrAlphabet
	}
	if !padding {
		enc = enc.WithPadding(base64.NoPadding)
	}
	return enc, nil
}

// Encode returns the base64 encoding of text's UTF-8 bytes.
func Encode(text string, a Alphabet, padding bool) (string, error) {
	enc, err := encoding(a, padding)
	if err != nil {
		return "", err
	}
	return enc.EncodeToString([]byte(text)), nil
}

// Decode returns the text whose UTF-8 bytes text encodes.
func Decode(text string, a Alphabet, padding bool) (string, error) {
	enc, err := encoding(a, padding)
	if err != nil {
		return "", err
	}
	if err := check(text, a, padding); err != nil {
		return "", err
	}
	b, err := enc.DecodeString(text)
	if err != nil {
		// check accepts exactly what the decoder accepts; this is a backstop.
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return "", textpos.New(text, int(ce), subject(a), "invalid base64")
		}
		return "", err
	}
	if !utf8.Valid(b) {
		return "", &NotUTF8Error{Offset: firstInvalid(b)}
	}
	return string(b), nil
}

func subject(a Alphabet) string {
	if a == URL {
		return "text is not valid url-alphabet base64"
	}
	return "text is not valid standard base64"
}

// inAlphabet reports whether c is a data character of alphabet a.
func inAlphabet(c byte, a Alphabet) bool {
	switch {
	case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return true
	case a == Standard:
		return c == '+' || c == '/'
	default:
		return c == '-' || c == '_'
	}
}

// check finds the first fault in text as base64 of alphabet a, with or
// without padding, ignoring CR and LF.
func check(text string, a Alphabet, padding bool) error {
	fail := func(offset int, reason string) error { return textpos.New(text, offset, subject(a), reason) }
	data, pads := 0, 0 // data characters and '=' seen
	firstPad, lastData := -1, -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\r' || c == '\n':
		case c == '=':
			if !padding {
				return fail(i, "'=' padding found, but padding is off")
			}
			if pads == 0 {
				firstPad = i
				if data%4 < 2 {
					return fail(i, "'=' padding where no padding can be")
				}
			}
			pads++
			if data%4+pads > 4 {
				return fail(i, "too much '=' padding")
			}
		case inAlphabet(c, a):
			if pads > 0 {
				return fail(i, "data after '=' padding")
			}
			data++
			lastData = i
		case a == Standard && (c == '-' || c == '_'):
			return fail(i, "character of the url alphabet ('-' or '_') in standard base64")
		case a == URL && (c == '+' || c == '/'):
			return fail(i, "character of the standard alphabet ('+' or '/') in url-alphabet base64")
		case c == ' ' || c == '\t':
			return fail(i, "white space is not allowed")
		default:
			return fail(i, "character not in the base64 alphabet")
		}
	}
	switch rem := data % 4; {
	case rem == 1:
		return fail(lastData, "a final group of one character cannot hold a byte")
	case padding && rem != 0 && pads == 0:
		return fail(len(text), "missing '=' padding at the end")
	case padding && pads > 0 && rem+pads != 4:
		return fail(firstPad, "incomplete '=' padding")
	}
	return nil
}

// firstInvalid returns the offset of the first byte of b that is not part
// of valid UTF-8.
func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

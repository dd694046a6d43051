// Package binenc encodes the UTF-8 bytes of text as hex, base32 (RFC 4648
// §6, and §7's "extended hex" alphabet) or base58 (the Bitcoin alphabet),
// and decodes them back to text.
//
// Decoders find the first fault themselves and return it as a
// *textpos.Error at that byte, so a caller learns where and why without the
// text being quoted. Decoded bytes must be UTF-8 text; when they are not,
// the decoder returns a *NotUTF8Error.
package binenc

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// NotUTF8Error is returned when decoded bytes are not UTF-8 text. Offset is
// the position of the first invalid byte in the decoded bytes.
type NotUTF8Error struct {
	Offset int
}

func (e *NotUTF8Error) Error() string {
	return "decoded bytes are not UTF-8 text: first invalid byte at offset " + strconv.Itoa(e.Offset) +
		" of the decoded data (this tool returns text only)"
}

// ErrOption is returned for an alphabet or letter case the package does not
// know.
var ErrOption = errors.New("binenc: unknown option")

// asText returns b as a string, or a *NotUTF8Error.
func asText(b []byte) (string, error) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return "", &NotUTF8Error{Offset: i}
		}
		i += n
	}
	return "", &NotUTF8Error{}
}

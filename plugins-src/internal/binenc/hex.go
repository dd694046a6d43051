package binenc

import (
	"encoding/hex"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// HexEncode returns the hex digits of text's UTF-8 bytes, lower-case, or
// upper-case when upper is set.
func HexEncode(text string, upper bool) string {
	s := hex.EncodeToString([]byte(text))
	if upper {
		s = strings.ToUpper(s)
	}
	return s
}

const hexSubject = "text is not valid hex"

// HexDecode returns the text whose UTF-8 bytes text holds as hex digits of
// either case. ASCII white space (space, tab, CR, LF) between the digits is
// ignored, so "48 65 6c" and dumps wrapped at a line length decode as they
// are; anything else that is not a digit is an error, and so is an odd
// number of digits.
func HexDecode(text string) (string, error) {
	out := make([]byte, 0, len(text)/2)
	var hi byte
	half := false
	last := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		var v byte
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return "", textpos.New(text, i, hexSubject, "character is not a hex digit")
		}
		last = i
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		return "", textpos.New(text, last, hexSubject, "odd number of hex digits: the last byte is incomplete")
	}
	return asText(out)
}

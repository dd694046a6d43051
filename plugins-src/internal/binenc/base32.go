package binenc

import (
	"encoding/base32"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Base32Alphabet is an RFC 4648 base32 alphabet; its values are the
// service's.
type Base32Alphabet string

// The alphabets.
const (
	Base32Standard Base32Alphabet = "standard" // A–Z 2–7, RFC 4648 §6
	Base32Hex      Base32Alphabet = "hex"      // 0–9 A–V, §7 (sorts like the data)
)

func base32Encoding(a Base32Alphabet, padding bool) (*base32.Encoding, error) {
	var enc *base32.Encoding
	switch a {
	case Base32Standard:
		enc = base32.StdEncoding
	case Base32Hex:
		enc = base32.HexEncoding
	default:
		return nil, ErrOption
	}
	if !padding {
		enc = enc.WithPadding(base32.NoPadding)
	}
	return enc, nil
}

// Base32Encode returns the base32 encoding of text's UTF-8 bytes.
func Base32Encode(text string, a Base32Alphabet, padding bool) (string, error) {
	enc, err := base32Encoding(a, padding)
	if err != nil {
		return "", err
	}
	return enc.EncodeToString([]byte(text)), nil
}

// Base32Decode returns the text whose UTF-8 bytes text encodes. Letters of
// either case are accepted (RFC 4648 §6 allows a decoder to); CR and LF are
// ignored; padding must be there (padding true) or absent (false).
func Base32Decode(text string, a Base32Alphabet, padding bool) (string, error) {
	enc, err := base32Encoding(a, padding)
	if err != nil {
		return "", err
	}
	clean, err := base32Check(text, a, padding)
	if err != nil {
		return "", err
	}
	b, err := enc.DecodeString(clean)
	if err != nil {
		// base32Check accepts only what the decoder accepts; a backstop.
		return "", textpos.New(text, 0, base32Subject(a), "invalid base32")
	}
	return asText(b)
}

func base32Subject(a Base32Alphabet) string {
	if a == Base32Hex {
		return "text is not valid base32hex"
	}
	return "text is not valid base32"
}

// base32Value maps c to its upper-case form when it is a data character
// of alphabet a.
func base32Value(c byte, a Base32Alphabet) (byte, bool) {
	if 'a' <= c && c <= 'z' {
		c -= 'a' - 'A'
	}
	if a == Base32Hex {
		return c, '0' <= c && c <= '9' || 'A' <= c && c <= 'V'
	}
	return c, 'A' <= c && c <= 'Z' || '2' <= c && c <= '7'
}

// base32Check finds the first fault in text and returns the text without
// line breaks, in upper case, for the decoder.
func base32Check(text string, a Base32Alphabet, padding bool) (string, error) {
	fail := func(offset int, reason string) (string, error) {
		return "", textpos.New(text, offset, base32Subject(a), reason)
	}
	out := make([]byte, 0, len(text))
	data, pads, lastData := 0, 0, -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch v, ok := base32Value(c, a); {
		case c == '\r' || c == '\n':
			continue
		case c == '=':
			if !padding {
				return fail(i, "'=' padding found, but padding is off")
			}
			if pads == 0 && (data%8 == 0 || !fullBytes(data%8)) {
				return fail(i, "'=' padding where no padding can be")
			}
			pads++
			if data%8+pads > 8 {
				return fail(i, "too much '=' padding")
			}
			out = append(out, c)
		case ok:
			if pads > 0 {
				return fail(i, "data after '=' padding")
			}
			data++
			lastData = i
			out = append(out, v)
		case c == ' ' || c == '\t':
			return fail(i, "white space is not allowed")
		default:
			return fail(i, "character not in the base32 alphabet")
		}
	}
	if !fullBytes(data % 8) {
		return fail(lastData, "a final group of "+string(rune('0'+data%8))+" characters cannot hold whole bytes")
	}
	if padding && data%8 != 0 && data%8+pads != 8 {
		if pads == 0 {
			return fail(len(text), "missing '=' padding at the end")
		}
		return fail(len(text), "incomplete '=' padding")
	}
	return string(out), nil
}

// fullBytes reports whether a final group of n base32 characters holds
// whole bytes: 0, 2, 4, 5 or 7 characters (0 to 4 bytes).
func fullBytes(n int) bool {
	return n == 0 || n == 2 || n == 4 || n == 5 || n == 7
}

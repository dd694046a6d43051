// Package slugify makes URL slugs the way github.com/gosimple/slug does
// (its default language, English): "Héllo Wörld!" becomes "hello-world".
// Text is trimmed, "&" and "@" become "and" and "at", quotes vanish, dashes
// become "-", every character is transliterated to ASCII with
// github.com/gosimple/unidecode's table (characters beyond U+FFFF, emoji
// among them, vanish), the result is lower-cased, every run of characters
// outside [a-z0-9_-] becomes one "-", and "-" and "_" are trimmed from both
// ends.
//
// The libraries are not called at run time: unidecode decompresses its table
// into about 1.5 MB of slices on first use, which costs a fresh WASM instance
// about 5 billion instructions of fuel (a quarter of an item's budget, 0.3 s)
// for any non-ASCII text, and slug's regular expressions over a large text
// take the rest. Slugify applies the same rules in one pass, with the same
// table compiled in as static data (unidecode.bin, generated from the
// library by TestTable, no init-time work). TestMatchesLibrary holds the two
// to the same output.
package slugify

import (
	"errors"
	"strings"

	_ "embed"
)

// MaxSeparatorBytes bounds the separator.
const MaxSeparatorBytes = 8

// ErrSeparator is returned when the separator is empty, longer than
// MaxSeparatorBytes, or not made of the characters a slug may hold
// (ASCII letters, digits, "-", "_", ".", "~").
var ErrSeparator = errors.New("slugify: separator must be 1 to 8 of the characters a-z A-Z 0-9 - _ . ~")

// Make returns the slug of text with words joined by separator ("-" by
// default in the service).
func Make(text, separator string) (string, error) {
	if !validSeparator(separator) {
		return "", ErrSeparator
	}
	s := slugText(text)
	if separator != "-" {
		s = strings.ReplaceAll(s, "-", separator)
	}
	return s, nil
}

func validSeparator(sep string) bool {
	if sep == "" || len(sep) > MaxSeparatorBytes {
		return false
	}
	for i := 0; i < len(sep); i++ {
		c := sep[i]
		if unreserved := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~'; !unreserved {
			return false
		}
	}
	return true
}

// substitute is the library's rune substitution for English (its default
// language) merged with its default one, as the library applies it before
// transliteration.
func substitute(r rune) (string, bool) {
	switch r {
	case '&':
		return "and", true
	case '@':
		return "at", true
	case '"', '\'', '’':
		return "", true
	case '‒', '–', '—', '―':
		return "-", true
	}
	return "", false
}

// table is unidecode's transliteration of every code point up to U+FFFF:
// an index of 65,536 entries of 3 bytes, big-endian, each the offset of the
// transliteration in the pool that follows (high 20 bits) and its length
// (low 4 bits), then the pool of distinct transliterations.
//
//go:embed unidecode.bin
var table string

const indexBytes = 0x10000 * 3

// transliterate returns unidecode's ASCII transliteration of r.
func transliterate(r rune) string {
	if r > 0xFFFF {
		return "" // unidecode drops what it has no table for
	}
	i := int(r) * 3
	v := int(table[i])<<16 | int(table[i+1])<<8 | int(table[i+2])
	off := indexBytes + v>>4
	return table[off : off+v&0xF]
}

// slugText is slug.Make(text).
func slugText(text string) string {
	text = strings.TrimSpace(text)
	b := make([]byte, 0, len(text))
	for _, r := range text {
		if s, ok := substitute(r); ok {
			b = append(b, s...)
		} else if r < 0x80 {
			b = append(b, byte(r))
		} else {
			b = append(b, transliterate(r)...)
		}
	}
	// Lower-case, then every byte outside [a-z0-9_-] becomes "-", runs of
	// "-" become one, and "-" and "_" are trimmed from both ends.
	out := b[:0]
	for _, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
		default:
			c = '-'
		}
		if c == '-' && len(out) > 0 && out[len(out)-1] == '-' {
			continue
		}
		out = append(out, c)
	}
	return strings.Trim(string(out), "-_")
}

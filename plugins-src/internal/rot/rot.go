// Package rot holds the letter-rotation ciphers: ROT13 and Caesar shifts
// of the 26 ASCII letters, and ROT47 of the 94 printable ASCII characters.
// Every other character passes through. None of them is encryption.
package rot

import (
	"errors"
	"strings"
)

// ErrShift is returned for a Caesar shift outside -25..25.
var ErrShift = errors.New("rot: shift must be between -25 and 25")

// Caesar shifts every ASCII letter by shift places in its alphabet,
// keeping its case: Caesar("abc", 3) = "def", and a negative shift undoes
// a positive one.
func Caesar(text string, shift int) (string, error) {
	if shift < -25 || shift > 25 {
		return "", ErrShift
	}
	k := rune((shift + 26) % 26)
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+k)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+k)%26
		}
		return r
	}, text), nil
}

// Rot13 is Caesar with shift 13, its own inverse.
func Rot13(text string) string {
	s, _ := Caesar(text, 13)
	return s
}

// Rot47 rotates the printable ASCII characters '!' to '~' by 47 places,
// its own inverse.
func Rot47(text string) string {
	return strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' {
			return '!' + (r-'!'+47)%94
		}
		return r
	}, text)
}

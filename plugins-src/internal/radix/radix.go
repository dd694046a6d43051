// Package radix converts integers between bases 2 to 36, of any size up to
// MaxDigits digits, with math/big. Digits above 9 are the letters a–z, of
// either case on input.
package radix

import (
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxDigits bounds the digits of a value: 4,096 binary digits is a
// 4,096-bit number, and a conversion of that size takes microseconds.
const MaxDigits = 4096

var (
	// ErrBase is returned for a base outside 2–36.
	ErrBase = errors.New("radix: base outside 2-36")
	// ErrTooLong is returned for a value over MaxDigits digits.
	ErrTooLong = errors.New("radix: value over the digit bound")
)

// Convert returns value, written in base from, written in base to. value
// is an optional sign ('-' or '+') and at least one digit; nothing else is
// allowed (no prefix such as 0x, no separators, no white space). The result
// has no leading zeros, a '-' when negative, and lower-case letters unless
// upper is set.
func Convert(value string, from, to int, upper bool) (string, error) {
	if from < 2 || from > 36 || to < 2 || to > 36 {
		return "", ErrBase
	}
	subject := "value is not a base-" + strconv.Itoa(from) + " integer"
	digits := value
	neg := false
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if len(digits) > MaxDigits {
		return "", ErrTooLong
	}
	if digits == "" {
		return "", textpos.New(value, len(value), subject, "no digits")
	}
	start := len(value) - len(digits)
	for i := 0; i < len(digits); i++ {
		if d := digit(digits[i]); d < 0 || d >= from {
			reason := "digit not valid in base " + strconv.Itoa(from)
			if d < 0 {
				reason = "not a digit (0-9, a-z)"
			}
			return "", textpos.New(value, start+i, subject, reason)
		}
	}
	n, ok := new(big.Int).SetString(digits, from)
	if !ok {
		return "", textpos.New(value, start, subject, "not a number")
	}
	if neg {
		n.Neg(n)
	}
	out := n.Text(to)
	if upper {
		out = strings.ToUpper(out)
	}
	return out, nil
}

// digit returns the value of digit c, or -1.
func digit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	}
	return -1
}

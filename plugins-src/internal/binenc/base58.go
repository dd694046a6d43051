package binenc

import (
	"errors"
	"math/big"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Base58 uses the Bitcoin alphabet: the digits and letters without 0, O, I
// and l. No maintained Go library does only this (the common one is a
// package inside btcsuite's btcutil module), and base58 is a radix
// conversion: math/big does the arithmetic, in sub-quadratic time, and this
// file maps its digits to the alphabet.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// bigDigits are math/big's digits for base 58, in value order.
const bigDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"

// MaxBase58Bytes bounds the bytes Base58Encode encodes and Base58Decode
// reads: the conversion is a big-number radix change, super-linear in the
// length.
const MaxBase58Bytes = 16 << 10

// ErrTooLong is returned for input over MaxBase58Bytes.
var ErrTooLong = errors.New("binenc: input over the base58 length bound")

// Base58Encode returns the base58 encoding of text's UTF-8 bytes: each
// leading zero byte is a '1', the rest is the big-endian number in base 58.
func Base58Encode(text string) (string, error) {
	if len(text) > MaxBase58Bytes {
		return "", ErrTooLong
	}
	zeros := 0
	for zeros < len(text) && text[zeros] == 0 {
		zeros++
	}
	var sb strings.Builder
	for range zeros {
		sb.WriteByte('1')
	}
	if zeros == len(text) {
		return sb.String(), nil
	}
	digits := new(big.Int).SetBytes([]byte(text[zeros:])).Text(58)
	for i := 0; i < len(digits); i++ {
		sb.WriteByte(base58Alphabet[strings.IndexByte(bigDigits, digits[i])])
	}
	return sb.String(), nil
}

// Base58Decode returns the text whose UTF-8 bytes text encodes. Nothing
// but the alphabet is accepted: not white space, not 0, O, I or l.
func Base58Decode(text string) (string, error) {
	if len(text) > MaxBase58Bytes {
		return "", ErrTooLong
	}
	zeros := 0
	for zeros < len(text) && text[zeros] == '1' {
		zeros++
	}
	digits := make([]byte, 0, len(text)-zeros)
	for i := zeros; i < len(text); i++ {
		v := strings.IndexByte(base58Alphabet, text[i])
		if v < 0 {
			reason := "character not in the base58 alphabet"
			switch text[i] {
			case '0', 'O', 'I', 'l':
				reason = "0, O, I and l are not in the base58 alphabet"
			case ' ', '\t', '\r', '\n':
				reason = "white space is not allowed"
			}
			return "", textpos.New(text, i, "text is not valid base58", reason)
		}
		digits = append(digits, bigDigits[v])
	}
	out := make([]byte, zeros)
	if len(digits) > 0 {
		n, ok := new(big.Int).SetString(string(digits), 58)
		if !ok {
			return "", textpos.New(text, zeros, "text is not valid base58", "invalid base58")
		}
		out = append(out, n.Bytes()...)
	}
	return asText(out)
}

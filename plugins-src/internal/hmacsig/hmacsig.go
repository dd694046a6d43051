// Package hmacsig signs text with HMAC (RFC 2104) over SHA-1, SHA-256 or
// SHA-512 and verifies a given MAC in constant time. The key is the UTF-8
// bytes of a text or the bytes a hex string holds; the MAC is written as
// lower-case hex or standard base64 with padding.
package hmacsig

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Algorithm is the hash under the HMAC; its values are the service's.
type Algorithm string

// The algorithms. HMAC-SHA-1 is still sound as a MAC (RFC 6151 discusses
// HMAC-MD5; SHA-1's collisions do not break HMAC), but new protocols use
// SHA-256 or SHA-512.
const (
	SHA1   Algorithm = "sha1"
	SHA256 Algorithm = "sha256"
	SHA512 Algorithm = "sha512"
)

// Encoding is how a MAC is written, or how a key is given.
type Encoding string

// The encodings.
const (
	Text   Encoding = "text"   // a key's UTF-8 bytes
	Hex    Encoding = "hex"    // hexadecimal, either case on input
	Base64 Encoding = "base64" // standard alphabet, padded
)

var (
	// ErrOption is returned for an algorithm or encoding the package does
	// not know.
	ErrOption = errors.New("hmacsig: unknown algorithm or encoding")
	// ErrMACLength is returned by Verify for a MAC that decodes to a length
	// the algorithm never produces.
	ErrMACLength = errors.New("hmacsig: the mac has the wrong length for the algorithm")
)

func newHash(a Algorithm) (func() hash.Hash, error) {
	switch a {
	case SHA1:
		return sha1.New, nil
	case SHA256:
		return sha256.New, nil
	case SHA512:
		return sha512.New, nil
	}
	return nil, ErrOption
}

// Key returns the key bytes that key holds in encoding text or hex.
func Key(key string, e Encoding) ([]byte, error) {
	switch e {
	case Text:
		return []byte(key), nil
	case Hex:
		return decodeHex(key, "key is not valid hex")
	}
	return nil, ErrOption
}

func decodeHex(s, subject string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return nil, textpos.New(s, i, subject, "character is not a hex digit")
		}
	}
	if len(s)%2 != 0 {
		return nil, textpos.New(s, len(s)-1, subject, "odd number of hex digits")
	}
	return hex.DecodeString(s)
}

func sum(message string, key []byte, a Algorithm) ([]byte, error) {
	newH, err := newHash(a)
	if err != nil {
		return nil, err
	}
	m := hmac.New(newH, key)
	m.Write([]byte(message))
	return m.Sum(nil), nil
}

// Sign returns the HMAC of message's UTF-8 bytes under key, in encoding e
// (hex or base64).
func Sign(message string, key []byte, a Algorithm, e Encoding) (string, error) {
	mac, err := sum(message, key, a)
	if err != nil {
		return "", err
	}
	switch e {
	case Hex:
		return hex.EncodeToString(mac), nil
	case Base64:
		return base64.StdEncoding.EncodeToString(mac), nil
	}
	return "", ErrOption
}

// Verify reports whether mac, written in encoding e, is the HMAC of
// message under key. The comparison takes the same time wherever the MACs
// differ (hmac.Equal). A mac that is not valid hex or base64 is a
// *textpos.Error; one of the wrong length is ErrMACLength.
func Verify(message string, key []byte, a Algorithm, mac string, e Encoding) (bool, error) {
	want, err := sum(message, key, a)
	if err != nil {
		return false, err
	}
	var got []byte
	switch e {
	case Hex:
		got, err = decodeHex(mac, "mac is not valid hex")
	case Base64:
		got, err = base64.StdEncoding.Strict().DecodeString(mac)
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			err = textpos.New(mac, int(ce), "mac is not valid standard base64", "invalid base64 at or before this byte")
		}
	default:
		return false, ErrOption
	}
	if err != nil {
		return false, err
	}
	if len(got) != len(want) {
		return false, ErrMACLength
	}
	return hmac.Equal(got, want), nil
}

// Package digest hashes text: MD5, SHA-1, SHA-256 or SHA-512 of the text's
// UTF-8 bytes, optionally as an HMAC keyed with the UTF-8 bytes of a key,
// encoded as lower-case hex or standard base64 with padding.
package digest

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
)

// Algorithm is a hash function; its values are the service's.
type Algorithm string

// The algorithms. MD5 and SHA-1 are broken for collision resistance: use
// them to match existing checksums, not to protect anything.
const (
	MD5    Algorithm = "md5"
	SHA1   Algorithm = "sha1"
	SHA256 Algorithm = "sha256"
	SHA512 Algorithm = "sha512"
)

// Encoding is how the digest is written.
type Encoding string

// The encodings.
const (
	Hex    Encoding = "hex"    // lower-case hexadecimal
	Base64 Encoding = "base64" // standard alphabet, with padding
)

var (
	// ErrAlgorithm is returned for an algorithm Sum does not know.
	ErrAlgorithm = errors.New("digest: unknown algorithm")
	// ErrEncoding is returned for an encoding Sum does not know.
	ErrEncoding = errors.New("digest: unknown encoding")
)

// Options select the digest.
type Options struct {
	Algorithm Algorithm
	Encoding  Encoding
	// HMAC makes the digest an HMAC keyed with Key. An empty Key is a valid
	// (if pointless) HMAC key, distinct from no HMAC at all.
	HMAC bool
	Key  string
}

func newHash(a Algorithm) (func() hash.Hash, error) {
	switch a {
	case MD5:
		return md5.New, nil
	case SHA1:
		return sha1.New, nil
	case SHA256:
		return sha256.New, nil
	case SHA512:
		return sha512.New, nil
	}
	return nil, ErrAlgorithm
}

// Sum returns the digest of text.
func Sum(text string, o Options) (string, error) {
	newH, err := newHash(o.Algorithm)
	if err != nil {
		return "", err
	}
	if o.Encoding != Hex && o.Encoding != Base64 {
		return "", ErrEncoding
	}
	var h hash.Hash
	if o.HMAC {
		h = hmac.New(newH, []byte(o.Key))
	} else {
		h = newH()
	}
	h.Write([]byte(text))
	sum := h.Sum(nil)
	if o.Encoding == Base64 {
		return base64.StdEncoding.EncodeToString(sum), nil
	}
	return hex.EncodeToString(sum), nil
}

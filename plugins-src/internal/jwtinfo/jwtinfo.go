// Package jwtinfo reads JSON Web Tokens in the JWS compact serialization
// (RFC 7519 §3, RFC 7515 §7.1): it decodes the header and the claims set
// without trusting either, and verifies an HS256 signature (HMAC-SHA-256,
// RFC 7518 §3.2) with a given secret. It reads no clock: the time claims
// are converted to dates, never compared with "now".
package jwtinfo

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/plugins-src/internal/jsonfmt"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

const subject = "token is not a JWT"

var (
	// ErrAlgorithm is returned by VerifyHS256 for a token whose header
	// does not name HS256.
	ErrAlgorithm = errors.New("jwtinfo: the token's alg is not HS256")
	// ErrEncoding is returned for a secret encoding the package does not
	// know.
	ErrEncoding = errors.New("jwtinfo: unknown secret encoding")
)

// Token is a decoded JWT. Header and Claims are the JSON texts the token
// carries, byte for byte; nothing in them is verified by Decode.
type Token struct {
	Header, Claims string
	Algorithm      string // the header's alg
	Type           string // the header's typ, if a string
	// IssuedAt, ExpiresAt and NotBefore are the iat, exp and nbf claims in
	// RFC 3339 at Z, when they are NumericDates (RFC 7519 §2) in the years
	// 0000–9999; empty otherwise.
	IssuedAt, ExpiresAt, NotBefore string

	signingInput string
	signature    []byte
}

// Decode splits and decodes token. A token of five parts is an encrypted
// JWT (JWE), which cannot be read without its key; one of other than three
// parts, a part that is not unpadded base64url, a header that is not a JSON
// object with an alg, or a claims set that is not a JSON object is a
// *textpos.Error located in the token.
func Decode(token string) (Token, error) {
	parts := strings.Split(token, ".")
	switch len(parts) {
	case 3:
	case 5:
		return Token{}, textpos.New(token, 0, subject, "an encrypted JWT (JWE, five parts) cannot be read without its key")
	default:
		return Token{}, textpos.New(token, 0, subject, "a signed JWT has three parts separated by '.', this has "+strconv.Itoa(len(parts)))
	}
	starts := []int{0, len(parts[0]) + 1, len(parts[0]) + len(parts[1]) + 2}
	decoded := make([][]byte, 3)
	for i, name := range []string{"header", "claims", "signature"} {
		b, err := base64.RawURLEncoding.Strict().DecodeString(parts[i])
		if err != nil || strings.ContainsAny(parts[i], "\r\n") {
			off := starts[i]
			var ce base64.CorruptInputError
			if errors.As(err, &ce) {
				off += int(ce)
			}
			return Token{}, textpos.New(token, off, subject, "the "+name+" part is not unpadded base64url")
		}
		decoded[i] = b
	}
	header, ok := object(decoded[0])
	if !ok {
		return Token{}, textpos.New(token, 0, subject, "the header is not a JSON object")
	}
	alg, ok := stringValue(header["alg"])
	if !ok {
		return Token{}, textpos.New(token, 0, subject, "the header has no alg string")
	}
	claims, ok := object(decoded[1])
	if !ok {
		return Token{}, textpos.New(token, starts[1], subject, "the claims set is not a JSON object")
	}
	t := Token{
		Header: string(decoded[0]), Claims: string(decoded[1]), Algorithm: alg,
		IssuedAt: numericDate(claims["iat"]), ExpiresAt: numericDate(claims["exp"]), NotBefore: numericDate(claims["nbf"]),
		signingInput: token[:starts[2]-1], signature: decoded[2],
	}
	t.Type, _ = stringValue(header["typ"])
	return t, nil
}

// object returns the top-level members of b, which must be UTF-8 holding
// one strict JSON object.
func object(b []byte) (map[string]string, bool) {
	if jsonfmt.Validate(string(b)) != nil {
		return nil, false
	}
	return members(string(b))
}

// numericDate writes a NumericDate claim (seconds since the epoch, maybe
// with a fraction), given as its raw JSON text, in RFC 3339 at Z, or ""
// when it is not one.
func numericDate(n string) string {
	if n == "" || n[0] != '-' && (n[0] < '0' || n[0] > '9') {
		return ""
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f < -62167219200 || f > 253402300799 {
		return ""
	}
	sec := math.Floor(f)
	nsec := math.Round((f - sec) * 1e9)
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		sec, nsec = float64(i), 0
	}
	return time.Unix(int64(sec), int64(nsec)).UTC().Format(time.RFC3339Nano)
}

// Secret returns the key bytes secret holds in encoding text (its UTF-8
// bytes), hex or base64url (unpadded, as a JWK's k is written, RFC 7517
// §6.4.1).
func Secret(secret, encoding string) ([]byte, error) {
	switch encoding {
	case "text":
		return []byte(secret), nil
	case "hex":
		b, err := hex.DecodeString(secret)
		if err != nil {
			var ie hex.InvalidByteError
			off := len(secret) - 1
			if errors.As(err, &ie) {
				off = strings.IndexByte(secret, byte(ie))
			}
			return nil, textpos.New(secret, off, "secret is not valid hex", "not a hex digit, or an odd number of digits")
		}
		return b, nil
	case "base64url":
		b, err := base64.RawURLEncoding.Strict().DecodeString(secret)
		if err != nil {
			var ce base64.CorruptInputError
			errors.As(err, &ce)
			return nil, textpos.New(secret, int(ce), "secret is not valid unpadded base64url", "invalid base64url at or before this byte")
		}
		return b, nil
	}
	return nil, ErrEncoding
}

// VerifyHS256 reports whether t's signature is the HMAC-SHA-256 of its
// signing input under secret, compared in constant time. A token whose alg
// is not HS256 (none included) is ErrAlgorithm: it is never "valid".
func VerifyHS256(t Token, secret []byte) (bool, error) {
	if t.Algorithm != "HS256" {
		return false, ErrAlgorithm
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(t.signingInput))
	return hmac.Equal(m.Sum(nil), t.signature), nil
}

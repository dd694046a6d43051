package jwtinfo

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// RFC 7515 Appendix A.1 (also RFC 7519 §3.1's example JWT): an HS256 JWS
// and the JWK whose k is its key.
const (
	rfcToken = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	rfcKey   = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
	// jwt.io's default token: HS256, secret "your-256-bit-secret".
	jwtIO = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

func TestDecode(t *testing.T) {
	tok, err := Decode(rfcToken)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Header != "{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}" || tok.Algorithm != "HS256" || tok.Type != "JWT" {
		t.Errorf("header %q alg %q typ %q", tok.Header, tok.Algorithm, tok.Type)
	}
	if tok.Claims != "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}" {
		t.Errorf("claims %q", tok.Claims)
	}
	if tok.ExpiresAt != "2011-03-22T18:43:00Z" || tok.IssuedAt != "" || tok.NotBefore != "" {
		t.Errorf("times %q %q %q", tok.IssuedAt, tok.ExpiresAt, tok.NotBefore)
	}
	tok, err = Decode(jwtIO)
	if err != nil || tok.IssuedAt != "2018-01-18T01:30:22Z" {
		t.Errorf("jwt.io: %+v %v", tok, err)
	}
}

func TestVerify(t *testing.T) {
	key, err := Secret(rfcKey, "base64url")
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := Decode(rfcToken)
	if ok, err := VerifyHS256(tok, key); !ok || err != nil {
		t.Errorf("RFC 7515 A.1: %v %v", ok, err)
	}
	if ok, err := VerifyHS256(tok, []byte("other")); ok || err != nil {
		t.Errorf("wrong key: %v %v", ok, err)
	}
	tok, _ = Decode(jwtIO)
	if ok, err := VerifyHS256(tok, []byte("your-256-bit-secret")); !ok || err != nil {
		t.Errorf("jwt.io: %v %v", ok, err)
	}
	// RFC 7519 §6.1's unsecured JWT: alg none is never valid.
	none, err := Decode("eyJhbGciOiJub25lIn0.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyHS256(none, nil); !errors.Is(err, ErrAlgorithm) {
		t.Errorf("alg none: %v", err)
	}
	if b, err := Secret("0b0B", "hex"); err != nil || len(b) != 2 {
		t.Errorf("hex secret: %v %v", b, err)
	}
	if _, err := Secret("0b0g", "hex"); err == nil || err.Error() != "secret is not valid hex: not a hex digit, or an odd number of digits at line 1, column 4 (byte 3)" {
		t.Errorf("bad hex secret: %v", err)
	}
	if _, err := Secret("x", "jwk"); !errors.Is(err, ErrEncoding) {
		t.Errorf("jwk: %v", err)
	}
}

func TestMembers(t *testing.T) {
	m, ok := members(` { "a\u0062c" : [1, {"x": "]}"}] , "e":"\ud83d\ude00\/\n" ,"n":-1.5e3,"e":true, "l":"\ud800"}`)
	if !ok || len(m) != 4 || m["abc"] != `[1, {"x": "]}"}]` || m["e"] != "true" || m["n"] != "-1.5e3" || m["l"] != `"\ud800"` {
		t.Fatalf("members = %q, %v", m, ok)
	}
	if s, ok := stringValue(`"\ud83d\ude00\/\n\"x\\"`); !ok || s != "😀/\n\"x\\" {
		t.Errorf("unquote = %q", s)
	}
	if s, _ := stringValue(`"\ud800x"`); s != "\uFFFDx" {
		t.Errorf("lone surrogate = %q", s)
	}
	if _, ok := members(`[1]`); ok {
		t.Error("an array is not an object")
	}
	if got := numericDate("1300819380.5"); got != "2011-03-22T18:43:00.5Z" {
		t.Errorf("fractional NumericDate = %q", got)
	}
	if got := numericDate(`"1300819380"`); got != "" {
		t.Errorf("string NumericDate = %q", got)
	}
}

func TestFaults(t *testing.T) {
	for token, want := range map[string]string{
		"abc":                          "token is not a JWT: a signed JWT has three parts separated by '.', this has 1 at line 1, column 1 (byte 0)",
		"a.b.c.d.e":                    "token is not a JWT: an encrypted JWT (JWE, five parts) cannot be read without its key at line 1, column 1 (byte 0)",
		"e30=.e30.":                    "token is not a JWT: the header part is not unpadded base64url at line 1, column 4 (byte 3)",
		"e30.e30.a+b":                  "token is not a JWT: the signature part is not unpadded base64url at line 1, column 10 (byte 9)",
		"e30.e30.":                     "token is not a JWT: the header has no alg string at line 1, column 1 (byte 0)",
		"WzFd.e30.":                    "token is not a JWT: the header is not a JSON object at line 1, column 1 (byte 0)",
		"eyJhbGciOiJIUzI1NiJ9.WzFd.":   "token is not a JWT: the claims set is not a JSON object at line 1, column 22 (byte 21)",
		"eyJhbGciOiJIUzI1NiJ9.e30gMQ.": "token is not a JWT: the claims set is not a JSON object at line 1, column 22 (byte 21)",
	} {
		_, err := Decode(token)
		var pe *textpos.Error
		if !errors.As(err, &pe) || err.Error() != want {
			t.Errorf("%q: %v, want %q", token, err, want)
		}
	}
}

// FuzzDecode: no token makes Decode panic, and a decoded token's members
// walk agrees with the validator on what an object is.
func FuzzDecode(f *testing.F) {
	f.Add(rfcToken)
	f.Add(jwtIO)
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30gMQ.")
	f.Fuzz(func(t *testing.T, token string) {
		if tok, err := Decode(token); err == nil {
			VerifyHS256(tok, []byte("k"))
		}
		// The walk over arbitrary validated JSON, not only tokens.
		object([]byte(token))
	})
}

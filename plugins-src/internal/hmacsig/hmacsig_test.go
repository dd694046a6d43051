package hmacsig

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// RFC 4231 §4.2–4.3 (SHA-256, SHA-512) and RFC 2202 §3 (SHA-1), test
// cases 1 and 2, and RFC 4231 test case 6 (a key longer than the block).
var vectors = []struct {
	key, keyEnc, msg string
	alg              Algorithm
	want             string
}{
	{strings.Repeat("0b", 20), "hex", "Hi There", SHA256, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
	{strings.Repeat("0b", 20), "hex", "Hi There", SHA512, "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
	{strings.Repeat("0b", 20), "hex", "Hi There", SHA1, "b617318655057264e28bc0b6fb378c8ef146be00"},
	{"Jefe", "text", "what do ya want for nothing?", SHA256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
	{"Jefe", "text", "what do ya want for nothing?", SHA512, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
	{"Jefe", "text", "what do ya want for nothing?", SHA1, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
	{strings.Repeat("AA", 131), "hex", "Test Using Larger Than Block-Size Key - Hash Key First", SHA256, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		key, err := Key(v.key, Encoding(v.keyEnc))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Sign(v.msg, key, v.alg, Hex)
		if err != nil || got != v.want {
			t.Errorf("%s %q = %s, %v, want %s", v.alg, v.msg, got, err, v.want)
		}
		for _, mac := range []string{v.want, strings.ToUpper(v.want)} {
			if ok, err := Verify(v.msg, key, v.alg, mac, Hex); !ok || err != nil {
				t.Errorf("verify %s: %v %v", v.alg, ok, err)
			}
		}
		b64, _ := Sign(v.msg, key, v.alg, Base64)
		if ok, err := Verify(v.msg, key, v.alg, b64, Base64); !ok || err != nil {
			t.Errorf("verify base64 %s: %v %v", v.alg, ok, err)
		}
		if ok, err := Verify(v.msg+".", key, v.alg, v.want, Hex); ok || err != nil {
			t.Errorf("verify of another message: %v %v", ok, err)
		}
	}
}

func TestFaults(t *testing.T) {
	var pe *textpos.Error
	if _, err := Key("0b0g", Hex); !errors.As(err, &pe) || err.Error() != "key is not valid hex: character is not a hex digit at line 1, column 4 (byte 3)" {
		t.Errorf("bad hex key: %v", err)
	}
	if _, err := Key("0b0", Hex); !errors.As(err, &pe) {
		t.Errorf("odd hex key: %v", err)
	}
	if _, err := Verify("m", nil, SHA256, "abcd", Hex); !errors.Is(err, ErrMACLength) {
		t.Errorf("short mac: %v", err)
	}
	if _, err := Verify("m", nil, SHA256, "a b", Base64); !errors.As(err, &pe) {
		t.Errorf("bad base64 mac: %v", err)
	}
	if _, err := Sign("m", nil, "md5", Hex); !errors.Is(err, ErrOption) {
		t.Errorf("md5: %v", err)
	}
	if _, err := Sign("m", nil, SHA1, "base32"); !errors.Is(err, ErrOption) {
		t.Errorf("base32: %v", err)
	}
}

package binenc

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// RFC 4648 §10's test vectors.
var rfc4648 = []struct{ text, hex, b32, b32hex string }{
	{"", "", "", ""},
	{"f", "66", "MY======", "CO======"},
	{"fo", "666f", "MZXQ====", "CPNG===="},
	{"foo", "666f6f", "MZXW6===", "CPNMU==="},
	{"foob", "666f6f62", "MZXW6YQ=", "CPNMUOG="},
	{"fooba", "666f6f6261", "MZXW6YTB", "CPNMUOJ1"},
	{"foobar", "666f6f626172", "MZXW6YTBOI======", "CPNMUOJ1E8======"},
}

func TestRFC4648(t *testing.T) {
	for _, v := range rfc4648 {
		if got := HexEncode(v.text, false); got != v.hex {
			t.Errorf("hex %q = %q, want %q", v.text, got, v.hex)
		}
		if got := HexEncode(v.text, true); got != strings.ToUpper(v.hex) {
			t.Errorf("HEX %q = %q", v.text, got)
		}
		if got, err := HexDecode(strings.ToUpper(v.hex)); err != nil || got != v.text {
			t.Errorf("hex decode %q = %q, %v", v.hex, got, err)
		}
		for _, c := range []struct {
			a    Base32Alphabet
			want string
		}{{Base32Standard, v.b32}, {Base32Hex, v.b32hex}} {
			if got, _ := Base32Encode(v.text, c.a, true); got != c.want {
				t.Errorf("base32 %s %q = %q, want %q", c.a, v.text, got, c.want)
			}
			unpadded := strings.TrimRight(c.want, "=")
			if got, _ := Base32Encode(v.text, c.a, false); got != unpadded {
				t.Errorf("base32 %s unpadded %q = %q", c.a, v.text, got)
			}
			if got, err := Base32Decode(c.want, c.a, true); err != nil || got != v.text {
				t.Errorf("base32 %s decode %q = %q, %v", c.a, c.want, got, err)
			}
			if got, err := Base32Decode(strings.ToLower(unpadded), c.a, false); err != nil || got != v.text {
				t.Errorf("base32 %s decode lower %q = %q, %v", c.a, unpadded, got, err)
			}
		}
	}
}

// Bitcoin Core's src/test/data/base58_encode_decode.json, the vectors
// whose bytes are UTF-8 text.
var bitcoin = []struct{ hex, b58 string }{
	{"", ""},
	{"61", "2g"},
	{"626262", "a3gV"},
	{"636363", "aPEr"},
	{"73696d706c792061206c6f6e6720737472696e67", "2cFupjhnEsSn59qHXstmK2ffpLv2"},
	{"00000000000000000000", "1111111111"},
}

func TestBase58(t *testing.T) {
	for _, v := range bitcoin {
		text, err := HexDecode(v.hex)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Base58Encode(text); err != nil || got != v.b58 {
			t.Errorf("encode %s = %q, %v, want %q", v.hex, got, err, v.b58)
		}
		if got, err := Base58Decode(v.b58); err != nil || got != text {
			t.Errorf("decode %q = %q, %v", v.b58, got, err)
		}
	}
	long := strings.Repeat("é", MaxBase58Bytes/2)
	enc, err := Base58Encode(long)
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := Base58Decode(enc); err == nil || !errors.Is(err, ErrTooLong) {
		// the encoding of 16 KiB is longer than 16 KiB
		t.Errorf("decode of %d characters: %v, %d", len(enc), err, len(dec))
	}
	if _, err := Base58Encode(long + "x"); !errors.Is(err, ErrTooLong) {
		t.Errorf("encode over the bound: %v", err)
	}
	// 0xeb is not UTF-8 (Bitcoin Core's vector 00eb15…).
	var ne *NotUTF8Error
	if _, err := Base58Decode("1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"); !errors.As(err, &ne) || ne.Offset != 1 {
		t.Errorf("binary decode: %v", err)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"hex bad digit", func() (string, error) { return HexDecode("48 6g") }, "text is not valid hex: character is not a hex digit at line 1, column 5 (byte 4)"},
		{"hex odd", func() (string, error) { return HexDecode("48\n656") }, "text is not valid hex: odd number of hex digits: the last byte is incomplete at line 2, column 3 (byte 5)"},
		{"hex 0x", func() (string, error) { return HexDecode("0x48") }, "text is not valid hex: character is not a hex digit at line 1, column 2 (byte 1)"},
		{"b32 missing padding", func() (string, error) { return Base32Decode("MZXW6", Base32Standard, true) }, "text is not valid base32: missing '=' padding at the end at line 1, column 6 (byte 5)"},
		{"b32 padding off", func() (string, error) { return Base32Decode("MZXW6===", Base32Standard, false) }, "text is not valid base32: '=' padding found, but padding is off at line 1, column 6 (byte 5)"},
		{"b32 incomplete padding", func() (string, error) { return Base32Decode("MZXW6==", Base32Standard, true) }, "text is not valid base32: incomplete '=' padding at line 1, column 8 (byte 7)"},
		{"b32 too much padding", func() (string, error) { return Base32Decode("MZXW6====", Base32Standard, true) }, "text is not valid base32: too much '=' padding at line 1, column 9 (byte 8)"},
		{"b32 bad group", func() (string, error) { return Base32Decode("MZX=====", Base32Standard, true) }, "text is not valid base32: '=' padding where no padding can be at line 1, column 4 (byte 3)"},
		{"b32 bad group unpadded", func() (string, error) { return Base32Decode("MZX", Base32Standard, false) }, "text is not valid base32: a final group of 3 characters cannot hold whole bytes at line 1, column 3 (byte 2)"},
		{"b32 data after padding", func() (string, error) { return Base32Decode("MY======MY======", Base32Standard, true) }, "text is not valid base32: data after '=' padding at line 1, column 9 (byte 8)"},
		{"b32 not alphabet", func() (string, error) { return Base32Decode("MZ1Q====", Base32Standard, true) }, "text is not valid base32: character not in the base32 alphabet at line 1, column 3 (byte 2)"},
		{"b32hex W", func() (string, error) { return Base32Decode("CW======", Base32Hex, true) }, "text is not valid base32hex: character not in the base32 alphabet at line 1, column 2 (byte 1)"},
		{"b32 space", func() (string, error) { return Base32Decode("MZXW 6===", Base32Standard, true) }, "text is not valid base32: white space is not allowed at line 1, column 5 (byte 4)"},
		{"b58 zero", func() (string, error) { return Base58Decode("2g0") }, "text is not valid base58: 0, O, I and l are not in the base58 alphabet at line 1, column 3 (byte 2)"},
		{"b58 space", func() (string, error) { return Base58Decode("2g a") }, "text is not valid base58: white space is not allowed at line 1, column 3 (byte 2)"},
		{"b58 other", func() (string, error) { return Base58Decode("é") }, "text is not valid base58: character not in the base58 alphabet at line 1, column 1 (byte 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.run()
			var pe *textpos.Error
			if !errors.As(err, &pe) || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	var ne *NotUTF8Error
	if _, err := HexDecode("41ff"); !errors.As(err, &ne) || ne.Offset != 1 {
		t.Errorf("hex of binary: %v", err)
	}
	if _, err := Base32Decode("74======", Base32Standard, true); !errors.As(err, &ne) || ne.Offset != 0 {
		t.Errorf("base32 of binary: %v", err)
	}
	if _, err := Base32Encode("x", "crockford", true); !errors.Is(err, ErrOption) {
		t.Errorf("unknown alphabet: %v", err)
	}
	// Line breaks are ignored in base32.
	if got, err := Base32Decode("MZXW\r\n6YTB\nOI======\n", Base32Standard, true); err != nil || got != "foobar" {
		t.Errorf("wrapped base32: %q %v", got, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("MZXW6YTBOI======")
	f.Add("2cFupjhnEsSn59qHXstmK2ffpLv2")
	f.Add("48 65")
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range []Base32Alphabet{Base32Standard, Base32Hex} {
			for _, p := range []bool{true, false} {
				// Non-zero bits in the last character are accepted (a
				// non-canonical encoding, as base64text accepts), so the
				// property is on the decoded text.
				if got, err := Base32Decode(s, a, p); err == nil {
					enc, _ := Base32Encode(got, a, p)
					if again, err := Base32Decode(enc, a, p); err != nil || again != got {
						t.Errorf("base32 %q round trip %q: %q, %v", s, enc, again, err)
					}
				}
			}
		}
		if got, err := Base58Decode(s); err == nil {
			if enc, _ := Base58Encode(got); enc != s {
				t.Errorf("base58 %q round trip %q", s, enc)
			}
		}
		HexDecode(s)
	})
}

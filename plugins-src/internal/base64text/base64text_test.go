package base64text

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		alphabet Alphabet
		padding  bool
		want     string
	}{
		{name: "rfc 4648 f", text: "f", alphabet: Standard, padding: true, want: "Zg=="},
		{name: "rfc 4648 fo", text: "fo", alphabet: Standard, padding: true, want: "Zm8="},
		{name: "rfc 4648 foobar", text: "foobar", alphabet: Standard, padding: true, want: "Zm9vYmFy"},
		{name: "no padding", text: "f", alphabet: Standard, padding: false, want: "Zg"},
		{name: "empty", text: "", alphabet: Standard, padding: true, want: ""},
		{name: "unicode standard", text: "é😀中?>", alphabet: Standard, padding: true, want: "w6nwn5iA5LitPz4="},
		{name: "unicode url", text: "é😀中?>", alphabet: URL, padding: true, want: "w6nwn5iA5LitPz4="},
		{name: "url differs", text: "\xfb\xff", alphabet: URL, padding: false, want: "-_8"},
		{name: "standard differs", text: "\xfb\xff", alphabet: Standard, padding: true, want: "+/8="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.text, tt.alphabet, tt.padding)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Encode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		alphabet Alphabet
		padding  bool
		want     string
	}{
		{name: "padded", text: "Zm8=", alphabet: Standard, padding: true, want: "fo"},
		{name: "unpadded", text: "Zm8", alphabet: Standard, padding: false, want: "fo"},
		{name: "unicode", text: "w6nwn5iA5Lit", alphabet: URL, padding: true, want: "é😀中"},
		{name: "line breaks ignored", text: "Zm9v\r\nYmFy\n", alphabet: Standard, padding: true, want: "foobar"},
		{name: "empty", text: "", alphabet: Standard, padding: true, want: ""},
		{name: "url alphabet", text: "w6k_", alphabet: URL, padding: false, want: "é?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.text, tt.alphabet, tt.padding)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Decode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeFaults(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		alphabet Alphabet
		padding  bool
		offset   int
		reason   string
	}{
		{name: "missing padding", text: "Zm8", alphabet: Standard, padding: true, offset: 3, reason: "missing '=' padding at the end"},
		{name: "padding when off", text: "Zm8=", alphabet: Standard, padding: false, offset: 3, reason: "'=' padding found, but padding is off"},
		{name: "url char in standard", text: "w6k_", alphabet: Standard, padding: true, offset: 3, reason: "character of the url alphabet ('-' or '_') in standard base64"},
		{name: "standard char in url", text: "+/8=", alphabet: URL, padding: true, offset: 0, reason: "character of the standard alphabet ('+' or '/') in url-alphabet base64"},
		{name: "space", text: "Zm9v YmFy", alphabet: Standard, padding: true, offset: 4, reason: "white space is not allowed"},
		{name: "not in alphabet", text: "Zm9v*mFy", alphabet: Standard, padding: true, offset: 4, reason: "character not in the base64 alphabet"},
		{name: "unicode char", text: "Zm9vé", alphabet: Standard, padding: true, offset: 4, reason: "character not in the base64 alphabet"},
		{name: "lone final char", text: "Zm9vY", alphabet: Standard, padding: false, offset: 4, reason: "a final group of one character cannot hold a byte"},
		{name: "pad in middle", text: "Zg==Zg==", alphabet: Standard, padding: true, offset: 4, reason: "data after '=' padding"},
		{name: "pad at group start", text: "Zm9v=", alphabet: Standard, padding: true, offset: 4, reason: "'=' padding where no padding can be"},
		{name: "too much padding", text: "Zm8==", alphabet: Standard, padding: true, offset: 4, reason: "too much '=' padding"},
		{name: "incomplete padding", text: "Zg=", alphabet: Standard, padding: true, offset: 2, reason: "incomplete '=' padding"},
		{name: "position on second line", text: "Zm9v\nYm!y", alphabet: Standard, padding: true, offset: 7, reason: "character not in the base64 alphabet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.text, tt.alphabet, tt.padding)
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Decode = %v, want a *textpos.Error", err)
			}
			if pe.Position.Offset != tt.offset || pe.Reason != tt.reason {
				t.Errorf("got offset %d %q, want %d %q", pe.Position.Offset, pe.Reason, tt.offset, tt.reason)
			}
		})
	}
}

func TestDecodeNotUTF8(t *testing.T) {
	_, err := Decode("YWL/Yw==", Standard, true) // "ab\xffc"
	var ne *NotUTF8Error
	if !errors.As(err, &ne) || ne.Offset != 2 {
		t.Fatalf("Decode = %v, want NotUTF8Error at 2", err)
	}
	want := "decoded bytes are not UTF-8 text: first invalid byte at offset 2 of the decoded data (this tool returns text only)"
	if err.Error() != want {
		t.Errorf("message = %q", err.Error())
	}
}

// TestCheckAgreesWithDecoder holds check to the standard decoder over every
// short string of a small character set.
func TestCheckAgreesWithDecoder(t *testing.T) {
	chars := []byte("QZg=-_+/\n")
	var texts []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		texts = append(texts, prefix)
		if n == 0 {
			return
		}
		for _, c := range chars {
			grow(prefix+string(c), n-1)
		}
	}
	grow("", 6)
	for _, a := range []Alphabet{Standard, URL} {
		for _, padding := range []bool{true, false} {
			enc, _ := encoding(a, padding)
			for _, text := range texts {
				_, decErr := enc.DecodeString(text)
				chkErr := check(text, a, padding)
				if (decErr == nil) != (chkErr == nil) {
					t.Errorf("%s padding=%v %q: decoder %v, check %v", a, padding, text, decErr, chkErr)
				}
			}
		}
	}
}

func TestUnknownAlphabet(t *testing.T) {
	if _, err := Encode("x", "base32", true); !errors.Is(err, ErrAlphabet) {
		t.Errorf("Encode: %v", err)
	}
	if _, err := Decode("x", "base32", true); !errors.Is(err, ErrAlphabet) {
		t.Errorf("Decode: %v", err)
	}
}

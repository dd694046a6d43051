package base64text

import (
	"testing"
	"unicode/utf8"
)

// FuzzRoundTrip checks that decoding undoes encoding for every alphabet and
// padding, and that Decode never panics.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "f", "fo", "é😀", "Zg==", "-_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range []Alphabet{Standard, URL} {
			for _, p := range []bool{true, false} {
				Decode(s, a, p)
				if !utf8.ValidString(s) {
					continue
				}
				e, _ := Encode(s, a, p)
				if d, err := Decode(e, a, p); err != nil || d != s {
					t.Fatalf("%s %v: Decode(Encode(%q)) = %q, %v", a, p, s, d, err)
				}
			}
		}
	})
}

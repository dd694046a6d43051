package percent

import (
	"testing"
	"unicode/utf8"
)

// FuzzRoundTrip checks that decoding undoes encoding, and that Decode never
// panics.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"a b", "é😀", "%", "%4", "+%2B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Decode(s, Query)
		Decode(s, Path)
		if !utf8.ValidString(s) {
			return
		}
		for _, c := range []Component{Query, Path} {
			e, _ := Encode(s, c)
			if d, err := Decode(e, c); err != nil || d != s {
				t.Fatalf("%s: Decode(Encode(%q)) = %q, %v", c, s, d, err)
			}
		}
	})
}

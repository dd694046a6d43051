package yamljson

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// FuzzToJSON: any text converts or fails with a located fault, never a
// panic; what converts is written back as YAML that reads as the same
// JSON.
func FuzzToJSON(f *testing.F) {
	for _, s := range []string{"a: 1\n", "- [a, {b: c}]\n", "a: &x [1]\nb: *x\n", "<<: {a: 1}\n", "--- |\n  x\n", "? a\n: b\n", "{a: [", "'q''q'", "\"\\u00e9\"", "a: !!str 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ToJSON(s, true)
		if err != nil {
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			return
		}
		y, err := FromJSON(v, 2, 0)
		if err != nil {
			t.Fatalf("FromJSON: %v", err)
		}
		back, err := ToJSON(y, false)
		if err != nil || !jsondiff.Equal(back, v) {
			t.Fatalf("%q → %q does not read back: %v", s, y, err)
		}
	})
}

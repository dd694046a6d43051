package tomljson

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// FuzzToJSON: any text converts or fails with a located fault (or inf and
// nan), never a panic; what converts is written back as TOML that decodes
// to the same JSON, floats aside (written in Go's shortest form).
func FuzzToJSON(f *testing.F) {
	for _, s := range []string{"a = 1\n", "[t]\nb = [1, { c = 'd' }]\n", "[[a]]\nx = 1979-05-27\n", "a.b.\"c\" = true\n", "a = \"\"\"\nx\"\"\"", "a = [", "[a]\n[a]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ToJSON(s)
		if err != nil {
			var pe *textpos.Error
			if !errors.As(err, &pe) && !errors.Is(err, ErrInfinity) {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			return
		}
		out, err := FromJSON(v, "", 0)
		if err != nil {
			return // a value with no TOML form cannot come from TOML, but a float may print as an out-of-range integer
		}
		back, err := ToJSON(out)
		if err != nil || !jsondiff.Equal(back, v) {
			t.Fatalf("%q → %q does not read back: %v", s, out, err)
		}
	})
}

package csvjson

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// FuzzToJSON: any text converts or fails with a located fault, never a
// panic; what converts without a header is written back as CSV that reads
// as the same rows.
func FuzzToJSON(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "\"a\"\"b\",c\r\n", "a,\"b\nc\"", "x\n\n y ,z", "a,b\"c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ToJSON(s, ReadOptions{Delimiter: "comma", Ragged: true})
		if err != nil {
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			return
		}
		out, err := FromJSON(v, WriteOptions{Delimiter: "comma"})
		if err != nil {
			if errors.Is(err, ErrShape) && len(v.Items) == 0 {
				return
			}
			t.Fatalf("FromJSON: %v", err)
		}
		back, err := ToJSON(out, ReadOptions{Delimiter: "comma", Ragged: true})
		if err != nil || !jsondiff.Equal(back, v) {
			t.Fatalf("%q → %q does not read back: %v", s, out, err)
		}
	})
}

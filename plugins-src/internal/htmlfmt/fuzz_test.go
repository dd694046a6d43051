package htmlfmt

import (
	"strings"
	"testing"
)

// FuzzBeautify checks that Beautify never panics, keeps every
// non-white-space byte in order, and is stable.
func FuzzBeautify(f *testing.F) {
	for _, s := range []string{"<div><p>a <b>b</b></p><pre> x </pre></div>", "<ul><li>a<li>b</ul>", "<a href=x", "</p>x<script>a<b</script>", "<svg><g/></svg>", "<!-- c --><!doctype html>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Beautify(s, 2, 1<<20)
		if err != nil {
			return
		}
		if squeeze(out) != squeeze(s) {
			t.Fatalf("Beautify(%q) = %q: content changed", s, out)
		}
		again, err := Beautify(out, 2, 1<<20)
		if err != nil || again != out {
			t.Fatalf("not stable:\n%q\n%q\n%q (%v)", s, out, again, err)
		}
	})
}

// squeeze drops the white space Beautify may change.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			return -1
		}
		return r
	}, s)
}

package htmltext

import (
	"strings"
	"testing"
)

// FuzzText: any text gives a text, never a panic, with no trailing white
// space on any line.
func FuzzText(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<ul><li>x<ol><li>y", "<pre> a\n</pre>", "<table><tr><td>a<td>b", "<head><title>t<body>x", "<a href=https://x>y</a>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Text(s, Options{Links: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.TrimRight(line, " \t") != line {
				t.Fatalf("%q: line %q ends with white space", s, line)
			}
		}
	})
}

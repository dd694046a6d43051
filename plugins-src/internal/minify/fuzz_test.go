package minify

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// FuzzMinify checks that no language panics and that every fault is a
// *textpos.Error.
func FuzzMinify(f *testing.F) {
	for _, s := range []string{"<p>x</p>", "a{b:c}", "var a = 1 +;", "<svg><g/></svg>", "<a><b></a>", "<!--", "`${"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, lang := range []Language{HTML, CSS, JS, SVG, XML} {
			_, err := Minify(lang, s)
			var pe *textpos.Error
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("%s %q: %T %v", lang, s, err, err)
			}
		}
	})
}

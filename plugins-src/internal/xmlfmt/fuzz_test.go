package xmlfmt

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// FuzzFormat: any text formats or fails with a located fault, never a
// panic; the formatted text is well-formed and minifies as the input does.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{"<a/>", "<?xml version=\"1.0\"?><a x='1'><b>t</b><!--c--></a>", "<p>Hi <i>x</i> y</p>", "<a>&amp;&#65;<![CDATA[<]]></a>", "<!DOCTYPE a><a/>", "<a><b></a>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Format(s, Options{Indent: 2, Comments: true})
		if err != nil {
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			return
		}
		m1, err1 := Minify(s, 0)
		m2, err2 := Minify(out, 0)
		if err1 != nil || err2 != nil || m1 != m2 {
			t.Fatalf("%q: minified %q (%v), of the formatted %q (%v)", s, m1, err1, m2, err2)
		}
	})
}

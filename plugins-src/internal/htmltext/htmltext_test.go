package htmltext

import (
	"errors"
	"strings"
	"testing"
)

// The entity vectors are the HTML standard's named and numeric character
// references (§13.5); the rest are the rendering rules the package doc
// states.
func TestText(t *testing.T) {
	tests := []struct {
		name, html, want string
		o                Options
	}{
		{"paragraphs and headings", "<h1>Title</h1><p>One\n  two</p><p>Three</p>", "Title\n\nOne two\n\nThree", Options{}},
		{"entities", "<p>caf&eacute; &amp; cr&#232;me &#x1F600; &notin; &nbsp;x</p>", "café & crème 😀 ∉ \u00a0x", Options{}},
		{"hidden content", "<html><head><title>T</title><style>p{}</style></head><body><script>var a='<p>';</script><p>Shown</p><!-- c --><template>no</template></body></html>", "Shown", Options{}},
		{"head without its end tag", "<head><title>T</title><body><p>Body</p>", "Body", Options{}},
		{"lists", "<ul><li>a</li><li>b<ol start=\"3\"><li>c</li><li>d</li></ol></li></ul><p>after</p>", "- a\n- b\n  3. c\n  4. d\n\nafter", Options{}},
		{"br and inline", "a<br>b <b>bold</b><i> it</i>", "a\nb bold it", Options{}},
		{"pre keeps white space", "<p>x</p><pre>  a\n    b</pre><p>y</p>", "x\n\n  a\n    b\n\ny", Options{}},
		{"table", "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>", "k\tv\na\t1", Options{}},
		{"links off", "<p>See <a href=\"https://x.test/doc\">the docs</a>.</p>", "See the docs.", Options{}},
		{"links on", "<p>See <a href=\"https://x.test/doc\">the docs</a> or <a href=\"https://x.test\">https://x.test</a> <a href=\"javascript:x\">js</a></p>", "See the docs <https://x.test/doc> or https://x.test js", Options{Links: true}},
		{"img alt", "<p>A <img src=x alt=\"cat\"> sat</p>", "A cat sat", Options{}},
		{"broken markup", "<p>unclosed <b>bold <div>x</p></i>", "unclosed bold\nx", Options{}},
		{"empty", "", "", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Text(tt.html, tt.o)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
	if _, err := Text(strings.Repeat("<p>abcdefgh</p>", 200), Options{MaxBytes: 500}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bound: %v", err)
	}
}

package xmlfmt

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name, in, want string
		o              Options
	}{
		{"nesting", `<?xml version="1.0"?><a><b x="1">t</b><c/><d></d></a>`, "<?xml version=\"1.0\"?>\n<a>\n  <b x=\"1\">t</b>\n  <c/>\n  <d/>\n</a>", Options{Indent: 2}},
		{"white space between elements dropped", "<a>\n\t<b>  spaced  </b>\n</a>", "<a>\n    <b>  spaced  </b>\n</a>", Options{Indent: 4}},
		{"mixed content kept as is", "<p>Hello <b>big</b> <i>world</i></p>", "<p>Hello <b>big</b> <i>world</i></p>", Options{Indent: 2}},
		{"prefixes and namespaces kept", `<x:a xmlns:x="urn:x"><x:b/></x:a>`, "<x:a xmlns:x=\"urn:x\">\n  <x:b/>\n</x:a>", Options{Indent: 2}},
		{"entities re-escaped", `<a t="&quot;&lt;&#10;">&amp;&#x41;<![CDATA[<x>]]></a>`, `<a t="&quot;&lt;&#10;">&amp;A&lt;x&gt;</a>`, Options{Indent: 2}},
		{"comments and doctype", "<!DOCTYPE a><!-- c --><a><!--in--><b/></a>", "<!DOCTYPE a>\n<!-- c -->\n<a>\n  <!--in-->\n  <b/>\n</a>", Options{Indent: 2, Comments: true}},
		{"encoding declaration accepted", `<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>`, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<a>é</a>", Options{Indent: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Format(tt.in, tt.o)
			if err != nil || got != tt.want {
				t.Fatalf("Format = %q, %v\nwant %q", got, err, tt.want)
			}
			// What is written is well-formed and reads back to the same
			// minified form.
			m1, err1 := Minify(tt.in, 0)
			m2, err2 := Minify(got, 0)
			if err1 != nil || err2 != nil || m1 != m2 {
				t.Errorf("minified %q %v, of the output %q %v", m1, err1, m2, err2)
			}
		})
	}
}

func TestMinify(t *testing.T) {
	got, err := Minify("<a>\n  <!-- note -->\n  <b x='1'>t</b>\n  <c>\n  </c>\n</a>\n", 0)
	if want := `<a><b x="1">t</b><c/></a>`; err != nil || got != want {
		t.Errorf("Minify = %q, %v, want %q", got, err, want)
	}
}

// The faults follow the well-formedness constraints of XML 1.0 (§2.1
// "document", §3 "Element Type Match", §4.6 predefined entities).
func TestFaults(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"mismatched end tag", "<a><b></a>", "end tag does not match the open element at line 1, column 7 (byte 6)"},
		{"unclosed", "<a><b></b>", "unexpected end of input, an element is not closed at line 1, column 11 (byte 10)"},
		{"two roots", "<a/><b/>", "more than one root element at line 1, column 5 (byte 4)"},
		{"text outside root", "<a/>x", "text outside the root element at line 1, column 5 (byte 4)"},
		{"unknown entity", "<a>&nbsp;</a>", "unknown or malformed entity or character reference at line 1, column 10 (byte 9)"},
		{"no root", "<!-- only -->", "no root element at line 1, column 14 (byte 13)"},
		{"empty", "", "no root element at line 1, column 1 (byte 0)"},
		{"bad attribute", "<a b=c/>", "malformed attribute at line 1, column 7 (byte 6)"},
		{"eof in tag", "<a", "unexpected end of input at line 1, column 3 (byte 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Format(tt.in, Options{Indent: 2})
			var pe *textpos.Error
			if !errors.As(err, &pe) || pe.Reason+" at "+pe.Position.String() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	deep := strings.Repeat("<a>", MaxDepth+1) + strings.Repeat("</a>", MaxDepth+1)
	if _, err := Format(deep, Options{Indent: 1}); err == nil || !strings.Contains(err.Error(), "deeper than 1000") {
		t.Errorf("deep: %v", err)
	}
	if _, err := Format(strings.Repeat("<a>", 300)+strings.Repeat("</a>", 300), Options{Indent: 8, MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bound: %v", err)
	}
	if _, err := Format("<a/>", Options{Indent: 9}); !errors.Is(err, ErrIndent) {
		t.Errorf("indent: %v", err)
	}
}

// TestReadable holds the output to encoding/xml's own strict reader.
func TestReadable(t *testing.T) {
	in := `<r a="x&#9;y"><s>1 &lt; 2 &amp;&amp; 3 &gt; 2</s><t>]]&gt;</t></r>`
	for _, indent := range []int{0, 2} {
		out, err := Format(in, Options{Indent: indent})
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			A string `xml:"a,attr"`
			S string `xml:"s"`
			T string `xml:"t"`
		}
		if err := xml.Unmarshal([]byte(out), &v); err != nil || v.A != "x\ty" || v.S != "1 < 2 && 3 > 2" || v.T != "]]>" {
			t.Errorf("%q reads as %+v, %v", out, v, err)
		}
	}
}

package entities

import (
	"errors"
	"testing"
)

func TestEncode(t *testing.T) {
	tests := []struct{ mode, in, want string }{
		{"minimal", `<a href="x">Tom & Jerry's</a>`, `&lt;a href=&#34;x&#34;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;`},
		{"minimal", "héllo 😀", "héllo 😀"},
		{"non_ascii", "héllo <😀>\u007f", "h&#xE9;llo &lt;&#x1F600;&gt;&#x7F;"},
		{"non_ascii", "", ""},
	}
	for _, tt := range tests {
		if got, err := Encode(tt.in, tt.mode); err != nil || got != tt.want {
			t.Errorf("Encode(%q, %s) = %q, %v; want %q", tt.in, tt.mode, got, err, tt.want)
		}
	}
	if _, err := Encode("x", "all"); !errors.Is(err, ErrMode) {
		t.Errorf("Encode(all): %v", err)
	}
}

// Vectors from the HTML Living Standard, 13.2.5.72–80 (character reference
// states) and its named character references table.
func TestDecode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"&lt;p&gt; &amp;amp; &quot;q&quot; &#39;", `<p> &amp; "q" '`},
		{"&eacute;&#233;&#xE9;&#Xe9;", "éééé"},
		{"&amp &copy 2024", "& © 2024"}, // legacy names without a semicolon
		{"&notin; &notit;", "∉ ¬it;"},   // longest legacy prefix
		{"&#0; &#xD800; &#x110000;", "\ufffd \ufffd \ufffd"},
		{"&#x80;", "€"}, // the windows-1252 remapping of C1 references
		{"&unknown; & alone", "&unknown; & alone"},
		{"&NotNestedGreaterGreater;", "⪢̸"}, // a two-code-point reference
		{"", ""},
	}
	for _, tt := range tests {
		if got := Decode(tt.in); got != tt.want {
			t.Errorf("Decode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

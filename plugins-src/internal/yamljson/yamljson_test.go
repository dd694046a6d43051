package yamljson

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func toJSON(t *testing.T, y string, all bool) string {
	t.Helper()
	v, err := ToJSON(y, all)
	if err != nil {
		t.Fatalf("ToJSON(%q): %v", y, err)
	}
	s, _ := jsontree.Encode(v, 0, 0)
	return s
}

// Examples of the YAML 1.2.2 specification, chapter 2 (2.1 sequence of
// scalars, 2.2 mapping scalars to scalars, 2.3 mapping to sequences, 2.4
// sequence of mappings, 2.10 anchors and aliases, 2.13–2.14 block
// scalars), the merge key of yaml.org/type/merge, and the core schema's
// scalars (§10.3.2).
func TestToJSON(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"2.1", "- Mark McGwire\n- Sammy Sosa\n- Ken Griffey\n", `["Mark McGwire","Sammy Sosa","Ken Griffey"]`},
		{"2.2", "hr:  65    # Home runs\navg: 0.278 # Batting average\nrbi: 147   # Runs Batted In\n", `{"hr":65,"avg":0.278,"rbi":147}`},
		{"2.3", "american:\n- Boston Red Sox\n- Detroit Tigers\nnational:\n- New York Mets\n", `{"american":["Boston Red Sox","Detroit Tigers"],"national":["New York Mets"]}`},
		{"2.4", "-\n  name: Mark McGwire\n  hr:   65\n-\n  name: Sammy Sosa\n  hr:   63\n", `[{"name":"Mark McGwire","hr":65},{"name":"Sammy Sosa","hr":63}]`},
		{"2.10 anchors", "hr:\n- Mark McGwire\n- &SS Sammy Sosa\nrbi:\n- *SS\n- Ken Griffey\n", `{"hr":["Mark McGwire","Sammy Sosa"],"rbi":["Sammy Sosa","Ken Griffey"]}`},
		{"2.13 literal", "--- |\n  \\//||\\/||\n  // ||  ||__\n", `"\\//||\\/||\n// ||  ||__\n"`},
		{"2.14 folded", "--- >\n  Mark McGwire's\n  year was crippled\n  by a knee injury.\n", `"Mark McGwire's year was crippled by a knee injury.\n"`},
		{"core schema scalars", "a: ~\nb: null\nc: true\nd: 0x1F\ne: 1.50\nf: -12\ng: '007'\nh: 2001-12-14\ni: 1e3\nj: \"1e3\"\n", `{"a":null,"b":null,"c":true,"d":31,"e":1.50,"f":-12,"g":"007","h":"2001-12-14","i":1e3,"j":"1e3"}`},
		{"merge key", "base: &b {x: 1, y: 2}\nmore: &m {z: 3}\nc:\n  <<: [*b, *m]\n  y: 9\n", `{"base":{"x":1,"y":2},"more":{"z":3},"c":{"y":9,"x":1,"z":3}}`},
		{"str tag", "a: !!str 123\nb: !custom 5\n", `{"a":"123","b":5}`},
		{"flow and scalar keys", "{1: one, true: yes, null: x}", `{"1":"one","true":"yes","null":"x"}`},
		{"empty", "", `null`},
		{"comment only", "# nothing\n", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toJSON(t, tt.yaml, false); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if got := toJSON(t, "a: 1\n---\n- 2\n", true); got != `[{"a":1},[2]]` {
		t.Errorf("all documents: %s", got)
	}
}

func TestToJSONFaults(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 'b', 'a'; i <= 'j'; i, prev = i+1, i {
		laughs += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(prev)+", ", 8) + "*" + string(prev) + "]\n"
	}
	tests := []struct{ name, yaml, want string }{
		{"billion laughs", laughs, "aliases expand to more than 262,144 values"},
		{"unknown alias", "a: *nope\n", "alias to an anchor not defined before it"},
		{"duplicate key", "a: 1\nb: 2\na: 3\n", "duplicate mapping key"},
		{"two documents", "a: 1\n---\nb: 2\n", "the text holds more than one document (all_documents converts each)"},
		{"infinity", "a: .inf\n", "infinity and NaN have no JSON form"},
		{"mapping key", "? [a, b]\n: 1\n", ""},
		{"deep flow", strings.Repeat("[", 1001), "nesting deeper than 1000 levels"},
		{"syntax", "a: [1, 2\nb: 3\n", ""},
		{"bad indentation", "a:\n  b: 1\n c: 2\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToJSON(tt.yaml, false)
			var pe *textpos.Error
			if !errors.As(err, &pe) || tt.want != "" && pe.Reason != tt.want {
				t.Fatalf("error %v, want reason %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "text is not valid YAML: ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestFromJSON(t *testing.T) {
	tests := []struct {
		name, json string
		indent     int
		want       string
	}{
		{"nested", `{"name":"Zoë","tags":["a","b"],"o":{"k":1,"e":{}},"l":[{"x":1,"y":[2]},[3]]}`, 2,
			"name: Zoë\ntags:\n  - a\n  - b\no:\n  k: 1\n  e: {}\nl:\n  - x: 1\n    \"y\":\n      - 2\n  - - 3\n"},
		{"indent 4", `{"a":{"b":[1]}}`, 4, "a:\n    b:\n        - 1\n"},
		{"quoting", `["yes","007","1.5","null","","a: b","# c","- d","x\ny","tab\t","~","<<","ok text","é"]`, 2,
			"- \"yes\"\n- \"007\"\n- \"1.5\"\n- \"null\"\n- \"\"\n- \"a: b\"\n- \"# c\"\n- \"- d\"\n- \"x\\ny\"\n- \"tab\\t\"\n- \"~\"\n- \"<<\"\n- ok text\n- é\n"},
		{"scalars", `[null,true,1.50,-0,12345678901234567890]`, 2, "- null\n- true\n- 1.50\n- -0\n- 12345678901234567890\n"},
		{"top scalar", `"plain"`, 2, "plain\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsontree.Parse(tt.json, "x")
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromJSON(v, tt.indent, 0)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tt.want)
			}
			// goccy's parser reads it back to the same JSON.
			back, err := ToJSON(got, false)
			if err != nil || !jsondiff.Equal(back, v) {
				s, _ := jsontree.Encode(back, 0, 0)
				t.Errorf("read back as %s, %v", s, err)
			}
		})
	}
}

// TestRoundTrip holds the emitter's quoting to the reader on awkward
// strings.
func TestRoundTrip(t *testing.T) {
	strs := []string{"On", "NO", "0x10", "+1", ".5", ".inf", "-", "a #b", "a:", "key: value", "[x]", "{y}", "a,b", "!tag", "&anc", "*ali",
		"%dir", "@at", "`tick", "|", ">", "'q'", "\"dq\"", " lead", "trail ", "\u2028", "\ufeffbom", "\x00\x01", "😀", "2001-12-14", "1_000", "=", "?", "a\\b"}
	for _, s := range strs {
		v := jsontree.Value{Kind: jsontree.Object, Members: []jsontree.Member{{Key: s, Value: jsontree.Value{Kind: jsontree.String, Text: s}}}}
		y, err := FromJSON(v, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ToJSON(y, false)
		if err != nil || !jsondiff.Equal(back, v) {
			j, _ := jsontree.Encode(back, 0, 0)
			t.Errorf("%q → %q → %s, %v", s, y, j, err)
		}
	}
}

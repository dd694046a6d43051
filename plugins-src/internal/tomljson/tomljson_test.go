package tomljson

import (
	"errors"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func toJSON(t *testing.T, s string) string {
	t.Helper()
	v, err := ToJSON(s)
	if err != nil {
		t.Fatalf("ToJSON(%q): %v", s, err)
	}
	j, _ := jsontree.Encode(v, 0, 0)
	return j
}

// Examples of the TOML v1.0.0 specification (toml.io/en/v1.0.0): the
// opening example, dotted keys, inline tables, arrays of tables, and the
// four date-time kinds.
func TestToJSON(t *testing.T) {
	tests := []struct{ name, toml, want string }{
		{"opening example, order kept", "title = \"TOML Example\"\n\n[owner]\nname = \"Tom Preston-Werner\"\n\n[database]\nenabled = true\nports = [ 8000, 8001, 8002 ]\ntemp_targets = { cpu = 79.5, case = 72.0 }\n",
			`{"title":"TOML Example","owner":{"name":"Tom Preston-Werner"},"database":{"enabled":true,"ports":[8000,8001,8002],"temp_targets":{"cpu":79.5,"case":72}}}`},
		{"dotted keys", "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n",
			`{"name":"Orange","physical":{"color":"orange","shape":"round"},"site":{"google.com":true}}`},
		{"array of tables", "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]  # empty table within the array\n\n[[products]]\nname = \"Nail\"\nsku = 284758393\ncolor = \"gray\"\n",
			`{"products":[{"name":"Hammer","sku":738594937},{},{"name":"Nail","sku":284758393,"color":"gray"}]}`},
		{"date-times", "odt = 1979-05-27T07:32:00-08:00\nldt = 1979-05-27T07:32:00.999999\nld = 1979-05-27\nlt = 00:32:00.5\n",
			`{"odt":"1979-05-27T07:32:00-08:00","ldt":"1979-05-27T07:32:00.999999","ld":"1979-05-27","lt":"00:32:00.5"}`},
		{"integers and floats", "hex = 0xDEADBEEF\noct = 0o755\nbin = 0b11010110\nbig = 1_000\nf = 6.626e-34\ng = 1.50\n",
			`{"hex":3735928559,"oct":493,"bin":214,"big":1000,"f":6.626e-34,"g":1.5}`},
		{"strings", "a = 'C:\\Users'\nb = \"\"\"\nRoses\"\"\"\nc = \"\\u00e9\\t\"\n", `{"a":"C:\\Users","b":"Roses","c":"é\t"}`},
		{"empty", "", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toJSON(t, tt.toml); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The invalid documents are the specification's own "INVALID" examples.
func TestToJSONFaults(t *testing.T) {
	tests := []struct{ name, toml string }{
		{"key redefined", "name = \"Tom\"\nname = \"Pradyun\"\n"},
		{"table redefined", "[fruit]\napple = \"red\"\n\n[fruit]\norange = \"orange\"\n"},
		{"no value", "key = # INVALID\n"},
		{"bare key with space", "first name = \"Tom\"\n"},
		{"inf", "a = inf\n"},
		{"deep", "a = " + strings.Repeat("[", 1001)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToJSON(tt.toml)
			var pe *textpos.Error
			if !errors.As(err, &pe) && !errors.Is(err, ErrInfinity) {
				t.Fatalf("error %v, want a located fault", err)
			}
			if pe != nil && !strings.HasPrefix(err.Error(), "text is not valid TOML: ") {
				t.Errorf("message %q", err)
			}
		})
	}
	_, err := ToJSON("a = 1\nb = 2\nb = 3\n")
	var pe *textpos.Error
	if !errors.As(err, &pe) || err.Error() != "text is not valid TOML: a key or table is defined twice at line 3, column 1 (byte 12)" {
		t.Errorf("located at %v", err)
	}
	_, err = ToJSON("[a]\nx = 1\ns = \"\"\"\nmulti\nline\"\"\"\n[b]\n[a]\ny = 2\n")
	if !errors.As(err, &pe) || pe.Position.Line != 7 {
		t.Errorf("table located at %v", err)
	}
}

func TestFromJSON(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"tables after keys, order kept", `{"title":"x","owner":{"name":"Tom","dob":"1979"},"z":1,"products":[{"name":"Hammer"},{"name":"Nail","tags":["a"]}]}`,
			"title = \"x\"\nz = 1\n\n[owner]\nname = \"Tom\"\ndob = \"1979\"\n\n[[products]]\nname = \"Hammer\"\n\n[[products]]\nname = \"Nail\"\ntags = [\"a\"]\n"},
		{"nested tables and quoted keys", `{"a":{"b":{"c d":1.50}},"e":{}}`, "e = {}\n\n[a]\n\n[a.b]\n\"c d\" = 1.50\n"},
		{"mixed array inline", `{"m":[1,{"k":"v"},[true]]}`, "m = [1, { k = \"v\" }, [true]]\n"},
		{"escapes", `{"s":"tab\t\"q\" \\ é \u0001"}`, "s = \"tab\\t\\\"q\\\" \\\\ é \\u0001\"\n"},
		{"empty", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsontree.Parse(tt.json, "x")
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromJSON(v, tt.json, 0)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tt.want)
			}
			// go-toml decodes it, and back to the same JSON.
			var m map[string]any
			if err := toml.Unmarshal([]byte(got), &m); err != nil {
				t.Fatalf("go-toml refuses the output: %v", err)
			}
			back, err := ToJSON(got)
			if err != nil || !jsondiff.Equal(back, v) {
				j, _ := jsontree.Encode(back, 0, 0)
				t.Errorf("read back as %s, %v", j, err)
			}
		})
	}
	for j, want := range map[string]string{
		`{"a":{"b":null}}`:             "text cannot be written as TOML: null has no TOML form at line 1, column 11 (byte 10)",
		`{"n":[12345678901234567890]}`: "text cannot be written as TOML: integer out of TOML's 64-bit range at line 1, column 7 (byte 6)",
	} {
		v, _ := jsontree.Parse(j, "x")
		_, err := FromJSON(v, j, 0)
		var pe *textpos.Error
		if !errors.As(err, &pe) || err.Error() != want {
			t.Errorf("%s: %v, want %q", j, err, want)
		}
	}
	v, _ := jsontree.Parse(`[1]`, "x")
	if _, err := FromJSON(v, "[1]", 0); !errors.Is(err, ErrNotTable) {
		t.Errorf("array: %v", err)
	}
}

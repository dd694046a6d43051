package jsontree

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// The round trips keep member order and numbers as written (RFC 8259 §6
// allows any precision; a converter must not round).
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name, in, compact, indented string
	}{
		{"order kept", `{"b":1,"a":[true,null,"x"]}`, `{"b":1,"a":[true,null,"x"]}`, "{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null,\n    \"x\"\n  ]\n}"},
		{"numbers as written", `[1.50, 12345678901234567890123, -0, 1e400]`, `[1.50,12345678901234567890123,-0,1e400]`, "[\n  1.50,\n  12345678901234567890123,\n  -0,\n  1e400\n]"},
		{"escapes", `"\u00e9\n\"\\\/\u0001\ud83d\ude00"`, `"é\n\"\\/\u0001😀"`, `"é\n\"\\/\u0001😀"`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`, "{\n  \"a\": {},\n  \"b\": []\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse(tt.in, "text is not valid JSON")
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := Encode(v, 0, 0); got != tt.compact {
				t.Errorf("compact %q, want %q", got, tt.compact)
			}
			if got, _ := Encode(v, 2, 0); got != tt.indented {
				t.Errorf("indented %q, want %q", got, tt.indented)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"syntax, subject replaced", `{"a" 1}`, "a is not valid JSON: expected ':' after object key at line 1, column 6 (byte 5)"},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, "a is not valid JSON: duplicate object key at line 1, column 14 (byte 13)"},
		{"duplicate escaped key", `{"\"x":1, "\"x":2}`, "a is not valid JSON: duplicate object key at line 1, column 11 (byte 10)"},
		{"empty", ``, "a is not valid JSON: empty input at line 1, column 1 (byte 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in, "a is not valid JSON")
			var pe *textpos.Error
			if !errors.As(err, &pe) || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEncodeBounds(t *testing.T) {
	v, _ := Parse(`[`+strings.Repeat(`"xxxxxxxx",`, 100)+`1]`, "x")
	if _, err := Encode(v, 2, 500); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
	if _, err := Encode(v, 9, 0); !errors.Is(err, ErrIndent) {
		t.Errorf("err %v, want ErrIndent", err)
	}
}

func TestAny(t *testing.T) {
	v, _ := Parse(`{"a":[1,"x",null,false]}`, "x")
	m := v.Any().(map[string]any)
	a := m["a"].([]any)
	if len(a) != 4 || a[0].(interface{ String() string }).String() != "1" || a[1] != "x" || a[2] != nil || a[3] != false {
		t.Errorf("Any = %#v", m)
	}
}

func TestOffsets(t *testing.T) {
	text := `{"a": [null, true, -1.5e3, "x\"y"], "b": {}}`
	v, err := Parse(text, "x")
	if err != nil {
		t.Fatal(err)
	}
	a := v.Members[0].Value
	got := []int{v.Offset, a.Offset, a.Items[0].Offset, a.Items[1].Offset, a.Items[2].Offset, a.Items[3].Offset, v.Members[1].Value.Offset}
	want := []int{0, 6, 7, 13, 19, 27, 41}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("offsets %v, want %v", got, want)
			break
		}
	}
}

// TestMatchesEncodingJSON holds the tree to encoding/json's decoding of the
// same texts: string escapes (lone and paired surrogates included), numbers
// and nesting.
func TestMatchesEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{"a":"\ud83d\ude00 \ud83d x \ude00 \u00e9\/\b\f\n\r\t\"\\","n":[-0.5e+10,0,1E2],"o":{"":null,"t":true,"f":false}}`,
		`"\ud800\ud800"`, `"\udc00\ud83d\ude00"`, ` [ [ ] , { } , "" ] `, `-12.5`,
	} {
		v, err := Parse(text, "x")
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.Any(), want) {
			t.Errorf("%s: tree %#v, encoding/json %#v", text, v.Any(), want)
		}
	}
}

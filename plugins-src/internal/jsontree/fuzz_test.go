package jsontree

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse holds the tree to encoding/json's decoding of every text both
// accept, and re-encoding it to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"\u00e9\ud83d\ude00",null]}`, `"\ud800"`, `[1e5,-0.0,{}]`, `{"a":1,"a":2}`, `"\\\/\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s, "x")
		if err != nil {
			return
		}
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("%q: the tree parses, encoding/json does not: %v", s, err)
		}
		if !reflect.DeepEqual(v.Any(), want) {
			t.Fatalf("%q: tree %#v, encoding/json %#v", s, v.Any(), want)
		}
		out, err := Encode(v, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(out, "x")
		if err != nil || !reflect.DeepEqual(back.Any(), v.Any()) {
			t.Fatalf("%q → %q does not read back: %v", s, out, err)
		}
	})
}

package jsonfmt

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzFormat holds the package to encoding/json on validity, and checks that
// formatting changes nothing but white space and member order.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{`{}`, `[1,{"a":"é😀","b":[true,null,-1.5e3]}]`, `{"b":1,"a":2,"a":3}`, `[`, `{"a" 1}`, `"\ud800"`, "\uFEFF1", `01`, ` 0 `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// encoding/json replaces invalid UTF-8; jsonfmt refuses it (a
			// text parameter is always valid UTF-8).
			if Validate(s) == nil {
				t.Fatalf("Validate(%q) accepted invalid UTF-8", s)
			}
			return
		}
		err := Validate(s)
		if (err == nil) != json.Valid([]byte(s)) {
			t.Fatalf("Validate(%q) = %v, encoding/json valid %v", s, err, json.Valid([]byte(s)))
		}
		if err != nil {
			return
		}
		min, err := Minify(s)
		if err != nil {
			t.Fatal(err)
		}
		formatted, err := Format(s, Options{Indent: 3})
		if err != nil {
			t.Fatal(err)
		}
		again, err := Minify(formatted)
		if err != nil || again != min {
			t.Fatalf("Minify(Format(%q)) = %q, %v, want %q", s, again, err, min)
		}
		sorted, err := Format(s, Options{Indent: 1, SortKeys: true})
		if err != nil || !json.Valid([]byte(sorted)) || len(sorted) < len(min) {
			t.Fatalf("sorted %q: %q, %v", s, sorted, err)
		}
	})
}

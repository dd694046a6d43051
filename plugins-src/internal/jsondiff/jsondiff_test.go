package jsondiff

import (
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

func parse(t *testing.T, s string) jsontree.Value {
	t.Helper()
	v, err := jsontree.Parse(s, "x")
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// apply is a minimal RFC 6902 applier for add, remove and replace (§4.1–
// §4.3), to check that every diff turns a into b.
func apply(t *testing.T, doc jsontree.Value, ops []Op) jsontree.Value {
	t.Helper()
	for _, op := range ops {
		if op.Path == "" {
			doc = *op.Value
			continue
		}
		tokens := strings.Split(op.Path[1:], "/")
		doc = applyAt(t, doc, tokens, op)
	}
	return doc
}

func applyAt(t *testing.T, v jsontree.Value, tokens []string, op Op) jsontree.Value {
	tok := strings.ReplaceAll(strings.ReplaceAll(tokens[0], "~1", "/"), "~0", "~")
	last := len(tokens) == 1
	switch v.Kind {
	case jsontree.Object:
		for i, m := range v.Members {
			if m.Key != tok {
				continue
			}
			if !last {
				v.Members[i].Value = applyAt(t, m.Value, tokens[1:], op)
				return v
			}
			switch op.Op {
			case "remove":
				v.Members = append(v.Members[:i:i], v.Members[i+1:]...)
			case "replace", "add":
				v.Members[i].Value = *op.Value
			}
			return v
		}
		if last && op.Op == "add" {
			v.Members = append(v.Members, jsontree.Member{Key: tok, Value: *op.Value})
			return v
		}
	case jsontree.Array:
		i, err := strconv.Atoi(tok)
		if err != nil || i > len(v.Items) {
			t.Fatalf("bad index in %s", op.Path)
		}
		if !last {
			v.Items[i] = applyAt(t, v.Items[i], tokens[1:], op)
			return v
		}
		items := append([]jsontree.Value(nil), v.Items...)
		switch op.Op {
		case "remove":
			v.Items = append(items[:i:i], items[i+1:]...)
		case "replace":
			items[i] = *op.Value
			v.Items = items
		case "add":
			v.Items = append(items[:i:i], append([]jsontree.Value{*op.Value}, items[i:]...)...)
		}
		return v
	}
	t.Fatalf("path %s does not apply", op.Path)
	return v
}

// Where RFC 6902's appendix A examples are differences (A.1 add a member,
// A.2 add an element, A.3 remove a member, A.4 remove an element, A.5
// replace a value, A.10 add a nested member, A.16 an array value), Diff
// finds the very patch the RFC shows.
func TestDiff(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"A.1 add member", `{"foo":"bar"}`, `{"baz":"qux","foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`},
		{"A.2 add element", `{"foo":["bar","baz"]}`, `{"foo":["bar","qux","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`},
		{"A.3 remove member", `{"baz":"qux","foo":"bar"}`, `{"foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`},
		{"A.4 remove element", `{"foo":["bar","qux","baz"]}`, `{"foo":["bar","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`},
		{"A.5 replace", `{"baz":"qux","foo":"bar"}`, `{"baz":"boo","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`},
		{"A.10 nested add", `{"foo":"bar"}`, `{"foo":"bar","child":{"grandchild":{}}}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`},
		{"A.16 array value", `{"foo":["bar"]}`, `{"foo":["bar",["abc","def"]]}`, `[{"op":"add","path":"/foo/1","value":["abc","def"]}]`},
		{"equal, numbers by value, any member order", `{"a":1.0,"b":[1e2,-0]}`, `{"b":[100,0],"a":1}`, `[]`},
		{"pointer escapes (RFC 6901 §3)", `{"a/b":1,"m~n":2}`, `{"a/b":3,"m~n":4}`, `[{"op":"replace","path":"/a~1b","value":3},{"op":"replace","path":"/m~0n","value":4}]`},
		{"type change", `{"a":[1]}`, `{"a":{"0":1}}`, `[{"op":"replace","path":"/a","value":{"0":1}}]`},
		{"root", `1`, `"x"`, `[{"op":"replace","path":"","value":"x"}]`},
		{"shrink array", `[1,2,3,4]`, `[1,9]`, `[{"op":"replace","path":"/1","value":9},{"op":"remove","path":"/2"},{"op":"remove","path":"/2"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := parse(t, tt.a), parse(t, tt.b)
			ops := Diff(a, b)
			got, _ := jsontree.Encode(Patch(ops), 0, 0)
			if got != tt.want {
				t.Errorf("patch %s\nwant  %s", got, tt.want)
			}
			if r := apply(t, parse(t, tt.a), ops); !Equal(r, b) {
				s, _ := jsontree.Encode(r, 0, 0)
				t.Errorf("applied: %s, want %s", s, tt.b)
			}
		})
	}
}

func TestApplies(t *testing.T) {
	pairs := [][2]string{
		{`[1,2,3,4,5]`, `[0,1,2,4,5,6]`},
		{`{"a":{"b":[{"c":1},{"d":2}]},"e":null}`, `{"a":{"b":[{"c":2},{"d":2},true]},"f":false}`},
		{`[[1,[2]],[3]]`, `[[1,[2,3]]]`},
		{`{"x":[]}`, `{"x":[{"y":1}]}`},
	}
	for _, p := range pairs {
		a, b := parse(t, p[0]), parse(t, p[1])
		if r := apply(t, parse(t, p[0]), Diff(a, b)); !Equal(r, b) {
			s, _ := jsontree.Encode(r, 0, 0)
			t.Errorf("%s → %s: applied gives %s", p[0], p[1], s)
		}
	}
}

func TestSameNumber(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"1", "1.0", true}, {"100", "1e2", true}, {"0.001", "1E-3", true}, {"-0", "0.0", true},
		{"12345678901234567890", "12345678901234567891", false}, {"1e400", "10e399", true},
		{"1", "-1", false}, {"1e9999999999999999999", "1", false}, {"0.10", "0.1", true},
	} {
		if got := sameNumber(tt.a, tt.b); got != tt.want {
			t.Errorf("sameNumber(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

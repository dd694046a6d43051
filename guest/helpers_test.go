//go:build !wasip1 && !guestgen

// The internal tests run on the host, against the in-memory fake of the
// host functions in abi_other.go.

package guest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// usePackage registers p for one test and restores the previous
// registration (the whole-file example's) afterwards.
func usePackage(t *testing.T, p Package) {
	t.Helper()
	r := &registration
	r.mu.Lock()
	registered, pkg, built, decl, err := r.registered, r.pkg, r.built, r.declaration, r.err
	r.registered, r.pkg, r.built, r.declaration, r.err = true, p, false, nil, nil
	r.mu.Unlock()
	t.Cleanup(func() {
		r.mu.Lock()
		r.registered, r.pkg, r.built, r.declaration, r.err = registered, pkg, built, decl, err
		r.mu.Unlock()
	})
}

// useFake gives the test a fresh fake host.
func useFake(t *testing.T) *fakeHost {
	t.Helper()
	old := fake
	fake = newFakeHost()
	t.Cleanup(func() { fake = old })
	return fake
}

func allTexts(name string) map[string]Text {
	t := Text{Name: name, Description: name + " does things."}
	return map[string]Text{"en": t, "it": t, "fr": t, "es": t}
}

func ops(names ...string) []Operation {
	out := make([]Operation, len(names))
	for i, n := range names {
		out[i] = Operation{Name: n, Deterministic: true}
	}
	return out
}

// newService returns a valid service with code and operations.
func testService[In, Out any](code string, operations []Operation, compute func(*Context, In) (Out, error)) *Service[In, Out] {
	return &Service[In, Out]{
		Code: code, Name: "Test " + code, Description: "A test service.",
		Texts:    allTexts(code),
		Category: "dev", IconKey: code,
		UI:            UI{Kind: "custom", ComponentKey: code, Version: "1.0.0"},
		Documentation: Documentation{Path: "tools/" + code, Version: "1.0.0"},
		Operations:    operations,
		Compute:       compute,
	}
}

func noCompute[In, Out any](*Context, In) (Out, error) {
	var out Out
	return out, nil
}

// derive compiles a service of In and Out with the operations named and
// returns its derived schemas, failing the test on a declaration error.
func derive[In, Out any](t *testing.T, names ...string) (input, output map[string]any) {
	t.Helper()
	svc, err := testService("probe", ops(names...), noCompute[In, Out]).compile(true)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return svc.decl.InputSchema, svc.decl.OutputSchema
}

// compact encodes v as encoding/json does (sorted map keys), without HTML
// escapes.
func compact(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(bytes.TrimSpace(buf.Bytes()))
}

// get walks a decoded schema along keys and indices.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("get %v: %T is not an object at %q", path, v, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("get %v: no index %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func equalJSON(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	var g any
	if err := json.Unmarshal([]byte(compact(t, got)), &g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", compact(t, got), compact(t, w))
	}
}

package guesttest

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/wire"
)

func allTexts(name string) map[string]guest.Text {
	t := guest.Text{Name: name, Description: name + " does things."}
	return map[string]guest.Text{"en": t, "it": t, "fr": t, "es": t}
}

func ops(names ...string) []guest.Operation {
	out := make([]guest.Operation, len(names))
	for i, n := range names {
		out[i] = guest.Operation{Name: n, Deterministic: true}
	}
	return out
}

// testService returns a valid service with code and operations.
func testService[In, Out any](code string, operations []guest.Operation, compute func(*guest.Context, In) (Out, error)) *guest.Service[In, Out] {
	return &guest.Service[In, Out]{
		Code: code, Name: "Test " + code, Description: "A test service.",
		Texts:    allTexts(code),
		Category: "dev", IconKey: code,
		UI:            guest.UI{Kind: "custom", ComponentKey: code, Version: "1.0.0"},
		Documentation: guest.Documentation{Path: "tools/" + code, Version: "1.0.0"},
		Operations:    operations,
		Compute:       compute,
	}
}

func noCompute[In, Out any](*guest.Context, In) (Out, error) {
	var out Out
	return out, nil
}

// declare returns the declaration document of one package of services as
// the host decodes it (wire.Decode), failing the test when it is refused.
func declare(t *testing.T, services ...guest.Declaration) any {
	t.Helper()
	b, err := guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: services}.Declaration()
	if err != nil {
		t.Fatalf("Declaration: %v", err)
	}
	return doc(t, string(b))
}

// derive returns the schemas the SDK derives for a service of In and Out
// with the operations named, as the host decodes them.
func derive[In, Out any](t *testing.T, names ...string) (input, output any) {
	t.Helper()
	d := declare(t, testService("probe", ops(names...), noCompute[In, Out]))
	s := get(t, d, "services", 0)
	return get(t, s, "input_schema"), get(t, s, "output_schema")
}

// checkProfile asserts that the schemas pass the real schema profile.
func checkProfile(t *testing.T, input, output any, names ...string) {
	t.Helper()
	if err := schema.Check(input, output, names); err != nil {
		in, _ := json.Marshal(input)
		out, _ := json.Marshal(output)
		t.Fatalf("schema.Check: %v\ninput: %s\noutput: %s", err, in, out)
	}
}

// validator compiles a derived schema with the platform's validator.
func validator(t *testing.T, s any) *schema.Validator {
	t.Helper()
	v, err := schema.Compile(s)
	if err != nil {
		t.Fatalf("schema.Compile: %v", err)
	}
	return v
}

// doc decodes a JSON document as the host does.
func doc(t *testing.T, s string) any {
	t.Helper()
	v, err := wire.Decode([]byte(s), wire.Limits{})
	if err != nil {
		t.Fatalf("wire.Decode(%s): %v", s, err)
	}
	return v
}

// get walks a decoded document along keys and indices.
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

package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

// FuzzCheck checks that the profile check terminates without panicking on
// any decoded JSON value, and that its error stays bounded and well-formed.
// The value is checked as the input schema (with a valid output schema) and
// as both schemas, and, when it is an object with "input" and "output"
// members, as that pair.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{}`, `true`, `null`, `[]`, `"x"`, `1e400`,
		`{"$ref":"#"}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"oneOf":[{"$ref":"#"},{"anyOf":[{"$ref":"#/oneOf/0"}]}]}`,
		`{"type":"object","properties":{"operation":{"$ref":"#/properties/operation"}},"required":["operation"]}`,
		`{"$ref":"#/%7e0/~1/0/-"}`,
		`{"discriminator":{"mapping":{"a":"#/x","b":7,"c":"x.json"}}}`,
		`{"input":{"type":"object"},"output":{"items":[{"$id":"x"}]}}`,
	} {
		f.Add([]byte(s))
	}
	if files, _ := filepath.Glob(filepath.Join(schemaCases, "*.json")); len(files) > 0 {
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	output := map[string]any{"$schema": Dialect, "type": "object", "additionalProperties": false}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := wire.Decode(data, wire.Limits{MaxBytes: 1 << 16, MaxDepth: 2 * MaxDepth})
		if err != nil {
			t.Skip()
		}
		check := func(in, out any, ops []string) {
			err := Check(in, out, ops)
			if err == nil {
				return
			}
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("Check() = %T %v, want a *ProfileError", err, err)
			}
			if len(pe.Violations) == 0 || len(pe.Violations) > MaxViolations || pe.Count < len(pe.Violations) {
				t.Fatalf("%d violations kept of %d", len(pe.Violations), pe.Count)
			}
			for _, vi := range pe.Violations {
				if !strings.HasPrefix(vi.Path, "input") && !strings.HasPrefix(vi.Path, "output") && !strings.HasPrefix(vi.Path, "operations/") {
					t.Fatalf("violation path %q", vi.Path)
				}
			}
		}
		check(v, output, []string{"a"})
		check(v, v, nil)
		check(v, v, []string{"run", "plan", "run"})
		if m, ok := v.(map[string]any); ok {
			if in, ok := m["input_schema"]; ok {
				check(in, m["output_schema"], []string{"run", "value", "plan"})
			}
			if in, ok := m["input"]; ok {
				check(in, m["output"], []string{"a"})
			}
		}
	})
}

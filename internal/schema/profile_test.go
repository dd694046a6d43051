package schema

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

const schemaCases = "../../testdata/schema"

// profileCase is one file of testdata/schema: a schema pair, the declared
// operations and the violations Check must report, sorted by path then
// reason.
type profileCase struct {
	name       string
	input      any
	output     any
	operations []string
	violations []Violation
}

func loadCases(t testing.TB) []profileCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(schemaCases, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema cases in %s: %v", schemaCases, err)
	}
	var cases []profileCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := wire.Decode(data, wire.Limits{MaxDepth: 200})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := v.(map[string]any)
		c := profileCase{
			name:   strings.TrimSuffix(filepath.Base(f), ".json"),
			input:  m["input_schema"],
			output: m["output_schema"],
		}
		for _, op := range m["operations"].([]any) {
			c.operations = append(c.operations, op.(string))
		}
		for _, raw := range m["violations"].([]any) {
			vm := raw.(map[string]any)
			c.violations = append(c.violations, Violation{Reason: Reason(vm["reason"].(string)), Path: vm["path"].(string)})
		}
		cases = append(cases, c)
	}
	return cases
}

func sortViolations(vs []Violation) []Violation {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Reason, b.Reason))
	})
	return vs
}

func TestCheckCases(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.input, tc.output, tc.operations)
			if len(tc.violations) == 0 {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("Check() = %v, want a *ProfileError", err)
			}
			if got := sortViolations(pe.Violations); !reflect.DeepEqual(got, tc.violations) {
				t.Errorf("violations:\n got %v\nwant %v", got, tc.violations)
			}
			if pe.Count != len(tc.violations) {
				t.Errorf("Count = %d, want %d", pe.Count, len(tc.violations))
			}
			for _, v := range tc.violations {
				if !errors.Is(err, v.Reason) {
					t.Errorf("errors.Is(err, %s) = false", v.Reason)
				}
			}
		})
	}
}

// TestCheckCasesCoverEveryReason makes sure testdata/schema holds a case for
// every reason, and a valid case.
func TestCheckCasesCoverEveryReason(t *testing.T) {
	seen := map[Reason]bool{}
	valid := 0
	for _, c := range loadCases(t) {
		if len(c.violations) == 0 {
			valid++
		}
		for _, v := range c.violations {
			seen[v.Reason] = true
		}
	}
	for _, r := range Reasons {
		if !seen[r] {
			t.Errorf("no case in %s reports %s", schemaCases, r)
		}
	}
	if valid < 3 {
		t.Errorf("only %d valid cases", valid)
	}
}

// TestCheckDeterministic runs Check many times: map iteration order must
// not leak into the result.
func TestCheckDeterministic(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			first := Check(tc.input, tc.output, tc.operations)
			for range 20 {
				if got := Check(tc.input, tc.output, tc.operations); !reflect.DeepEqual(got, first) {
					t.Fatalf("Check() varies:\n%v\n%v", got, first)
				}
			}
		})
	}
}

func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := wire.Decode([]byte(s), wire.Limits{MaxDepth: 200})
	if err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

const closedOutput = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"r":{"type":"string"}},"additionalProperties":false}`

func TestCheckBounds(t *testing.T) {
	cyclic := map[string]any{"$schema": Dialect, "type": "object", "additionalProperties": false}
	props := map[string]any{"operation": map[string]any{"const": "a"}, "self": cyclic}
	cyclic["properties"] = props
	cyclic["required"] = []any{"operation"}

	var many strings.Builder
	many.WriteString(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["operation"],"properties":{"operation":{"const":"a"}`)
	for i := range 100 {
		many.WriteString(`,"p` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":{"type":"object"}`)
	}
	many.WriteString(`}}`)

	// Each union member references the whole union: a reference cycle
	// through every member.
	selfUnion := `{"$schema":"https://json-schema.org/draft/2020-12/schema","oneOf":[{"$ref":"#"},{"$ref":"#"}]}`

	tests := []struct {
		name   string
		input  any
		reason Reason
		count  int // 0: do not check
	}{
		{name: "cyclic Go value", input: cyclic, reason: TooDeep},
		{name: "more violations than kept", input: decode(t, many.String()), reason: OpenObject, count: 100},
		{name: "self-referencing union", input: decode(t, selfUnion), reason: RootNotObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.input, decode(t, closedOutput), []string{"a"})
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("Check() = %v, want a *ProfileError", err)
			}
			if !pe.Has(tc.reason) || !errors.Is(err, tc.reason) {
				t.Errorf("Check() = %v, want %s", err, tc.reason)
			}
			if len(pe.Violations) > MaxViolations {
				t.Errorf("kept %d violations, want at most %d", len(pe.Violations), MaxViolations)
			}
			if tc.count != 0 && pe.Count != tc.count {
				t.Errorf("Count = %d, want %d", pe.Count, tc.count)
			}
		})
	}
}

func TestProfileErrorMessage(t *testing.T) {
	err := Check(decode(t, `{"type":"object","properties":{"operation":{"const":"a"}},"required":["operation"]}`), decode(t, closedOutput), []string{"a"})
	const want = "schema profile refused: dialect_missing at input (and 1 more)"
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
	if errors.Is(err, RefNotLocal) {
		t.Errorf("errors.Is(err, RefNotLocal) = true")
	}
}

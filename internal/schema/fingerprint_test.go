package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/fingerprint")

const fingerprintVectors = "../../testdata/fingerprint"

// TestFingerprintGolden checks the vectors in testdata/fingerprint. Each
// holds input_schema, output_schema and operations, the canonical JSON that
// is hashed and the expected fingerprint; -update rewrites the last two.
func TestFingerprintGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fingerprintVectors, "*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 vectors in %s, got %d (%v)", fingerprintVectors, len(files), err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := wire.Decode(data, wire.Limits{MaxDepth: MaxDepth + 2})
			if err != nil {
				t.Fatal(err)
			}
			m := v.(map[string]any)
			var ops []string
			for _, op := range m["operations"].([]any) {
				ops = append(ops, op.(string))
			}
			got, err := Fingerprint(m["input_schema"], m["output_schema"], ops)
			if err != nil {
				t.Fatal(err)
			}
			canonical, err := wire.Encode(map[string]any{
				"input_schema": m["input_schema"], "output_schema": m["output_schema"], "operations": sortedCopy(ops),
			}, wire.Limits{MaxDepth: MaxDepth + 1})
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				m["canonical"] = string(canonical)
				m["fingerprint"] = got
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(m); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if m["canonical"] != string(canonical) {
				t.Errorf("canonical:\n got %s\nwant %s", canonical, m["canonical"])
			}
			if m["fingerprint"] != got {
				t.Errorf("Fingerprint() = %s, want %s", got, m["fingerprint"])
			}
		})
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestFingerprint(t *testing.T) {
	const (
		in       = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"operation":{"enum":["a","b"]},"x":{"type":"number","maximum":1.50}},"required":["operation"],"additionalProperties":false}`
		inSpaced = "{\n  \"required\": [\"operation\"],\n  \"additionalProperties\": false,\n  \"properties\": {\"x\": {\"maximum\": 1.50, \"type\": \"number\"}, \"operation\": {\"enum\": [\"a\", \"b\"]}},\n  \"type\": \"object\",\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\"\n}\n"
		inEscape = `{"$schema":"https:\/\/json-schema.org\/draft\/2020-12\/schema","type":"\u006fbject","properties":{"operation":{"enum":["a","b"]},"x":{"type":"number","maximum":1.50}},"required":["operation"],"additionalProperties":false}`
		inOther  = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"operation":{"enum":["a","b"]},"x":{"type":"number","maximum":1.5}},"required":["operation"],"additionalProperties":false}`
		out      = `{"type":"object","additionalProperties":false}`
	)
	base := mustFingerprint(t, decode(t, in), decode(t, out), []string{"a", "b"})
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(base) {
		t.Fatalf("Fingerprint() = %q, want 64 lower-case hex digits", base)
	}
	tests := []struct {
		name   string
		input  string
		output string
		ops    []string
		same   bool
	}{
		{name: "key order and whitespace", input: inSpaced, output: out, ops: []string{"a", "b"}, same: true},
		{name: "string escapes", input: inEscape, output: out, ops: []string{"a", "b"}, same: true},
		{name: "operations order", input: in, output: out, ops: []string{"b", "a"}, same: true},
		{name: "number literal changed", input: inOther, output: out, ops: []string{"a", "b"}},
		{name: "operation renamed", input: in, output: out, ops: []string{"a", "c"}},
		{name: "operation dropped", input: in, output: out, ops: []string{"a"}},
		{name: "schemas swapped", input: out, output: in, ops: []string{"a", "b"}},
		{name: "output changed", input: in, output: `{"type":"object","additionalProperties":true}`, ops: []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustFingerprint(t, decode(t, tc.input), decode(t, tc.output), tc.ops)
			if (got == base) != tc.same {
				t.Errorf("Fingerprint() = %s, base %s, want same=%v", got, base, tc.same)
			}
		})
	}
}

func mustFingerprint(t *testing.T, in, out any, ops []string) string {
	t.Helper()
	fp, err := Fingerprint(in, out, ops)
	if err != nil {
		t.Fatalf("Fingerprint() error: %v", err)
	}
	return fp
}

func TestFingerprintRefuses(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name  string
		input any
	}{
		{name: "cyclic value", input: cyclic},
		{name: "no JSON form", input: map[string]any{"f": func() {}}},
		{name: "invalid number", input: json.Number("01")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if fp, err := Fingerprint(tc.input, map[string]any{}, nil); err == nil {
				t.Errorf("Fingerprint() = %s, want an error", fp)
			}
		})
	}
}

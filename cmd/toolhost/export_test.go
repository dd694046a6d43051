package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/wire"
)

// TestExportSchemaManifest: export writes seed 000's build-time schema
// manifest beside the runtime OpenAPI document, named for what it is: an
// OpenAPI 3.1 document with paths {}, one entry per (tool_code,
// contract_version) with its fingerprint (which the entry's own schemas
// reproduce), operations, ui kind, component key and UI version, and
// schema roots whose every reference resolves in the document (issue 16,
// item 24).
func TestExportSchemaManifest(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := run([]string{"export", "--out", out, "--tools-dir", t.TempDir(), "--cache-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("export: %d %s", code, stderr.String())
	}
	for _, name := range []string{"tools.json", "openapi.json", catalog.ManifestFile} {
		if !strings.Contains(stdout.String(), filepath.Join(out, name)) {
			t.Errorf("export did not report %s: %s", name, stdout.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(out, catalog.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	v, err := wire.Decode(b, wire.Limits{MaxDepth: 256})
	if err != nil {
		t.Fatalf("the manifest is not strict JSON: %v", err)
	}
	doc := v.(map[string]any)
	if doc["openapi"] != "3.1.0" || len(doc["paths"].(map[string]any)) != 0 {
		t.Fatalf("openapi %v with paths %v, want 3.1.0 and none", doc["openapi"], doc["paths"])
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	body := doc["x-tool-manifest"].(map[string]any)
	entries := body["services"].([]any)
	if body["version"] != catalog.ManifestVersion || len(entries) < 3 {
		t.Fatalf("manifest %v with %d entries", body["version"], len(entries))
	}
	seen := map[string]bool{}
	var pac map[string]any
	for _, e := range entries {
		m := e.(map[string]any)
		id := m["tool_code"].(string) + "@" + m["contract_version"].(string)
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
		if _, ok := m["implementation_version"]; ok {
			t.Errorf("%s: the manifest keys on contract versions, not implementation_version", id)
		}
		var ops []string
		for _, o := range m["operations"].([]any) {
			ops = append(ops, o.(string))
		}
		var roots [2]any
		for i, side := range []string{"validation_schema", "serialization_schema"} {
			ref := m[side].(map[string]any)["$ref"].(string)
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if _, ok := schemas[name]; !ok {
				t.Fatalf("%s: %s root %s is not in components", id, side, ref)
			}
			roots[i] = reassemble(schemas, name)
		}
		// The lifted schemas put back together are the registry's own:
		// they give the entry's fingerprint.
		fp, err := schema.Fingerprint(roots[0], roots[1], ops)
		if err != nil || fp != m["schema_fingerprint"] {
			t.Errorf("%s: fingerprint %v, the reassembled schemas give %s (%v)", id, m["schema_fingerprint"], fp, err)
		}
		if m["tool_code"] == "pac_allocator" {
			pac = m
		}
	}
	if pac == nil {
		t.Fatal("no pac_allocator entry")
	}
	if ui := pac["ui"].(map[string]any); ui["kind"] != "custom" || ui["component_key"] != "pac-allocator" || ui["version"] == "" {
		t.Errorf("pac_allocator ui %v", ui)
	}
	// Every reference of the components resolves inside the document.
	var walk func(v any)
	walk = func(v any) {
		switch t2 := v.(type) {
		case map[string]any:
			if ref, ok := t2["$ref"].(string); ok {
				if !resolves(doc, ref) {
					t.Errorf("unresolved $ref %s", ref)
				}
			}
			for _, e := range t2 {
				walk(e)
			}
		case []any:
			for _, e := range t2 {
				walk(e)
			}
		}
	}
	walk(doc["components"])
	walk(entries)
}

// reassemble is the schema root name of components put back as one
// document: the components "<name>.<def>" under $defs, references to them
// (and to the root) local again, the dialect declared.
func reassemble(schemas map[string]any, name string) any {
	prefix := "#/components/schemas/" + name
	var back func(v any) any
	back = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range t {
				if s, ok := e.(string); ok && (k == "$ref" || strings.HasPrefix(s, prefix)) {
					switch {
					case s == prefix:
						e = "#"
					case strings.HasPrefix(s, prefix+"."):
						e = "#/$defs/" + strings.TrimPrefix(s, prefix+".")
					case strings.HasPrefix(s, prefix+"/"):
						e = "#" + strings.TrimPrefix(s, prefix)
					}
					out[k] = e
					continue
				}
				out[k] = back(e)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = back(e)
			}
			return out
		}
		return v
	}
	root := back(schemas[name]).(map[string]any)
	defs := map[string]any{}
	for k, v := range schemas {
		if def, ok := strings.CutPrefix(k, name+"."); ok {
			defs[def] = back(v)
		}
	}
	if len(defs) > 0 {
		root["$defs"] = defs
	}
	root["$schema"] = schema.Dialect
	return root
}

// resolves reports whether the local JSON pointer ref names a value of doc.
func resolves(doc map[string]any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	var cur any = doc
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[seg]; !ok {
			return false
		}
	}
	return true
}

package catalog_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/wire"
)

// The OpenAPI document of the real tools: every tool with a run API has
// its run operation, every local $ref resolves, every contract $ref names
// a served contract, and every embedded input schema compiles on its own.
func TestOpenAPI(t *testing.T) {
	snap := realSnapshot(t)
	doc := catalog.OpenAPI(snap, "1.2.3")
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := wire.Decode(raw, wire.Limits{MaxDepth: 256})
	if err != nil {
		t.Fatal(err)
	}
	root := v.(map[string]any)
	if root["openapi"] != catalog.OpenAPIVersion || root["info"].(map[string]any)["version"] != "1.2.3" {
		t.Errorf("header %v %v", root["openapi"], root["info"])
	}
	paths := root["paths"].(map[string]any)
	components := root["components"].(map[string]any)["schemas"].(map[string]any)
	for _, tool := range catalog.List(snap).Tools {
		if !tool.API {
			continue
		}
		if paths[contracts.RunEndpoint(tool.ID)] == nil {
			t.Errorf("%s: no run operation", tool.ID)
		}
		in, ok := components[tool.ID+".input"]
		if !ok {
			t.Errorf("%s: no input schema component", tool.ID)
			continue
		}
		if _, err := schema.Compile(in); err != nil {
			t.Errorf("%s: the embedded input schema does not compile: %v", tool.ID, err)
		}
	}
	var walk func(any)
	refs := 0
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				refs++
				switch {
				case strings.HasPrefix(ref, "#/components/schemas/"):
					if components[strings.TrimPrefix(ref, "#/components/schemas/")] == nil {
						t.Errorf("dangling $ref %s", ref)
					}
				case strings.HasPrefix(ref, contracts.Route):
					name, _, _ := strings.Cut(strings.TrimPrefix(ref, contracts.Route), ".json")
					if _, ok := contracts.Raw(name); !ok {
						t.Errorf("$ref %s names no contract", ref)
					}
				case strings.HasPrefix(ref, "#/$defs/"):
					// Inside an embedded schema, which has its own $id.
				default:
					t.Errorf("unexpected $ref %s", ref)
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(root["paths"])
	if refs == 0 {
		t.Fatal("no $ref walked")
	}
}

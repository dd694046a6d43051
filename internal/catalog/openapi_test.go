package catalog_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/schema"
)

// openAPIJSON is the OpenAPI document of the real tools, as served.
func openAPIJSON(t *testing.T) []byte {
	t.Helper()
	raw, err := json.Marshal(catalog.OpenAPI(realSnapshot(t), "1.2.3", catalog.Cookies{}))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The OpenAPI document of the real tools passes kin-openapi's loader and
// validator with no external reference allowed; every schema is
// self-contained in components (no $id, $defs or reference outside the
// document left, issue 16 item 25), every tool with a run API has its run
// operation with its input and output schemas, every lifted input schema
// still compiles on its own, and the routes of every surface are there.
func TestOpenAPI(t *testing.T) {
	raw := openAPIJSON(t)
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi validation: %v", err)
	}
	if doc.OpenAPI != catalog.OpenAPIVersion || doc.Info.Version != "1.2.3" {
		t.Errorf("header %s %s", doc.OpenAPI, doc.Info.Version)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	components := root["components"].(map[string]any)["schemas"].(map[string]any)
	for _, tool := range catalog.List(realSnapshot(t)).Tools {
		if !tool.API {
			continue
		}
		op := doc.Paths.Value(contracts.RunEndpoint(tool.ID))
		if op == nil || op.Post == nil {
			t.Errorf("%s: no run operation", tool.ID)
			continue
		}
		for _, part := range []string{".input", ".output"} {
			if components[tool.ID+part] == nil {
				t.Errorf("%s: no %s schema component", tool.ID, part)
			}
		}
		if _, err := schema.Compile(inlined(components, tool.ID+".input")); err != nil {
			t.Errorf("%s: the lifted input schema does not compile: %v", tool.ID, err)
		}
	}
	for _, path := range []string{
		"/api/v1/tools", "/api/v1/tools/{id}", "/api/v1/tools/{id}/schema", contracts.Route + "{name}",
		"/api/v1/jobs", "/api/v1/jobs/{id}", "/api/v1/jobs/{id}/events", "/api/v1/jobs/{id}/files/{name}",
		"/api/v1/jobs/{id}/retry", "/api/v1/jobs/{id}/cancel",
		"/api/v1/tools/catalog", "/api/v1/tools/compute", "/api/v1/tools/diagnostics",
		"/healthz", "/readyz", "/openapi.json", "/api/dev/hash/digest", "/api/v1/auth/session",
	} {
		if doc.Paths.Value(path) == nil {
			t.Errorf("no path %s", path)
		}
	}
	for _, st := range []string{"401", "403", "413", "415", "422", "429", "503"} {
		r := doc.Components.Responses[st]
		if r == nil || r.Value.Content.Get("application/problem+json") == nil {
			t.Errorf("no %s problem answer", st)
		}
	}
	if h := doc.Components.Responses["429"].Value.Headers; h["Retry-After"] == nil || h["RateLimit"] == nil {
		t.Errorf("429 headers %v", h)
	}
	if doc.Components.Responses["401"].Value.Headers["WWW-Authenticate"] == nil {
		t.Error("401 without WWW-Authenticate")
	}
	for _, path := range []string{"/api/v1/tools", "/api/v1/tools/{id}", "/openapi.json"} {
		if g := doc.Paths.Value(path).Get; g.Responses.Status(304) == nil || g.Responses.Status(200).Value.Headers["ETag"] == nil {
			t.Errorf("GET %s: no 304 or no ETag", path)
		}
	}
	if len(doc.Components.SecuritySchemes) < 2 {
		t.Errorf("security schemes %v", doc.Components.SecuritySchemes)
	}
	var walk func(string, any)
	walk = func(at string, n any) {
		switch n := n.(type) {
		case map[string]any:
			for _, k := range []string{"$id", "$defs", "$schema"} {
				if _, ok := n[k]; ok {
					t.Errorf("%s keeps %s", at, k)
				}
			}
			if ref, ok := n["$ref"].(string); ok && !strings.HasPrefix(ref, "#/components/") {
				t.Errorf("%s: $ref %s outside the document's components", at, ref)
			}
			for k, c := range n {
				walk(at+"/"+k, c)
			}
		case []any:
			for _, c := range n {
				walk(at+"/[]", c)
			}
		}
	}
	walk("", root)
}

// inlined returns component name as a standalone schema: the components
// it references gathered under $defs with the references pointed there.
func inlined(components map[string]any, name string) any {
	raw, _ := json.Marshal(components[name])
	s := strings.ReplaceAll(string(raw), `"#/components/schemas/`, `"#/$defs/`)
	var out map[string]any
	_ = json.Unmarshal([]byte(s), &out)
	defs := map[string]any{}
	for k, v := range components {
		if strings.HasPrefix(k, name+".") {
			b, _ := json.Marshal(v)
			var d any
			_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), `"#/components/schemas/`, `"#/$defs/`)), &d)
			defs[k] = d
		}
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	out["$schema"] = schema.Dialect
	return out
}

// npmTools returns the folder of the npm packages the tooling test runs
// (make openapi-npm installs them), or skips: outside CI when node or the
// packages are missing, with a message; under CI=true it fails instead.
func npmTools(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/openapi")
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else {
		for _, bin := range []string{"redocly", "openapi-typescript", "tsc"} {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", bin)); err != nil {
				missing = bin + " is not installed (make openapi-npm)"
				break
			}
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: the OpenAPI tooling test cannot run", missing)
		}
		t.Skipf("%s: the OpenAPI tooling test is skipped", missing)
	}
	return dir
}

// The OpenAPI document passes the mainstream npm tooling (issue 16 item
// 25): redocly lint finds no error, openapi-typescript generates its
// types, and a small client that lists the tools and runs hash on them
// type-checks with tsc --noEmit.
func TestOpenAPITooling(t *testing.T) {
	npm := npmTools(t)
	work := t.TempDir()
	spec := filepath.Join(work, "openapi.json")
	if err := os.WriteFile(spec, openAPIJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"client.ts", "tsconfig.json", "redocly.yaml"} {
		b, err := os.ReadFile(filepath.Join(npm, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := func(name string) string { return filepath.Join(npm, "node_modules", ".bin", name) }
	steps := []struct {
		name string
		args []string
	}{
		{"redocly lint", []string{bin("redocly"), "lint", "--config", filepath.Join(work, "redocly.yaml"), spec}},
		{"openapi-typescript", []string{bin("openapi-typescript"), spec, "-o", filepath.Join(work, "api.d.ts")}},
		{"tsc", []string{bin("tsc"), "--noEmit", "-p", filepath.Join(work, "tsconfig.json")}},
	}
	for _, s := range steps {
		cmd := exec.Command(s.args[0], s.args[1:]...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.name, err, out)
		}
		t.Logf("%s:\n%s", s.name, out)
	}
}

// hasDiscriminator reports whether the JSON value n holds a discriminator
// keyword anywhere (a property named so would count too: none is).
func hasDiscriminator(n any) bool {
	switch n := n.(type) {
	case map[string]any:
		if _, ok := n["discriminator"]; ok {
			return true
		}
		for _, c := range n {
			if hasDiscriminator(c) {
				return true
			}
		}
	case []any:
		for _, c := range n {
			if hasDiscriminator(c) {
				return true
			}
		}
	}
	return false
}

// The discriminator keyword is OpenAPI's: the descriptors' schemas and the
// schema document (JSON Schema 2020-12, which ajv's strict mode holds to)
// do not carry it, the OpenAPI document does, its mapping pointing at the
// lifted components (issue 16 item 26). The operation unions of the
// bundled tools declare one, so the check is not vacuous.
func TestDiscriminatorOnlyInOpenAPI(t *testing.T) {
	snap := realSnapshot(t)
	declared := 0
	for _, svc := range snap.Services() {
		if hasDiscriminator(svc.Definition.InputSchema) || hasDiscriminator(svc.Definition.OutputSchema) {
			declared++
		}
		d := catalog.Tool(svc)
		if hasDiscriminator(d.Input) || hasDiscriminator(d.Output.Schema) {
			t.Errorf("%s: the descriptor's schemas keep a discriminator", svc.Definition.ToolCode)
		}
		if hasDiscriminator(catalog.Schema(svc).Defs) {
			t.Errorf("%s: the schema document keeps a discriminator", svc.Definition.ToolCode)
		}
	}
	if declared == 0 {
		t.Fatal("no tool declares a discriminator")
	}
	doc := catalog.OpenAPI(snap, "1", catalog.Cookies{})
	in := doc.Components.Schemas["json.input"]
	if in == nil || in.Value.Discriminator == nil || in.Value.Discriminator.PropertyName != "operation" {
		t.Fatalf("json.input in the OpenAPI document: no discriminator: %+v", in)
	}
	if got := in.Value.Discriminator.Mapping["format"].Ref; got != "#/components/schemas/json.input.format" {
		t.Errorf("the discriminator maps format to %q", got)
	}
}

package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/engines/pac"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/internal/wire"
)

// noRunner stands in for the supervisor: these tests never run an item.
type noRunner struct{}

func (noRunner) Run(context.Context, engine.Job) (*engine.Outcome, error) {
	return nil, errors.New("catalog tests run nothing")
}

// bundled are the bundled WASM tool packages of plugins-src.
var bundled = []string{"codec", "markup", "text"}

// openRegistry opens a static registry over the given tools folder (""
// for none) and the native packages, each with the missing engines
// missing(p) says, and returns its snapshot.
func openRegistry(t *testing.T, dir string, missing func(name string) []string) *registry.Snapshot {
	t.Helper()
	ctx := context.Background()
	cfg := registry.Config{Platform: policy.DefaultPlatform(), Static: true, Settle: 10 * time.Millisecond}
	for _, p := range engines.Packages() {
		cfg.Builtins = append(cfg.Builtins, registry.Builtin{Name: p.Name, Declaration: p.Declaration,
			Runner: noRunner{}, MissingEngines: missing(p.Name)})
	}
	if dir != "" {
		rt, err := host.NewRuntime(ctx, host.Config{CacheDir: testkit.CacheDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		if cfg.Loader, err = wasmtool.NewLoader(rt, wasmtool.Config{Platform: cfg.Platform}); err != nil {
			t.Fatal(err)
		}
		cfg.Dir = dir
	}
	r, err := registry.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	s := r.Snapshot()
	if f := s.Failures(); len(f) > 0 {
		t.Fatalf("registration failures: %+v", f)
	}
	return s
}

// realSnapshot is the registry of the real tools: the bundled modules,
// built for wasip1, and the native packages with the engines this host
// lacks.
func realSnapshot(t *testing.T) *registry.Snapshot {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the bundled WASM modules: skipped with -short")
	}
	dir := t.TempDir()
	for _, name := range bundled {
		data, err := os.ReadFile(testkit.GoPath(t, "plugins-src/"+name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := map[string][]string{}
	for _, p := range engines.Packages() {
		missing[p.Name] = p.MissingEngines()
	}
	return openRegistry(t, dir, func(name string) []string { return missing[name] })
}

// checkTool checks one descriptor as ADR-027's registry test does.
func checkTool(t *testing.T, d contracts.Tool) {
	t.Helper()
	if err := contracts.Validate(contracts.ToolV1, d); err != nil {
		t.Errorf("%s: tools.tool@1: %v", d.ID, err)
	}
	if fs := contractstest.CheckDescriptor(d); len(fs) > 0 {
		t.Errorf("%s: checkDescriptor: %v", d.ID, fs)
	}
}

// checkList checks a list and that each of its $refs resolves, in the
// schema document of its tool, to the schema the descriptor embeds.
func checkList(t *testing.T, s *registry.Snapshot) contracts.ToolList {
	t.Helper()
	l := catalog.List(s)
	if err := contracts.Validate(contracts.ToolListV1, l); err != nil {
		t.Errorf("tools.tool-list@1: %v", err)
	}
	if fs := contractstest.CheckList(l); len(fs) > 0 {
		t.Errorf("checkList: %v", fs)
	}
	if l.Count != len(s.Services()) {
		t.Errorf("count %d, %d services", l.Count, len(s.Services()))
	}
	for _, listed := range l.Tools {
		svc, ok := s.Service(listed.ID)
		if !ok {
			t.Fatalf("listed %s is not in the snapshot", listed.ID)
		}
		doc := roundTrip(t, catalog.Schema(svc))
		full := catalog.Tool(svc)
		for _, ref := range []struct {
			ref      any
			embedded any
			which    string
		}{
			{listed.Input, full.Input, contracts.SchemaInput},
			{listed.Output.Schema, full.Output.Schema, contracts.SchemaOutput},
		} {
			r := ref.ref.(contracts.Ref).Ref
			path, pointer, _ := strings.Cut(r, "#")
			if path != contracts.SchemaEndpoint(listed.ID) {
				t.Errorf("%s: $ref %s names another document", listed.ID, r)
			}
			got := resolve(t, doc, pointer)
			want := roundTrip(t, ref.embedded).(map[string]any)
			want["$id"] = contracts.SchemaEndpoint(listed.ID) + "/" + ref.which
			if !reflect.DeepEqual(got, any(want)) {
				t.Errorf("%s: $ref %s resolves to another schema", listed.ID, r)
			}
		}
		// Listed and embedded descriptors differ in their schemas alone.
		full.Input, full.Output.Schema = listed.Input, listed.Output.Schema
		if !reflect.DeepEqual(roundTrip(t, full), roundTrip(t, listed)) {
			t.Errorf("%s: the listed descriptor is not the embedded one", listed.ID)
		}
	}
	return l
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := wire.Decode(b, wire.Limits{MaxDepth: 128})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resolve follows a JSON pointer of object names.
func resolve(t *testing.T, doc any, pointer string) any {
	t.Helper()
	v := doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("pointer %s does not resolve", pointer)
		}
		if v, ok = m[tok]; !ok {
			t.Fatalf("pointer %s does not resolve at %s", pointer, tok)
		}
	}
	return v
}

// Every tool of the real bundled modules and native packages has a
// descriptor that passes tools.tool@1 and checkDescriptor; their list
// passes checkList and its $refs resolve.
func TestRealTools(t *testing.T) {
	s := realSnapshot(t)
	byID := map[string]contracts.Tool{}
	for _, svc := range s.Services() {
		d := catalog.Tool(svc)
		checkTool(t, d)
		byID[d.ID] = d
		if strings.HasSuffix(svc.Source, ".wasm") {
			// ADR-027: browser transforms with a server engine.
			if d.Execution != contracts.ExecutionClient || !d.API || d.Egress || d.QuotaClass != "tools-run" || d.Cost != 1 {
				t.Errorf("%s: %+v, want a client transform in the API", d.ID, d)
			}
		}
	}
	for _, id := range []string{"base64", "hash", "json", "slug", "pac_allocator", "pdf_protect", "pdf_to_image"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("no descriptor for %s (have %v)", id, slices.Sorted(func(yield func(string) bool) {
				for k := range byID {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
	if pac := byID["pac_allocator"]; pac.Execution != contracts.ExecutionSync || pac.QuotaClass != "tools-solve" || pac.Cost <= 1 ||
		pac.Run == nil || pac.Run.Job != nil || len(pac.Limits.Operations) != 2 {
		t.Errorf("pac_allocator: %+v", pac)
	}
	for _, id := range []string{"pdf_protect", "pdf_to_image"} {
		d := byID[id]
		if d.Execution != contracts.ExecutionJob || d.Run == nil || d.Run.Job == nil || d.Run.Job.Type != "pdf" ||
			!d.Output.Files || d.Auth.Anonymous || len(d.Files) != 1 || d.Files[0].Types[0] != "application/pdf" {
			t.Errorf("%s: %+v", id, d)
		}
	}
	// Every catalogue id has a descriptor.
	l := checkList(t, s)
	c := catalog.Build(policy.DefaultPlatform(), s)
	for _, item := range c.Items {
		if _, ok := byID[item.ToolCode]; !ok {
			t.Errorf("catalogue item %s has no descriptor", item.ToolCode)
		}
	}
	for _, u := range c.Unavailable {
		if _, ok := byID[u.ToolCode]; !ok && u.Reason != catalog.UnavailableRegistration {
			t.Errorf("unavailable %s has no descriptor", u.ToolCode)
		}
	}
	if l.Count != len(c.Items)+len(c.Unavailable) {
		t.Errorf("list of %d, catalogue of %d + %d", l.Count, len(c.Items), len(c.Unavailable))
	}
}

// A native package whose engines are missing is listed unavailable with
// the engines as its reason, and its descriptors still pass.
func TestEngineMissing(t *testing.T) {
	s := openRegistry(t, "", func(name string) []string {
		if name == "pdf" {
			return []string{"qpdf", "pdftoppm"}
		}
		return nil
	})
	for _, svc := range s.Services() {
		d := catalog.Tool(svc)
		checkTool(t, d)
		switch {
		case strings.HasPrefix(d.ID, "pdf_"):
			if d.Status != contracts.StatusUnavailable || d.StatusReason != "engine_missing: qpdf, pdftoppm" {
				t.Errorf("%s: status %q, reason %q", d.ID, d.Status, d.StatusReason)
			}
		default:
			if d.Status != contracts.StatusStable || d.StatusReason != "" {
				t.Errorf("%s: status %q, reason %q", d.ID, d.Status, d.StatusReason)
			}
		}
	}
	checkList(t, s)
}

// pageOnly is the yt fixture: a page-only tool (api false, run null).
func pageOnly(t *testing.T) *registry.Service {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "engines", "pages", "yt.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := tooldef.Decode(data, tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def := pkg.Services[0].Definition
	if def == nil {
		t.Fatalf("yt refused: %v", pkg.Services[0].Refusal)
	}
	return &registry.Service{Definition: def, Effective: effective(t, policy.DefaultPlatform(), def), Source: "builtin/pages"}
}

func TestPageOnly(t *testing.T) {
	yt := pageOnly(t)
	d := catalog.Tool(yt)
	checkTool(t, d)
	if d.API || d.Run != nil || d.Execution != contracts.ExecutionJob || !d.Output.Files || !d.Egress || d.Auth.Anonymous {
		t.Errorf("yt: %+v", d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"run":null`) {
		t.Errorf("run is not null: %s", b)
	}
	// Listed beside a runnable tool: the hosts are the union.
	p := policy.DefaultPlatform()
	a := allocator(t)
	s := registry.NewSnapshot(1, []*registry.Service{yt, {Definition: a, Effective: effective(t, p, a), Source: "allocator.wasm"}}, nil)
	l := checkList(t, s)
	if !slices.Equal(l.Hosts, []string{"www.youtube.com"}) || l.Count != 2 || l.Tools[0].ID != "allocator" {
		t.Errorf("list %+v", l)
	}
}

// A service whose policy cannot be clamped has no effective limits: it is
// unavailable with the platform code as its reason.
func TestPolicyUnavailable(t *testing.T) {
	a := allocator(t)
	svc := &registry.Service{Definition: a, Source: "a.wasm", Unavailable: toolerr.New(toolerr.InvalidOperationPolicy)}
	d := catalog.Tool(svc)
	checkTool(t, d)
	if d.Status != contracts.StatusUnavailable || d.StatusReason != "invalid_operation_policy" || len(d.Limits.Operations) != 0 {
		t.Errorf("%+v", d)
	}
}

// The schema document compiles as one compound document: each embedded
// schema's local references resolve inside it, and it validates as the
// tool's own schema does (pac_allocator's schemas are unions under $defs).
func TestSchemaDocument(t *testing.T) {
	pkg, err := tooldef.Decode(pac.Package().Declaration, tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def := pkg.Services[0].Definition
	svc := &registry.Service{Definition: def, Effective: effective(t, policy.DefaultPlatform(), def), Source: "builtin/pac_allocator"}
	doc := catalog.Schema(svc)
	if doc.Schema != schema.Dialect || doc.ID != "/api/v1/tools/pac_allocator/schema" || len(doc.Defs) != 2 {
		t.Fatalf("document %+v", doc)
	}
	if _, has := def.InputSchema.(map[string]any)["$id"]; has {
		t.Fatal("Schema wrote into the definition's schema")
	}
	for _, tt := range []struct {
		which, file string
	}{
		{contracts.SchemaInput, "plan.params.json"},
		{contracts.SchemaOutput, "plan.result.json"},
	} {
		t.Run(tt.which, func(t *testing.T) {
			root := roundTrip(t, doc).(map[string]any)
			root["$ref"] = "#/$defs/" + tt.which
			v, err := schema.Compile(root)
			if err != nil {
				t.Fatalf("compiling the schema document: %v", err)
			}
			data, err := os.ReadFile(filepath.Join(testkit.Root(), "internal", "engines", "pac", "testdata", "examples", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			example, err := wire.Decode(data, wire.Limits{MaxDepth: 64})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(example, toolerr.InvalidParameters); err != nil {
				t.Errorf("the example fails the document's %s: %v", tt.which, err)
			}
			if err := v.Validate(map[string]any{"operation": "plan", "unknown": true}, toolerr.InvalidParameters); err == nil {
				t.Errorf("the document's %s accepts anything", tt.which)
			}
		})
	}
}

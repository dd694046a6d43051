package tooldef_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/wire"
)

const fixture = "../../testdata/declarations/allocator.json"

// base returns the fixture declaration decoded, for tests to mutate.
func base(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	v, err := wire.Decode(data, wire.Limits{MaxDepth: 64})
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func service(doc map[string]any) map[string]any {
	return doc["services"].([]any)[0].(map[string]any)
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := wire.Encode(v, wire.Limits{MaxDepth: 64})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeValid(t *testing.T) {
	p, err := tooldef.Decode(encode(t, base(t)), tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Services) != 1 || p.Services[0].Refusal != nil {
		t.Fatalf("services %+v", p.Services)
	}
	d := p.Services[0].Definition
	if d.ToolCode != "allocator" || d.ContractVersion != "1.0.0" || d.ImplementationVersion != "1.2.0" {
		t.Errorf("definition %+v", d)
	}
	if got := strings.Join(d.OperationNames(), ","); got != "value,plan" {
		t.Errorf("operations %s", got)
	}
	plan := d.Operations[1].Policy
	if plan.MaxParameterBytes != 262144 || plan.QueueTimeoutMS != 5000 {
		t.Errorf("plan policy %+v: declared values and model defaults", plan)
	}
	want, err := schema.Fingerprint(d.InputSchema, d.OutputSchema, []string{"value", "plan"})
	if err != nil || d.Fingerprint != want || len(d.Fingerprint) != 64 {
		t.Errorf("fingerprint %q, want %q (%v)", d.Fingerprint, want, err)
	}
	if d.I18n["fr"].Name != "Allocateur" {
		t.Errorf("i18n %+v", d.I18n)
	}
}

func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(doc, svc map[string]any)
		raw     string // used instead of the mutated fixture when set
		reason  tooldef.Reason
		path    string
		service bool // the refusal is the service's, not the package's
	}{
		{name: "not JSON", raw: `{"contract_version":`, reason: tooldef.NotJSON},
		{name: "duplicate key", raw: `{"contract_version":"1.0.0","contract_version":"1.0.0"}`, reason: tooldef.NotJSON},
		{name: "top level not an object", raw: `[]`, reason: tooldef.BadShape},
		{name: "unknown top-level field", mutate: func(doc, _ map[string]any) { doc["fingerprint"] = "x" }, reason: tooldef.BadShape, path: "/fingerprint"},
		{name: "contract version not semver", mutate: func(doc, _ map[string]any) { doc["contract_version"] = "1.0" }, reason: tooldef.BadVersion, path: "/contract_version"},
		{name: "implementation version missing", mutate: func(doc, _ map[string]any) { delete(doc, "implementation_version") }, reason: tooldef.BadShape, path: "/implementation_version"},
		{name: "no services", mutate: func(doc, _ map[string]any) { doc["services"] = []any{} }, reason: tooldef.ServiceCount},
		{name: "seventeen services", mutate: func(doc, svc map[string]any) {
			s := make([]any, 17)
			for i := range s {
				s[i] = svc
			}
			doc["services"] = s
		}, reason: tooldef.ServiceCount},
		{name: "bad tool code", mutate: func(_, svc map[string]any) { svc["tool_code"] = "Allocator" }, reason: tooldef.BadToolCode, service: true, path: "/services/0/tool_code"},
		{name: "tool code too long", mutate: func(_, svc map[string]any) { svc["tool_code"] = strings.Repeat("a", 65) }, reason: tooldef.BadToolCode, service: true},
		{name: "route word", mutate: func(_, svc map[string]any) { svc["tool_code"] = "catalog" }, reason: tooldef.BadToolCode, service: true},
		{name: "unknown service field", mutate: func(_, svc map[string]any) { svc["schema_fingerprint"] = "x" }, reason: tooldef.BadShape, service: true, path: "/services/0/schema_fingerprint"},
		{name: "empty name", mutate: func(_, svc map[string]any) { svc["name"] = " " }, reason: tooldef.MissingText, service: true},
		{name: "missing language", mutate: func(_, svc map[string]any) { delete(svc["i18n"].(map[string]any), "es") }, reason: tooldef.BadShape, service: true, path: "/services/0/i18n/es"},
		{name: "extra language", mutate: func(_, svc map[string]any) {
			svc["i18n"].(map[string]any)["de"] = map[string]any{"name": "x", "description": "y"}
		}, reason: tooldef.BadI18n, service: true},
		{name: "empty translation", mutate: func(_, svc map[string]any) {
			svc["i18n"].(map[string]any)["it"] = map[string]any{"name": "", "description": "y"}
		}, reason: tooldef.BadI18n, service: true, path: "/services/0/i18n/it"},
		{name: "empty i18n key", mutate: func(_, svc map[string]any) { svc["name_i18n_key"] = "" }, reason: tooldef.BadI18n, service: true},
		{name: "bad category", mutate: func(_, svc map[string]any) { svc["category"] = "Finance" }, reason: tooldef.BadIdentifier, service: true},
		{name: "ui kind", mutate: func(_, svc map[string]any) { svc["ui"].(map[string]any)["kind"] = "generic" }, reason: tooldef.BadUI, service: true},
		// A component key names a compiled renderer, never a module URL
		// or a path (issue 16, item 21).
		{name: "component key URL", mutate: func(_, svc map[string]any) {
			svc["ui"].(map[string]any)["component_key"] = "https://evil.example/x.js"
		}, reason: tooldef.BadUI, service: true, path: "/services/0/ui/component_key"},
		{name: "component key path", mutate: func(_, svc map[string]any) { svc["ui"].(map[string]any)["component_key"] = "../x" }, reason: tooldef.BadUI, service: true},
		{name: "component key upper case", mutate: func(_, svc map[string]any) { svc["ui"].(map[string]any)["component_key"] = "PacAllocator" }, reason: tooldef.BadUI, service: true},
		{name: "component key too long", mutate: func(_, svc map[string]any) {
			svc["ui"].(map[string]any)["component_key"] = strings.Repeat("a", 65)
		}, reason: tooldef.BadUI, service: true},
		{name: "ui version", mutate: func(_, svc map[string]any) { svc["ui"].(map[string]any)["version"] = "v1" }, reason: tooldef.BadVersion, service: true},
		{name: "documentation path absolute", mutate: func(_, svc map[string]any) { svc["documentation"].(map[string]any)["path"] = "/tools/x" }, reason: tooldef.BadDocumentation, service: true},
		{name: "documentation path mkdocs", mutate: func(_, svc map[string]any) { svc["documentation"].(map[string]any)["path"] = "mkdocs/tools" }, reason: tooldef.BadDocumentation, service: true},
		{name: "documentation path language", mutate: func(_, svc map[string]any) { svc["documentation"].(map[string]any)["path"] = "it/tools" }, reason: tooldef.BadDocumentation, service: true},
		{name: "documentation path dot dot", mutate: func(_, svc map[string]any) { svc["documentation"].(map[string]any)["path"] = "tools/../x" }, reason: tooldef.BadDocumentation, service: true},
		{name: "documentation path query", mutate: func(_, svc map[string]any) { svc["documentation"].(map[string]any)["path"] = "tools/x?y=1" }, reason: tooldef.BadDocumentation, service: true},
		{name: "no operations", mutate: func(_, svc map[string]any) { svc["operations"] = []any{} }, reason: tooldef.BadOperation, service: true},
		{name: "impure operation", mutate: func(_, svc map[string]any) {
			svc["operations"].([]any)[0].(map[string]any)["pure"] = false
		}, reason: tooldef.BadOperation, service: true, path: "/services/0/operations/0/pure"},
		{name: "operation declared twice", mutate: func(_, svc map[string]any) {
			ops := svc["operations"].([]any)
			svc["operations"] = append(ops, ops[0])
		}, reason: tooldef.BadOperation, service: true},
		{name: "operation the schema lacks", mutate: func(_, svc map[string]any) {
			svc["operations"] = append(svc["operations"].([]any), map[string]any{"operation": "rebalance"})
		}, reason: tooldef.SchemaProfile, service: true},
		{name: "open input object", mutate: func(_, svc map[string]any) {
			delete(svc["input_schema"].(map[string]any)["$defs"].(map[string]any)["Holding"].(map[string]any), "additionalProperties")
		}, reason: tooldef.SchemaProfile, service: true},
		{name: "export outside a sidecar", mutate: func(_, svc map[string]any) {
			svc["operations"].([]any)[0].(map[string]any)["export"] = "value"
		}, reason: tooldef.BadOperation, service: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.raw)
			if tt.raw == "" {
				doc := base(t)
				tt.mutate(doc, service(doc))
				data = encode(t, doc)
			}
			p, err := tooldef.Decode(data, tooldef.Options{})
			if !tt.service {
				var r *tooldef.Refusal
				if !errors.As(err, &r) || r.Reason != tt.reason || (tt.path != "" && r.Path != tt.path) {
					t.Fatalf("Decode = %v; want package refusal %s at %q", err, tt.reason, tt.path)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode = %v; want a service refusal", err)
			}
			r := p.Services[0].Refusal
			if r == nil || r.Reason != tt.reason || (tt.path != "" && r.Path != tt.path) {
				t.Fatalf("service refusal = %v; want %s at %q", r, tt.reason, tt.path)
			}
			if !errors.Is(r, tooldef.ErrRefused) {
				t.Error("refusal does not match ErrRefused")
			}
		})
	}
}

// One bad service is refused alone; a code declared twice refuses both.
func TestSiblingsAndDuplicates(t *testing.T) {
	doc := base(t)
	good := service(doc)
	bad := map[string]any{}
	for k, v := range good {
		bad[k] = v
	}
	bad["tool_code"] = "broken"
	bad["category"] = "Not A Code"
	doc["services"] = []any{good, bad}
	p, err := tooldef.Decode(encode(t, doc), tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Services[0].Definition == nil || p.Services[1].Refusal == nil || p.Services[1].ToolCode != "broken" {
		t.Fatalf("services %+v", p.Services)
	}
	doc["services"] = []any{good, good}
	p, err = tooldef.Decode(encode(t, doc), tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range p.Services {
		if s.Refusal == nil || s.Refusal.Reason != tooldef.DuplicateToolCode {
			t.Errorf("service %d: %+v, want duplicate refusal", i, s)
		}
	}
}

func TestSidecarExports(t *testing.T) {
	doc := base(t)
	ops := service(doc)["operations"].([]any)
	ops[0].(map[string]any)["export"] = "value_fn"
	ops[1].(map[string]any)["export"] = "plan_fn"
	p, err := tooldef.Decode(encode(t, doc), tooldef.Options{Sidecar: true})
	if err != nil || p.Services[0].Definition == nil {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
	if got := p.Services[0].Definition.Operations[1].Export; got != "plan_fn" {
		t.Errorf("export %q", got)
	}
	delete(ops[1].(map[string]any), "export")
	p, _ = tooldef.Decode(encode(t, doc), tooldef.Options{Sidecar: true})
	if r := p.Services[0].Refusal; r == nil || r.Reason != tooldef.BadExport {
		t.Errorf("missing export: %v", r)
	}
}

func TestValidDocumentationPath(t *testing.T) {
	for path, want := range map[string]bool{
		"tools/json": true, "tools/json/": true, "a": true, "guides/pac-allocator_v2": true,
		"": false, "/": false, "/tools": false, "tools//json": false, "tools/json.md": false,
		"mkdocs/x": false, "en/tools": false, "es": false, "tools/%2e%2e": false, "https://x/y": false, "tools#x": false,
	} {
		if got := tooldef.ValidDocumentationPath(path); got != want {
			t.Errorf("ValidDocumentationPath(%q) = %v, want %v", path, got, want)
		}
	}
}

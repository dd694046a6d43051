package tooldef_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/wire"
)

// sidecarFixture is the vowels plugin's sidecar: read, never written.
const sidecarFixture = "../../testdata/extism/vowels/vowels.tool.json"

// sidecarBase returns a sidecar for tests to mutate: the vowels sidecar
// with its operation's mappings removed, so that each test sets its own.
func sidecarBase(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(sidecarFixture)
	if err != nil {
		t.Fatal(err)
	}
	v, err := wire.Decode(data, wire.Limits{MaxDepth: 64})
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	op := operation0(doc)
	delete(op, "input")
	delete(op, "output")
	delete(service(doc), "extism")
	delete(doc, "extism")
	return doc
}

func operation0(doc map[string]any) map[string]any {
	return service(doc)["operations"].([]any)[0].(map[string]any)
}

// textOutput gives the service an output schema of one required string
// field, message, and optionally more required fields.
func textOutput(doc map[string]any, more ...string) {
	props := map[string]any{"message": map[string]any{"type": "string"}}
	req := []any{"message"}
	for _, m := range more {
		props[m] = map[string]any{"type": "integer"}
		req = append(req, m)
	}
	service(doc)["output_schema"] = map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object", "additionalProperties": false, "required": req, "properties": props,
	}
}

func TestSidecarMappings(t *testing.T) {
	tests := []struct {
		name          string
		mutate        func(doc, op map[string]any)
		input, output tooldef.Mapping
	}{
		{name: "defaults", mutate: func(_, _ map[string]any) {},
			input: tooldef.Mapping{Kind: tooldef.MapJSON}, output: tooldef.Mapping{Kind: tooldef.MapJSON}},
		{name: "json spelled out", mutate: func(_, op map[string]any) { op["input"], op["output"] = "json", "json" },
			input: tooldef.Mapping{Kind: tooldef.MapJSON}, output: tooldef.Mapping{Kind: tooldef.MapJSON}},
		{name: "text in", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"text": "text"} },
			input: tooldef.Mapping{Kind: tooldef.MapText, Field: "text"}, output: tooldef.Mapping{Kind: tooldef.MapJSON}},
		{name: "base64 in", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"base64": "text"} },
			input: tooldef.Mapping{Kind: tooldef.MapBase64, Field: "text"}, output: tooldef.Mapping{Kind: tooldef.MapJSON}},
		{name: "text out", mutate: func(doc, op map[string]any) {
			textOutput(doc)
			op["input"], op["output"] = map[string]any{"text": "text"}, map[string]any{"text": "message"}
		}, input: tooldef.Mapping{Kind: tooldef.MapText, Field: "text"}, output: tooldef.Mapping{Kind: tooldef.MapText, Field: "message"}},
		{name: "base64 out", mutate: func(doc, op map[string]any) {
			textOutput(doc)
			op["output"] = map[string]any{"base64": "message"}
		}, input: tooldef.Mapping{Kind: tooldef.MapJSON}, output: tooldef.Mapping{Kind: tooldef.MapBase64, Field: "message"}},
		{name: "none in", mutate: func(doc, op map[string]any) {
			in := service(doc)["input_schema"].(map[string]any)
			delete(in["properties"].(map[string]any), "text")
			in["required"] = []any{"operation"}
			op["input"] = "none"
		}, input: tooldef.Mapping{Kind: tooldef.MapNone}, output: tooldef.Mapping{Kind: tooldef.MapJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := sidecarBase(t)
			tt.mutate(doc, operation0(doc))
			p, err := tooldef.Decode(encode(t, doc), tooldef.Options{Sidecar: true})
			if err != nil {
				t.Fatal(err)
			}
			s := p.Services[0]
			if s.Refusal != nil {
				t.Fatal(s.Refusal)
			}
			if op := s.Definition.Operations[0]; op.Input != tt.input || op.Output != tt.output {
				t.Errorf("mappings %+v → %+v, want %+v → %+v", op.Input, op.Output, tt.input, tt.output)
			}
		})
	}
}

// Every sidecar refusal names its field: the path points at it and, for
// an unknown member, the detail names the member.
func TestSidecarRefusals(t *testing.T) {
	const op0 = "/services/0/operations/0"
	manyKeys := map[string]any{}
	for i := range tooldef.MaxConfigKeys + 1 {
		manyKeys[fmt.Sprint("k", i)] = "v"
	}
	tests := []struct {
		name    string
		mutate  func(doc, op map[string]any)
		reason  tooldef.Reason
		path    string
		detail  string // a part of the detail, when set
		service bool   // the refusal is the service's, not the package's
	}{
		{name: "text field the input schema lacks", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"text": "body"} },
			reason: tooldef.BadMapping, path: op0 + "/input/text", detail: `no string property "body"`, service: true},
		{name: "base64 field that is not a string", mutate: func(doc, op map[string]any) {
			props := service(doc)["input_schema"].(map[string]any)["properties"].(map[string]any)
			props["text"] = map[string]any{"type": "integer"}
			op["input"] = map[string]any{"base64": "text"}
		}, reason: tooldef.BadMapping, path: op0 + "/input/base64", detail: `no string property "text"`, service: true},
		{name: "text field not required", mutate: func(doc, op map[string]any) {
			service(doc)["input_schema"].(map[string]any)["required"] = []any{"operation"}
			op["input"] = map[string]any{"text": "text"}
		}, reason: tooldef.BadMapping, path: op0 + "/input/text", detail: "not required", service: true},
		{name: "input properties the text mapping drops", mutate: func(doc, op map[string]any) {
			props := service(doc)["input_schema"].(map[string]any)["properties"].(map[string]any)
			props["lang"] = map[string]any{"type": "string"}
			op["input"] = map[string]any{"text": "text"}
		}, reason: tooldef.BadMapping, path: op0 + "/input/text", detail: `property "lang"`, service: true},
		{name: "none with input properties", mutate: func(_, op map[string]any) { op["input"] = "none" },
			reason: tooldef.BadMapping, path: op0 + "/input", detail: `property "text"`, service: true},
		{name: "input of no known form", mutate: func(_, op map[string]any) { op["input"] = "yaml" },
			reason: tooldef.BadMapping, path: op0 + "/input", service: true},
		{name: "input of two forms", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"text": "text", "base64": "text"} },
			reason: tooldef.BadMapping, path: op0 + "/input", service: true},
		{name: "input of an unknown object form", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"txt": "text"} },
			reason: tooldef.BadMapping, path: op0 + "/input/txt", detail: `"txt"`, service: true},
		{name: "input naming operation", mutate: func(_, op map[string]any) { op["input"] = map[string]any{"text": "operation"} },
			reason: tooldef.BadMapping, path: op0 + "/input/text", service: true},
		{name: "output none", mutate: func(_, op map[string]any) { op["output"] = "none" },
			reason: tooldef.BadMapping, path: op0 + "/output", service: true},
		{name: "output field the schema lacks", mutate: func(_, op map[string]any) { op["output"] = map[string]any{"text": "body"} },
			reason: tooldef.BadMapping, path: op0 + "/output/text", detail: `no property "body"`, service: true},
		{name: "output field not a string", mutate: func(_, op map[string]any) { op["output"] = map[string]any{"text": "count"} },
			reason: tooldef.BadMapping, path: op0 + "/output/text", detail: `"count" is not a string`, service: true},
		{name: "output requiring fields the mapping never fills", mutate: func(doc, op map[string]any) {
			textOutput(doc, "length")
			op["output"] = map[string]any{"base64": "message"}
		}, reason: tooldef.BadMapping, path: op0 + "/output/base64", detail: `requires "length"`, service: true},

		{name: "config value not a string", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"config": map[string]any{"n": 1}}
		}, reason: tooldef.BadShape, path: "/extism/config/n"},
		{name: "config value too long", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"config": map[string]any{"k": strings.Repeat("v", tooldef.MaxConfigValueBytes+1)}}
		}, reason: tooldef.BadExtism, path: "/extism/config/k", detail: "4097 bytes"},
		{name: "config key empty", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"config": map[string]any{"": "v"}}
		}, reason: tooldef.BadExtism, path: "/extism/config/"},
		{name: "too many config keys", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"config": manyKeys}
		}, reason: tooldef.BadExtism, path: "/extism/config"},
		{name: "too many config keys with the package's", mutate: func(doc, _ map[string]any) {
			pkg := map[string]any{}
			for k, v := range manyKeys {
				if k != "k0" {
					pkg[k] = v
				}
			}
			doc["extism"] = map[string]any{"config": pkg}
			service(doc)["extism"] = map[string]any{"config": map[string]any{"k0": "v", "extra": "v"}}
		}, reason: tooldef.BadExtism, path: "/services/0/extism/config", service: true},
		{name: "max_pages over the memory limit", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"memory": map[string]any{"max_pages": 20000}}
		}, reason: tooldef.BadExtism, path: "/extism/memory/max_pages", detail: "max_pages 20000 (1310720000 bytes) is over operation \"count\"'s memory_limit_bytes 1073741824", service: true},
		{name: "service max_pages over a declared memory limit", mutate: func(doc, op map[string]any) {
			op["memory_limit_bytes"] = 1 << 20
			service(doc)["extism"] = map[string]any{"memory": map[string]any{"max_pages": 17}}
		}, reason: tooldef.BadExtism, path: "/services/0/extism/memory/max_pages", detail: "1114112 bytes", service: true},
		{name: "max_pages zero", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"memory": map[string]any{"max_pages": 0}}
		}, reason: tooldef.BadExtism, path: "/extism/memory/max_pages"},
		{name: "max_pages missing", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"memory": map[string]any{}}
		}, reason: tooldef.BadShape, path: "/extism/memory/max_pages"},
		{name: "timeout past the hard deadline", mutate: func(doc, _ map[string]any) {
			service(doc)["extism"] = map[string]any{"timeout_ms": 6000}
		}, reason: tooldef.BadExtism, path: "/services/0/extism/timeout_ms", detail: "timeout_ms 6000 is past operation \"count\"'s hard_timeout_ms 5000", service: true},
		{name: "timeout not positive", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"timeout_ms": -1}
		}, reason: tooldef.BadExtism, path: "/extism/timeout_ms"},
		{name: "allowed_hosts", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"allowed_hosts": []any{"example.com"}}
		}, reason: tooldef.ExtismUnsupported, path: "/extism/allowed_hosts", detail: "declare no allowed_hosts"},
		{name: "service allowed_paths", mutate: func(doc, _ map[string]any) {
			service(doc)["extism"] = map[string]any{"allowed_paths": map[string]any{"/data": "/data"}}
		}, reason: tooldef.ExtismUnsupported, path: "/services/0/extism/allowed_paths", detail: "file-system", service: true},
		{name: "egress", mutate: func(doc, _ map[string]any) {
			service(doc)["platform"] = map[string]any{"execution": "sync", "egress": true, "anonymous": false}
		}, reason: tooldef.ExtismUnsupported, path: "/services/0/platform/egress", detail: "no HTTP functions", service: true},
		{name: "egress with hosts", mutate: func(doc, _ map[string]any) {
			service(doc)["platform"] = map[string]any{"execution": "sync", "egress": true, "anonymous": false, "hosts": []any{"example.com"}}
		}, reason: tooldef.ExtismUnsupported, path: "/services/0/platform/egress", service: true},

		{name: "unknown top-level key", mutate: func(doc, _ map[string]any) { doc["wasm"] = []any{} },
			reason: tooldef.BadShape, path: "/wasm", detail: `unknown field "wasm"`},
		{name: "unknown extism key", mutate: func(doc, _ map[string]any) {
			doc["extism"] = map[string]any{"memory": map[string]any{"max_pages": 4, "max_var_bytes": 1}}
		}, reason: tooldef.BadShape, path: "/extism/memory/max_var_bytes", detail: `unknown field "max_var_bytes"`},
		{name: "unknown service key", mutate: func(doc, _ map[string]any) { service(doc)["extsm"] = map[string]any{} },
			reason: tooldef.BadShape, path: "/services/0/extsm", detail: `unknown field "extsm"`, service: true},
		{name: "unknown service extism key", mutate: func(doc, _ map[string]any) { service(doc)["extism"] = map[string]any{"confg": map[string]any{}} },
			reason: tooldef.BadShape, path: "/services/0/extism/confg", detail: `unknown field "confg"`, service: true},
		{name: "unknown operation key", mutate: func(_, op map[string]any) { op["inputs"] = "json" },
			reason: tooldef.BadOperation, path: op0 + "/inputs", detail: `unknown field "inputs"`, service: true},
		{name: "unknown schema-free key quoted and cut", mutate: func(doc, _ map[string]any) { doc[strings.Repeat("é", 40)] = 1 },
			reason: tooldef.BadShape, detail: `"` + strings.Repeat("é", 32) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := sidecarBase(t)
			tt.mutate(doc, operation0(doc))
			p, err := tooldef.Decode(encode(t, doc), tooldef.Options{Sidecar: true})
			var r *tooldef.Refusal
			if tt.service {
				if err != nil {
					t.Fatalf("Decode = %v; want a service refusal", err)
				}
				r = p.Services[0].Refusal
			} else if !errors.As(err, &r) {
				t.Fatalf("Decode = %+v, %v; want a package refusal", p, err)
			}
			if r == nil || r.Reason != tt.reason || (tt.path != "" && r.Path != tt.path) || !strings.Contains(r.Detail, tt.detail) {
				t.Fatalf("refusal %v; want %s at %q with %q", r, tt.reason, tt.path, tt.detail)
			}
		})
	}
}

// Config reaches each service as the package's keys with the service's
// over them; memory and timeout_ms of a service replace the package's.
func TestSidecarExtism(t *testing.T) {
	doc := sidecarBase(t)
	doc["extism"] = map[string]any{
		"config":        map[string]any{"greeting": "hello", "lang": "en"},
		"memory":        map[string]any{"max_pages": 16},
		"timeout_ms":    2000,
		"allowed_hosts": []any{}, "allowed_paths": map[string]any{}, // declaring nothing is no request
	}
	second := map[string]any{}
	for k, v := range service(doc) {
		second[k] = v
	}
	second["tool_code"] = "vowels_it"
	second["extism"] = map[string]any{"config": map[string]any{"greeting": "ciao"}, "timeout_ms": 100}
	doc["services"] = append(doc["services"].([]any), second)
	p, err := tooldef.Decode(encode(t, doc), tooldef.Options{Sidecar: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []tooldef.Extism{
		{Config: map[string]string{"greeting": "hello", "lang": "en"}, MaxPages: 16, TimeoutMS: 2000},
		{Config: map[string]string{"greeting": "ciao", "lang": "en"}, MaxPages: 16, TimeoutMS: 100},
	}
	for i, s := range p.Services {
		if s.Refusal != nil {
			t.Fatalf("service %d: %v", i, s.Refusal)
		}
		if got := s.Definition.Extism; fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Errorf("service %d: extism %+v, want %+v", i, got, want[i])
		}
	}
	// Without a block there is no config: config_get finds every key absent.
	p, err = tooldef.Decode(encode(t, sidecarBase(t)), tooldef.Options{Sidecar: true})
	if err != nil || p.Services[0].Definition.Extism.Config != nil {
		t.Errorf("no block: %+v, %v", p.Services[0].Definition.Extism, err)
	}
}

// A describe declaration has no sidecar members: each is an unknown
// member, named.
func TestSidecarMembersOutsideASidecar(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(doc, op map[string]any)
		path   string
	}{
		{name: "package extism", mutate: func(doc, _ map[string]any) { doc["extism"] = map[string]any{} }, path: "/extism"},
		{name: "service extism", mutate: func(doc, _ map[string]any) { service(doc)["extism"] = map[string]any{} }, path: "/services/0/extism"},
		{name: "input mapping", mutate: func(_, op map[string]any) { op["input"] = "json" }, path: "/services/0/operations/0/input"},
		{name: "output mapping", mutate: func(_, op map[string]any) { op["output"] = "json" }, path: "/services/0/operations/0/output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := sidecarBase(t)
			op := operation0(doc)
			delete(op, "export")
			tt.mutate(doc, op)
			p, err := tooldef.Decode(encode(t, doc), tooldef.Options{})
			var r *tooldef.Refusal
			if !errors.As(err, &r) {
				r = p.Services[0].Refusal
			}
			if r == nil || r.Path != tt.path || !strings.Contains(r.Detail, "unknown field") {
				t.Fatalf("refusal %v; want an unknown field at %s", r, tt.path)
			}
		})
	}
}

// Mappings are checked against the input object of their own operation
// when the input schema is a union of one object per operation, through
// its $refs.
func TestSidecarMappingsPerOperation(t *testing.T) {
	opObject := func(op, field string) map[string]any {
		return map[string]any{
			"type": "object", "additionalProperties": false, "required": []any{"operation", field},
			"properties": map[string]any{
				"operation": map[string]any{"type": "string", "const": op},
				field:       map[string]any{"$ref": "#/$defs/payload"},
			},
		}
	}
	build := func(aField string) []byte {
		doc := sidecarBase(t)
		svc := service(doc)
		svc["input_schema"] = map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"oneOf":   []any{map[string]any{"$ref": "#/$defs/a"}, map[string]any{"$ref": "#/$defs/b"}},
			"discriminator": map[string]any{"propertyName": "operation",
				"mapping": map[string]any{"a": "#/$defs/a", "b": "#/$defs/b"}},
			"$defs": map[string]any{"a": opObject("a", "text"), "b": opObject("b", "data"),
				"payload": map[string]any{"type": "string"}},
		}
		textOutput(doc)
		svc["operations"] = []any{
			map[string]any{"operation": "a", "export": "fa", "input": map[string]any{"text": aField}, "output": map[string]any{"text": "message"}},
			map[string]any{"operation": "b", "export": "fb", "input": map[string]any{"base64": "data"}, "output": map[string]any{"base64": "message"}},
		}
		return encode(t, doc)
	}
	p, err := tooldef.Decode(build("text"), tooldef.Options{Sidecar: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Services[0].Refusal; r != nil {
		t.Fatal(r)
	}
	p, err = tooldef.Decode(build("data"), tooldef.Options{Sidecar: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Services[0].Refusal; r == nil || r.Reason != tooldef.BadMapping || r.Path != "/services/0/operations/0/input/text" {
		t.Fatalf("refusal %v: operation a has no data", r)
	}
}

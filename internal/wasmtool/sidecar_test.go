package wasmtool_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/internal/wire"
)

// plugin returns the bytes of testdata/plugin.wat, a plain Extism plugin
// with one export per behaviour (echo, greet, fail, badutf8, spin, grow).
func plugin(t testing.TB) []byte {
	t.Helper()
	path, err := testkit.CompileWAT("testdata/plugin.wat")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// object is a closed object schema with the given required string
// properties, the optional ones in opt (name → schema).
func object(required []string, opt map[string]any) map[string]any {
	props := map[string]any{}
	req := []any{}
	for _, r := range required {
		props[r] = map[string]any{"type": "string"}
		req = append(req, r)
	}
	for k, v := range opt {
		props[k] = v
	}
	return map[string]any{"type": "object", "additionalProperties": false, "required": req, "properties": props}
}

// inputSchema is the input schema of the one operation "run" with the
// given required string parameters and optional ones.
func inputSchema(required []string, opt map[string]any) map[string]any {
	s := object(append([]string{"operation"}, required...), opt)
	s["properties"].(map[string]any)["operation"] = map[string]any{"type": "string", "const": "run"}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return s
}

func outputSchema(required []string, opt map[string]any) map[string]any {
	s := object(required, opt)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return s
}

// pluginService is a sidecar service code whose operation "run" (with
// the policy members in op, export and mappings included) has the given
// schemas.
func pluginService(code string, op map[string]any, in, out map[string]any) map[string]any {
	op["operation"] = "run"
	texts := map[string]any{}
	for _, lang := range tooldef.Languages {
		texts[lang] = map[string]any{"name": "Plugin", "description": "A plain Extism plugin."}
	}
	return map[string]any{
		"tool_code": code, "name": "Plugin", "description": "A plain Extism plugin.", "i18n": texts,
		"category": "dev", "icon_key": "plugin",
		"ui":            map[string]any{"kind": "custom", "component_key": "plugin", "version": "1.0.0"},
		"documentation": map[string]any{"path": "tools/plugin", "version": "1.0.0"},
		"operations":    []any{op}, "input_schema": in, "output_schema": out,
	}
}

// sidecar is the manifest of the services, with the package's extism
// block when it is not nil.
func sidecar(t testing.TB, extism map[string]any, services ...map[string]any) []byte {
	t.Helper()
	doc := map[string]any{"contract_version": "1.0.0", "implementation_version": "1.0.0"}
	list := make([]any, len(services))
	for i, s := range services {
		list[i] = s
	}
	doc["services"] = list
	if extism != nil {
		doc["extism"] = extism
	}
	b, err := wire.Encode(doc, wire.Limits{MaxDepth: 64})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadPlugin loads testdata/plugin.wat with the manifest and fails the
// test on any refusal, its services' included.
func loadPlugin(t *testing.T, manifest []byte) *wasmtool.Tool {
	t.Helper()
	tool, err := newLoader(t).Load(context.Background(), plugin(t), manifest)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tool.Close(context.Background()) })
	for _, s := range tool.Services() {
		if s.Refusal != nil || s.Unavailable != nil {
			t.Fatalf("service %s: %v %v", s.ToolCode, s.Refusal, s.Unavailable)
		}
	}
	return tool
}

func wantError(t *testing.T, err error, code toolerr.Code, path ...string) *toolerr.Error {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	if path != nil && (len(te.Issues) != 1 || !equal(te.Issues[0].Path, path)) {
		t.Fatalf("issues %+v, want one at %v", te.Issues, path)
	}
	return te
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Each mapping gives the plugin the bytes an Extism host would, and makes
// a result the output schema validates.
func TestSidecarMappings(t *testing.T) {
	limited := inputSchema([]string{"text"}, nil)
	limited["properties"].(map[string]any)["text"] = map[string]any{"type": "string", "maxLength": 3}
	tests := []struct {
		name          string
		export        string
		input, output any // nil: the default
		in, out       map[string]any
		params        string
		want          string       // the result, when the item succeeds
		code          toolerr.Code // the error, otherwise
		path          []string     // its one issue's path, when set
	}{
		{name: "json in, json out: the parameters without operation, canonical", export: "echo",
			in:     inputSchema([]string{"text"}, map[string]any{"n": map[string]any{"type": "integer"}}),
			out:    outputSchema([]string{"text"}, map[string]any{"n": map[string]any{"type": "integer"}}),
			params: `{"text": "h\u00e9llo", "operation": "run", "n": 2}`, want: `{"n":2,"text":"héllo"}`},
		{name: "json spelled out", export: "echo", input: "json", output: "json",
			in: inputSchema([]string{"text"}, nil), out: outputSchema([]string{"text"}, nil),
			params: `{"operation":"run","text":"x"}`, want: `{"text":"x"}`},
		{name: "text in, text out", export: "echo", input: map[string]any{"text": "text"}, output: map[string]any{"text": "message"},
			in: inputSchema([]string{"text"}, nil), out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run","text":"Hello, wörld"}`, want: `{"message":"Hello, wörld"}`},
		{name: "base64 in, text out", export: "echo", input: map[string]any{"base64": "data"}, output: map[string]any{"text": "message"},
			in: inputSchema([]string{"data"}, nil), out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run","data":"aGk="}`, want: `{"message":"hi"}`},
		{name: "base64 that does not decode", export: "echo", input: map[string]any{"base64": "data"}, output: map[string]any{"text": "message"},
			in: inputSchema([]string{"data"}, nil), out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run","data":"aGk"}`, code: toolerr.InvalidParameters, path: []string{"data"}},
		{name: "text in, base64 out", export: "echo", input: map[string]any{"text": "text"}, output: map[string]any{"base64": "data"},
			in: inputSchema([]string{"text"}, nil), out: outputSchema([]string{"data"}, nil),
			params: `{"operation":"run","text":"hi"}`, want: `{"data":"aGk="}`},
		{name: "none in: empty input", export: "echo", input: "none", output: map[string]any{"text": "message"},
			in: inputSchema(nil, nil), out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run"}`, want: `{"message":""}`},
		{name: "text out that is not UTF-8", export: "badutf8", input: "none", output: map[string]any{"text": "message"},
			in: inputSchema(nil, nil), out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run"}`, code: toolerr.InvalidOutput, path: []string{"message"}},
		{name: "base64 out of any bytes", export: "badutf8", input: "none", output: map[string]any{"base64": "data"},
			in: inputSchema(nil, nil), out: outputSchema([]string{"data"}, nil),
			params: `{"operation":"run"}`, want: `{"data":"//4="}`},
		{name: "json out that is not JSON", export: "echo", input: map[string]any{"text": "text"},
			in: inputSchema([]string{"text"}, nil), out: outputSchema([]string{"text"}, nil),
			params: `{"operation":"run","text":"plain"}`, code: toolerr.InvalidOutput},
		{name: "json out that is not an object", export: "echo", input: map[string]any{"text": "text"},
			in: inputSchema([]string{"text"}, nil), out: outputSchema([]string{"text"}, nil),
			params: `{"operation":"run","text":"[1]"}`, code: toolerr.InvalidOutput},
		{name: "text out the output schema refuses", export: "echo", input: map[string]any{"text": "text"}, output: map[string]any{"text": "message"},
			in: inputSchema([]string{"text"}, nil), out: outputSchema(nil, map[string]any{"message": map[string]any{"type": "string", "maxLength": 3}}),
			params: `{"operation":"run","text":"too long"}`, code: toolerr.InvalidOutput},
		{name: "the input schema still validates", export: "echo", input: map[string]any{"text": "text"}, output: map[string]any{"text": "message"},
			in: limited, out: outputSchema([]string{"message"}, nil),
			params: `{"operation":"run","text":"too long"}`, code: toolerr.InvalidParameters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := map[string]any{"export": tt.export}
			if tt.input != nil {
				op["input"] = tt.input
			}
			if tt.output != nil {
				op["output"] = tt.output
			}
			manifest := sidecar(t, nil, pluginService("plugin", op, tt.in, tt.out))
			tool, err := newLoader(t).Load(context.Background(), plugin(t), manifest)
			if err != nil {
				t.Fatal(err)
			}
			defer tool.Close(context.Background())
			if s := tool.Services()[0]; s.Refusal != nil {
				t.Fatal(s.Refusal)
			}
			run := func(checked bool) {
				var out *wasmtool.Outcome
				var err error
				if checked {
					out, err = tool.RunChecked(context.Background(), "plugin", "run", []byte(tt.params), wasmtool.Deadlines{})
				} else {
					out, err = tool.Run(context.Background(), "plugin", []byte(tt.params), wasmtool.Deadlines{})
				}
				if tt.code != "" {
					wantError(t, err, tt.code, tt.path...)
					return
				}
				if err != nil || string(out.Result) != tt.want {
					t.Fatalf("Run(checked %v) = %+v, %v; want %s", checked, out, err, tt.want)
				}
				if out.Export != tt.export {
					t.Errorf("export %q", out.Export)
				}
			}
			run(false)
			if tt.code != toolerr.InvalidParameters { // RunChecked trusts its caller's validation
				run(true)
			}
		})
	}
}

// A mapping or an extism block the schemas or the operations refuse
// refuses the service, or the module, at load, naming the field.
func TestSidecarLoadRefusals(t *testing.T) {
	in, out := inputSchema([]string{"text"}, nil), outputSchema([]string{"message"}, nil)
	l := newLoader(t)
	for _, tt := range []struct {
		name   string
		op     map[string]any
		extism map[string]any
		reason tooldef.Reason
		path   string
	}{
		{name: "text field the input schema lacks", op: map[string]any{"export": "echo", "input": map[string]any{"text": "body"}, "output": map[string]any{"text": "message"}},
			reason: tooldef.BadMapping, path: "/services/0/operations/0/input/text"},
		{name: "output field the output schema lacks", op: map[string]any{"export": "echo", "input": map[string]any{"text": "text"}, "output": map[string]any{"text": "body"}},
			reason: tooldef.BadMapping, path: "/services/0/operations/0/output/text"},
		{name: "max_pages over the memory limit", op: map[string]any{"export": "echo", "input": map[string]any{"text": "text"}, "output": map[string]any{"text": "message"}, "memory_limit_bytes": 1 << 20},
			extism: map[string]any{"memory": map[string]any{"max_pages": 32}}, reason: tooldef.BadExtism, path: "/extism/memory/max_pages"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := l.Load(context.Background(), plugin(t), sidecar(t, tt.extism, pluginService("plugin", tt.op, in, out)))
			if err != nil {
				t.Fatal(err)
			}
			defer tool.Close(context.Background())
			if r := tool.Services()[0].Refusal; r == nil || r.Reason != tt.reason || r.Path != tt.path {
				t.Fatalf("refusal %v, want %s at %s", r, tt.reason, tt.path)
			}
		})
	}
	// allowed_hosts refuses the package: the module.
	op := map[string]any{"export": "echo", "input": map[string]any{"text": "text"}, "output": map[string]any{"text": "message"}}
	_, err := l.Load(context.Background(), plugin(t), sidecar(t, map[string]any{"allowed_hosts": []any{"example.com"}}, pluginService("plugin", op, in, out)))
	wantReason(t, err, wasmtool.DeclarationRefused, string(tooldef.ExtismUnsupported))
}

// config_get reads the package's config with the service's over it, key
// by key; without config every key is absent.
func TestSidecarConfig(t *testing.T) {
	in, out := inputSchema(nil, nil), outputSchema([]string{"message"}, nil)
	greet := func() map[string]any {
		return map[string]any{"export": "greet", "input": "none", "output": map[string]any{"text": "message"}}
	}
	en := pluginService("greet_en", greet(), in, out)
	it := pluginService("greet_it", greet(), in, out)
	it["extism"] = map[string]any{"config": map[string]any{"greeting": "ciao"}}
	other := pluginService("greet_other", greet(), in, out)
	other["extism"] = map[string]any{"config": map[string]any{"farewell": "bye"}}
	tool := loadPlugin(t, sidecar(t, map[string]any{"config": map[string]any{"greeting": "hello"}}, en, it, other))
	bare := loadPlugin(t, sidecar(t, nil, pluginService("greet_none", greet(), in, out)))
	for _, tt := range []struct {
		tool *wasmtool.Tool
		code string
		want string
	}{
		{tool, "greet_en", `{"message":"hello"}`},
		{tool, "greet_it", `{"message":"ciao"}`},
		{tool, "greet_other", `{"message":"hello"}`},
		{bare, "greet_none", `{"message":""}`},
	} {
		out, err := tt.tool.Run(context.Background(), tt.code, []byte(`{"operation":"run"}`), wasmtool.Deadlines{})
		if err != nil || string(out.Result) != tt.want {
			t.Errorf("%s: %+v, %v; want %s", tt.code, out, err, tt.want)
		}
	}
}

// memory.max_pages caps the item's memory below the operation's limit.
func TestSidecarMaxPages(t *testing.T) {
	in, out := inputSchema(nil, nil), outputSchema([]string{"message"}, nil)
	grow := func() map[string]any {
		return map[string]any{"export": "grow", "input": "none", "output": map[string]any{"text": "message"}}
	}
	capped := pluginService("capped", grow(), in, out)
	capped["extism"] = map[string]any{"memory": map[string]any{"max_pages": 16}}
	tool := loadPlugin(t, sidecar(t, nil, capped, pluginService("uncapped", grow(), in, out)))
	if out, err := tool.Run(context.Background(), "uncapped", []byte(`{"operation":"run"}`), wasmtool.Deadlines{}); err != nil {
		t.Fatalf("uncapped: %+v, %v", out, err)
	}
	_, err := tool.Run(context.Background(), "capped", []byte(`{"operation":"run"}`), wasmtool.Deadlines{})
	wantError(t, err, toolerr.MemoryLimit)
}

// timeout_ms shortens the item's hard deadline: a plugin that spins
// under a one-minute operation deadline is stopped at its manifest's.
func TestSidecarTimeout(t *testing.T) {
	in, out := inputSchema(nil, nil), outputSchema([]string{"message"}, nil)
	svc := pluginService("spin", map[string]any{"export": "spin", "input": "none", "output": map[string]any{"text": "message"},
		"hard_timeout_ms": 60_000, "request_timeout_ms": 90_000, "client_timeout_ms": 100_000}, in, out)
	svc["extism"] = map[string]any{"timeout_ms": 100}
	tool := loadPlugin(t, sidecar(t, nil, svc))
	if eff, _ := tool.Services()[0].Effective("run"); eff.HardTimeoutMS <= 1_000 {
		t.Fatalf("the operation's hard deadline is %d ms: the test needs a long one", eff.HardTimeoutMS)
	}
	err := within(t, 30*time.Second, "a plugin past its timeout_ms", func() error {
		_, err := tool.Run(context.Background(), "spin", []byte(`{"operation":"run"}`), wasmtool.Deadlines{})
		return err
	})
	wantError(t, err, toolerr.ExecutionTimeout)
}

// A plugin's plain-text error is the tool's own execution_failed: its
// text is the message, and the Outcome keeps the whole text for the log.
func TestSidecarPluginError(t *testing.T) {
	in, out := inputSchema(nil, nil), outputSchema([]string{"message"}, nil)
	tool := loadPlugin(t, sidecar(t, nil, pluginService("failing",
		map[string]any{"export": "fail", "input": "none", "output": map[string]any{"text": "message"}}, in, out)))
	res, err := tool.Run(context.Background(), "failing", []byte(`{"operation":"run"}`), wasmtool.Deadlines{})
	te := wantError(t, err, toolerr.ExecutionFailed)
	if te.Message != "the plugin says no" || te.Retryable {
		t.Errorf("error %+v: want the plugin's text as the message, not retryable", te)
	}
	if res == nil || res.PluginError != "the plugin says no" || res.Export != "fail" {
		t.Errorf("outcome %+v: want the plugin's text and export for the log", res)
	}
}

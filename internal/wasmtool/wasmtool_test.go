package wasmtool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

func newLoader(t testing.TB) *wasmtool.Loader {
	t.Helper()
	rt, err := host.NewRuntime(context.Background(), host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform(), DescribeTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLoadRefusals(t *testing.T) {
	l := newLoader(t)
	tests := []struct {
		name   string
		module string
		reason wasmtool.LoadReason
	}{
		{name: "describe loops", module: "describe_loop", reason: wasmtool.LoadTimeout},
		{name: "describe emits garbage", module: "describe_garbage", reason: wasmtool.DeclarationRefused},
		{name: "no describe and no sidecar", module: "no_compute", reason: wasmtool.NoDeclaration},
		{name: "an import the host lacks", module: "bad_import", reason: wasmtool.ImportRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Load(context.Background(), testkit.WAT(t, tt.module), nil)
			var le *wasmtool.LoadError
			if !errors.As(err, &le) || le.Reason != tt.reason {
				t.Fatalf("Load = %v, want %s", err, tt.reason)
			}
		})
	}
	_, err := l.Load(context.Background(), []byte("not wasm"), nil)
	var le *wasmtool.LoadError
	if !errors.As(err, &le) || le.Reason != wasmtool.ModuleInvalid {
		t.Errorf("garbage bytes: %v", err)
	}
}

// A describe that declares an open object gets its service refused by the
// schema profile, with the reason, while the module itself loads.
func TestDescribeLies(t *testing.T) {
	tool, err := newLoader(t).Load(context.Background(), testkit.WAT(t, "describe_lies"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close(context.Background())
	s := tool.Services()
	if len(s) != 1 || s[0].Refusal == nil || s[0].Refusal.Reason != tooldef.SchemaProfile {
		t.Fatalf("services %+v", s)
	}
	if _, ok := tool.Service("open"); ok {
		t.Error("a refused service is usable")
	}
	if _, err := tool.Run(context.Background(), "open", []byte(`{"operation":"ping"}`), wasmtool.Deadlines{}); !isCode(err, toolerr.UnknownTool) {
		t.Errorf("running a refused service: %v", err)
	}
}

func TestRunPing(t *testing.T) {
	l := newLoader(t)
	tool, err := l.Load(context.Background(), testkit.WAT(t, "ping"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close(context.Background())
	out, err := tool.Run(context.Background(), "ping", []byte(`{"operation":"ping"}`), wasmtool.Deadlines{})
	if err != nil || string(out.Result) != `{"ok":true}` {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	tests := []struct {
		name   string
		params string
		code   toolerr.Code
	}{
		{name: "unknown field", params: `{"operation":"ping","x":1}`, code: toolerr.InvalidParameters},
		{name: "wrong operation", params: `{"operation":"pong"}`, code: toolerr.InvalidParameters},
		{name: "not JSON", params: `{"operation":`, code: toolerr.InvalidParameters},
		{name: "duplicate key", params: `{"operation":"ping","operation":"ping"}`, code: toolerr.InvalidParameters},
		{name: "over the parameter limit", params: `{"operation":"ping","pad":"` + string(make([]byte, 200<<10)) + `"}`, code: toolerr.InputLimitExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tool.Run(context.Background(), "ping", []byte(tt.params), wasmtool.Deadlines{})
			if !isCode(err, tt.code) {
				t.Fatalf("Run = %v, want %s", err, tt.code)
			}
			if out == nil || out.InputValidation <= 0 { // the refusing phase ran (issue 16, item 19)
				t.Fatalf("phases of a refused input: %+v", out)
			}
		})
	}
	if _, err := tool.Run(context.Background(), "nope", []byte(`{}`), wasmtool.Deadlines{}); !isCode(err, toolerr.UnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestOutputLies(t *testing.T) {
	tool, err := newLoader(t).Load(context.Background(), testkit.WAT(t, "output_lies"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close(context.Background())
	out, err := tool.Run(context.Background(), "liar", []byte(`{"operation":"ping"}`), wasmtool.Deadlines{})
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.InvalidOutput || te.IssueCount != 1 || te.Issues[0].Code != "type" {
		t.Fatalf("Run = %+v, want invalid_output with one type issue", err)
	}
	// The output validation that refused ran: it has its duration (issue
	// 16, item 19), and so has the input's.
	if out == nil || out.OutputValidation <= 0 || out.InputValidation <= 0 {
		t.Fatalf("phases of a refused output: %+v", out)
	}
}

// A plain Extism plugin written in AssemblyScript, with no describe and no
// compute, runs through its sidecar manifest: its input mapping gives it
// the parameter text as raw text, and its JSON output is the result.
func TestExtismPluginWithSidecar(t *testing.T) {
	wasm := testkit.Extism(t, "vowels")
	manifest, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", "vowels", "vowels.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	tool, err := newLoader(t).Load(context.Background(), wasm, manifest)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close(context.Background())
	if op := tool.Services()[0].Definition.Operations[0]; op.Input != (tooldef.Mapping{Kind: tooldef.MapText, Field: "text"}) {
		t.Errorf("input mapping %+v", op.Input)
	}
	out, err := tool.Run(context.Background(), "vowels", []byte(`{"operation":"count","text":"Extism plugins run here"}`), wasmtool.Deadlines{})
	if err != nil || string(out.Result) != `{"count":7}` {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if _, err := tool.Run(context.Background(), "vowels", []byte(`{"operation":"count"}`), wasmtool.Deadlines{}); !isCode(err, toolerr.InvalidParameters) {
		t.Errorf("missing text: %v", err)
	}
}

func isCode(err error, code toolerr.Code) bool {
	c, ok := toolerr.CodeOf(err)
	return ok && c == code
}

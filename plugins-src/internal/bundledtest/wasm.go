package bundledtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"toolhost/guest"
	"toolhost/host"
	"toolhost/internal/policy"
	"toolhost/internal/toolerr"
	"toolhost/internal/wasmtool"
	"toolhost/internal/wire"
)

// Module builds the tool package plugins-src/<dir> for wasip1 as make wasm
// does and loads it with the platform's loader, on the default platform
// policy, in a runtime of its own. It skips the test with -short.
func Module(t *testing.T, dir string) *wasmtool.Tool {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a WASM module: skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, dir+".wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-buildmode=c-shared", "-o", out, "toolhost/plugins-src/"+dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, b)
	}
	ctx := context.Background()
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: filepath.Join(tmp, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := l.LoadFile(ctx, out)
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	t.Cleanup(func() { tool.Close(ctx) })
	for _, s := range tool.Services() {
		if s.Refusal != nil {
			t.Fatalf("%s: service refused: %v", dir, s.Refusal)
		}
	}
	return tool
}

// Same runs one item both ways — natively through guest.Invoke and in a
// fresh instance of the module — and fails the test unless the two give the
// same canonical result bytes, or the same tool error.
func (tools *Tools) Same(t *testing.T, mod *wasmtool.Tool, code, params string) {
	t.Helper()
	native, nerr := tools.run(t, code, params)
	outcome, werr := mod.Run(context.Background(), code, []byte(params), wasmtool.Deadlines{})
	switch {
	case nerr == nil && werr == nil:
		doc, err := wire.Decode(native, wire.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Encode(doc, wire.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, outcome.Result) {
			t.Errorf("%s %s:\nnative %s\nwasm   %s", code, params, want, outcome.Result)
		}
	case nerr != nil && werr != nil:
		var ge *guest.Error
		var te *toolerr.Error
		if errors.As(nerr, &ge) {
			if !errors.As(werr, &te) || string(te.Code) != ge.Code || te.Message != ge.Message || te.Retryable != ge.Retryable {
				t.Errorf("%s %s:\nnative %v (%q)\nwasm   %v", code, params, nerr, ge.Message, werr)
			}
			return
		}
		var wte *toolerr.Error
		if !errors.As(nerr, &te) || !errors.As(werr, &wte) || te.Code != wte.Code {
			t.Errorf("%s %s:\nnative %v\nwasm   %v", code, params, nerr, werr)
		}
	default:
		t.Errorf("%s %s:\nnative %s %v\nwasm   %v", code, params, native, nerr, werr)
	}
}

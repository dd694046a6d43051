package bundledtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/internal/wire"
)

// Module builds the tool package plugins-src/<dir> for wasip1 as make wasm
// does and loads it with the platform's loader, on the default platform
// policy, in a runtime of its own. It skips the test with -short.
func Module(t *testing.T, dir string) *wasmtool.Tool {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a WASM module: skipped with -short")
	}
	// go test puts its own toolchain's bin first on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build %s: %v", dir, err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, dir+".wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-buildmode=c-shared", "-o", out, "github.com/toolhost/toolhost/plugins-src/"+dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, b)
	}
	tool, rt := loadIn(t, out, host.Config{CacheDir: filepath.Join(tmp, "cache")}, hosttest.Switches{})
	// The same module in a runtime that gives every call a fresh instance:
	// Same runs each item in both and requires the same result, error,
	// fuel and memory peak (reuse must not be observable).
	fresh, _ := loadIn(t, out, host.Config{CacheDir: filepath.Join(tmp, "cache-fresh")}, hosttest.Switches{FreshInstances: true})
	tw := &twin{fresh: fresh}
	freshTwins.Store(tool, tw)
	t.Cleanup(func() {
		freshTwins.Delete(tool)
		if st := rt.InstanceStats(); !t.Failed() && tw.calls.Load() > 1 && st.Reused == 0 {
			t.Errorf("%s: no item reused an instance (%+v)", dir, st)
		}
	})
	return tool
}

// freshTwins maps a Module's tool to its *twin.
var freshTwins sync.Map

// twin is the same module loaded with fresh instances, and the items Same
// ran on both.
type twin struct {
	fresh *wasmtool.Tool
	calls atomic.Int64
}

// loadIn loads the module file path in a new runtime of cfg and the
// switches s, on the default platform policy.
func loadIn(t testing.TB, path string, cfg host.Config, s hosttest.Switches) (*wasmtool.Tool, *host.Runtime) {
	t.Helper()
	ctx := context.Background()
	rt, err := hosttest.NewRuntime(ctx, cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(ctx); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := l.LoadFile(ctx, path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := tool.Close(ctx); err != nil {
			t.Errorf("closing %s: %v", path, err)
		}
	})
	for _, s := range tool.Services() {
		if s.Refusal != nil {
			t.Fatalf("%s: service refused: %v", path, s.Refusal)
		}
	}
	return tool, rt
}

// Same runs one item both ways — natively through guest.Invoke and in the
// module — and fails the test unless the two give the same canonical result
// bytes, or the same tool error. The module's item runs twice, on the
// module's pooled instances and on a fresh instance, which must agree to
// the byte and the unit of fuel.
func (tools *Tools) Same(t *testing.T, mod *wasmtool.Tool, code, params string) {
	t.Helper()
	native, nerr := tools.run(t, code, params)
	outcome, werr := mod.Run(context.Background(), code, []byte(params), wasmtool.Deadlines{})
	if v, ok := freshTwins.Load(mod); ok {
		tw := v.(*twin)
		tw.calls.Add(1)
		fo, ferr := tw.fresh.Run(context.Background(), code, []byte(params), wasmtool.Deadlines{})
		sameOutcome(t, code+" "+params, outcome, werr, fo, ferr)
	}
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

// sameOutcome fails the test unless an item's outcome on a pooled instance
// (a, aerr) and on a fresh one (b, berr) are the same: result bytes, error,
// fuel and memory peak.
func sameOutcome(t *testing.T, item string, a *wasmtool.Outcome, aerr error, b *wasmtool.Outcome, berr error) {
	t.Helper()
	if fmt.Sprint(aerr) != fmt.Sprint(berr) {
		t.Errorf("%s: pooled error %v, fresh %v", item, aerr, berr)
	}
	if (a == nil) != (b == nil) {
		t.Errorf("%s: pooled outcome %v, fresh %v", item, a, b)
		return
	}
	if a == nil {
		return
	}
	if !bytes.Equal(a.Result, b.Result) || a.FuelUsed != b.FuelUsed || a.MemoryPeakBytes != b.MemoryPeakBytes {
		t.Errorf("%s: pooled %s (fuel %d, peak %d), fresh %s (fuel %d, peak %d)",
			item, a.Result, a.FuelUsed, a.MemoryPeakBytes, b.Result, b.FuelUsed, b.MemoryPeakBytes)
	}
}

package instrument

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/toolhost/toolhost/internal/testkit"
)

// readTestdata returns the module of testdata/NAME.wat (given as NAME.wat
// or NAME.wasm), compiled with wat2wasm (Debian package wabt, which .ci/run installs);
// no built module is committed.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	path, err := testkit.CompileWAT(filepath.Join("testdata", strings.TrimSuffix(strings.TrimSuffix(name, ".wasm"), ".wat")+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRewrite(t testing.TB, wasm []byte, opts Options) ([]byte, Info) {
	t.Helper()
	out, info, err := Rewrite(wasm, opts)
	if err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	return out, info
}

// instance is a module instantiated in its own runtime, with the env module
// of testdata/env.wat available to it.
type instance struct {
	t   testing.TB
	ctx context.Context
	rt  wazero.Runtime
	mod api.Module
}

func newRuntime(t testing.TB) (context.Context, wazero.Runtime) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	if _, err := rt.InstantiateWithConfig(ctx, readTestdata(t, "env.wasm"), wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	return ctx, rt
}

func instantiate(t testing.TB, wasm []byte) *instance {
	t.Helper()
	ctx, rt := newRuntime(t)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiating: %v", err)
	}
	return &instance{t: t, ctx: ctx, rt: rt, mod: mod}
}

func (in *instance) setFuel(v int64) {
	in.t.Helper()
	g, ok := in.mod.ExportedGlobal(FuelGlobal).(api.MutableGlobal)
	if !ok {
		in.t.Fatalf("no mutable global %q", FuelGlobal)
	}
	g.Set(uint64(v))
}

func (in *instance) fuel() int64 {
	in.t.Helper()
	g := in.mod.ExportedGlobal(FuelGlobal)
	if g == nil {
		in.t.Fatalf("no global %q", FuelGlobal)
	}
	return int64(g.Get())
}

func (in *instance) call(name string, args ...uint64) ([]uint64, error) {
	in.t.Helper()
	f := in.mod.ExportedFunction(name)
	if f == nil {
		in.t.Fatalf("no exported function %q", name)
	}
	return f.Call(in.ctx, args...)
}

// metered calls name with budget and returns its results and the fuel used.
func (in *instance) metered(budget int64, name string, args ...uint64) ([]uint64, int64, error) {
	in.t.Helper()
	in.setFuel(budget)
	res, err := in.call(name, args...)
	return res, budget - in.fuel(), err
}

// A tiny module builder for inputs that wat2wasm cannot or will not write.

func uleb(v uint64) []byte { return appendULEB(nil, v) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// vec is a vector: its element count, then the elements.
func vec(items ...[]byte) []byte {
	return cat(uleb(uint64(len(items))), cat(items...))
}

func section(id byte, payload ...[]byte) []byte {
	p := cat(payload...)
	return cat([]byte{id}, uleb(uint64(len(p))), p)
}

func wasmModule(sections ...[]byte) []byte {
	return cat(magic, cat(sections...))
}

// body is a function body: size, no locals, then code.
func body(code ...byte) []byte {
	return bodyWithLocals([]byte{0}, code...)
}

func bodyWithLocals(locals []byte, code ...byte) []byte {
	p := cat(locals, code)
	return cat(uleb(uint64(len(p))), p)
}

var typeVoid = []byte{0x60, 0, 0} // func () -> ()

// oneFunc is a module with one () -> () function, exported as "f", whose
// body is code, and a one-page memory.
func oneFunc(code ...byte) []byte {
	return wasmModule(
		section(secType, vec(typeVoid)),
		section(secFunction, vec([]byte{0})),
		section(secMemory, vec([]byte{0, 1})),
		section(secExport, vec(cat([]byte{1, 'f', 0}, uleb(0)))),
		section(secCode, vec(body(code...))),
	)
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want one wrapping %v", err, want)
	}
}

func newRuntimeNoEnv(t testing.TB) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// decode splits wasm into sections and decodes those the rewriter changes,
// under the default structure limits.
func decode(wasm []byte) (*module, error) { return decodeWith(wasm, Options{}.withDefaults()) }

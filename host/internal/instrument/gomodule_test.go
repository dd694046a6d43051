package instrument

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// goLoopSource is a Go wasip1 reactor exporting a compute-heavy loop.
const goLoopSource = `package main

import "crypto/sha256"

//go:wasmexport loop
func loop(n int32) int64 {
	var s int64
	for i := int32(0); i < n; i++ {
		s = s*31 + int64(i) ^ (s >> 7)
	}
	return s
}

//go:wasmexport add
func add(n int32) int64 {
	var s int64
	for i := int32(0); i < n; i++ {
		s += int64(i)
	}
	return s
}

var buf [1 << 12]byte

//go:wasmexport hash
func hash(n int32) int64 {
	var s int64
	for i := int32(0); i < n; i++ {
		buf[i%int32(len(buf))] = byte(i)
		sum := sha256.Sum256(buf[:])
		s += int64(sum[0])
	}
	return s
}

func main() {}
`

var goLoop struct {
	once sync.Once
	wasm []byte
	err  error
}

// goLoopModule builds goLoopSource with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared, once per test binary.
func goLoopModule(t testing.TB) []byte {
	t.Helper()
	goLoop.once.Do(func() {
		dir, err := os.MkdirTemp("", "instrument-goloop-")
		if err != nil {
			goLoop.err = err
			return
		}
		defer os.RemoveAll(dir)
		files := map[string]string{
			"go.mod":  "module example.com/loop\n\ngo 1.24\n",
			"main.go": goLoopSource,
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				goLoop.err = err
				return
			}
		}
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", "loop.wasm", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0",
			"GOFLAGS=-buildvcs=false", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			goLoop.err = &buildError{err: err, out: string(out)}
			return
		}
		goLoop.wasm, goLoop.err = os.ReadFile(filepath.Join(dir, "loop.wasm"))
	})
	if goLoop.err != nil {
		t.Fatalf("building the Go wasip1 module: %v", goLoop.err)
	}
	return goLoop.wasm
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// goInstance instantiates a Go reactor with WASI and runs _initialize. For
// a rewritten module it returns the fuel _initialize used.
func goInstance(t testing.TB, wasm []byte, metered bool) (*instance, int64) {
	t.Helper()
	return goInstanceWith(t, wasm, metered, wazero.NewRuntimeConfig())
}

// goInstanceWith is goInstance in a runtime of configuration rc.
func goInstanceWith(t testing.TB, wasm []byte, metered bool, rc wazero.RuntimeConfig) (*instance, int64) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatalf("instantiating: %v", err)
	}
	in := &instance{t: t, ctx: ctx, rt: rt, mod: mod}
	if !metered {
		if _, err := in.call("_initialize"); err != nil {
			t.Fatalf("_initialize: %v", err)
		}
		return in, 0
	}
	_, used, err := in.metered(plenty, "_initialize")
	if err != nil {
		t.Fatalf("_initialize: %v", err)
	}
	return in, used
}

func TestGoModule(t *testing.T) {
	orig := goLoopModule(t)
	out, info := mustRewrite(t, orig, Options{ExportGlobals: true, MaxMemoryPages: 1024})

	for _, im := range info.Imports {
		if im.Module != "wasi_snapshot_preview1" || im.Kind != KindFunction {
			t.Errorf("unexpected import %+v", im)
		}
	}
	exports := map[string]ExternKind{}
	for _, e := range info.Exports {
		exports[e.Name] = e.Kind
	}
	for name, kind := range map[string]ExternKind{"loop": KindFunction, "_initialize": KindFunction, "memory": KindMemory} {
		if exports[name] != kind {
			t.Errorf("export %q: kind %v, want %v (exports %v)", name, exports[name], kind, exports)
		}
	}
	if info.Memory == nil || !info.Memory.Exported || info.Memory.Limits.Max != 1024 {
		t.Errorf("Info.Memory = %+v", info.Memory)
	}
	t.Logf("%d bytes in, %d out (+%.1f%%); %d functions metered; %d globals",
		len(orig), len(out), 100*float64(len(out)-len(orig))/float64(len(orig)), info.MeteredFunctions, len(info.Globals))

	plain, _ := goInstance(t, orig, false)
	ns := []int64{0, 1, 2, 100, 10000}
	run := func() (initFuel int64, used []int64, results [][]uint64) {
		in, initFuel := goInstance(t, out, true)
		for _, n := range ns {
			res, u, err := in.metered(plenty, "loop", uint64(n))
			if err != nil {
				t.Fatalf("loop(%d): %v", n, err)
			}
			used = append(used, u)
			results = append(results, res)
		}
		// Every global is exported and readable after _initialize.
		for _, g := range info.Globals {
			if g.Export == "" || in.mod.ExportedGlobal(g.Export) == nil {
				t.Errorf("global %d not exported (%q)", g.Index, g.Export)
			}
		}
		return initFuel, used, results
	}
	init1, used1, results := run()
	for i, n := range ns {
		want, err := plain.call("loop", uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(results[i], want) {
			t.Errorf("loop(%d) = %v metered, %v plain", n, results[i], want)
		}
	}
	a, b := linear(t, ns[1:], used1[1:])
	t.Logf("_initialize used %d fuel; loop(n) uses %d + %d·n (loop(0) %d)", init1, a, b, used1[0])
	init2, used2, _ := run()
	if init1 != init2 || !reflect.DeepEqual(used1, used2) {
		t.Errorf("fuel differs between fresh instances: init %d/%d, loop %v/%v", init1, init2, used1, used2)
	}

	// Exhaustion: a budget of a million stops a billion iterations.
	in, _ := goInstance(t, out, true)
	if _, _, err := in.metered(1e6, "loop", 1<<30); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("loop(1<<30) with a budget of 1e6: %v, want an unreachable trap", err)
	}
	if f := in.fuel(); f >= 0 {
		t.Errorf("fuel after exhaustion %d, want < 0", f)
	}
}

const benchIterations = 100000

func benchmarkGoLoop(b *testing.B, metered bool, rc wazero.RuntimeConfig) {
	for _, c := range []struct {
		fn string
		n  uint64
	}{{"loop", benchIterations}, {"add", benchIterations}, {"hash", 10}} {
		b.Run(c.fn, func(b *testing.B) { benchmarkGoFunc(b, metered, rc, c.fn, c.n) })
	}
}

func benchmarkGoFunc(b *testing.B, metered bool, rc wazero.RuntimeConfig, fn string, n uint64) {
	wasm := goLoopModule(b)
	if metered {
		wasm, _ = mustRewrite(b, wasm, Options{})
	}
	in, _ := goInstanceWith(b, wasm, metered, rc)
	f := in.mod.ExportedFunction(fn)
	var fuel api.MutableGlobal
	if metered {
		fuel = in.mod.ExportedGlobal(FuelGlobal).(api.MutableGlobal)
	}
	var used int64
	b.ResetTimer()
	for b.Loop() {
		if metered {
			fuel.Set(uint64(plenty))
		}
		if _, err := f.Call(in.ctx, n); err != nil {
			b.Fatal(err)
		}
		if metered {
			used = plenty - int64(fuel.Get())
		}
	}
	if metered {
		b.ReportMetric(float64(used), "fuel/op")
	}
}

// BenchmarkMeteredLoop and BenchmarkUnmeteredLoop time one call of the Go
// module's functions (loop and add: 100000 iterations; hash: 10 SHA-256
// sums of 4 KiB) in a warm instance, rewritten and not. Compare them for
// the cost of metering and yields. BenchmarkInterruptibleLoop is the
// unmetered module with wazero's own way to interrupt a guest,
// WithCloseOnContextDone: what a sandbox pays without the yields.
//
//	go test -run '^$' -bench 'Loop$' -count 6 ./host/internal/instrument
func BenchmarkMeteredLoop(b *testing.B) {
	benchmarkGoLoop(b, true, wazero.NewRuntimeConfig())
}
func BenchmarkUnmeteredLoop(b *testing.B) {
	benchmarkGoLoop(b, false, wazero.NewRuntimeConfig())
}
func BenchmarkInterruptibleLoop(b *testing.B) {
	benchmarkGoLoop(b, false, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
}

// BenchmarkRewrite times the rewrite of the Go module (about 1.8 MB).
func BenchmarkRewrite(b *testing.B) {
	wasm := goLoopModule(b)
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, _, err := Rewrite(wasm, Options{ExportGlobals: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkTight(b *testing.B, metered bool) {
	wasm := readTestdata(b, "tight.wasm")
	if metered {
		wasm, _ = mustRewrite(b, wasm, Options{})
	}
	in := instantiate(b, wasm)
	f := in.mod.ExportedFunction("count")
	for b.Loop() {
		if metered {
			in.setFuel(plenty)
		}
		if _, err := f.Call(in.ctx, benchIterations); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeteredTight and BenchmarkUnmeteredTight time testdata/tight.wat:
// a loop of six arithmetic instructions, the worst case for metering.
func BenchmarkMeteredTight(b *testing.B)   { benchmarkTight(b, true) }
func BenchmarkUnmeteredTight(b *testing.B) { benchmarkTight(b, false) }

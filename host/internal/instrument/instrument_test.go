package instrument

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

const plenty = int64(1) << 40

func TestRewriteKeepsResults(t *testing.T) {
	tests := []struct {
		name string
		file string
		fn   string
		args []uint64
	}{
		{name: "loop sum", file: "loop.wasm", fn: "sum", args: []uint64{1000}},
		{name: "recursion", file: "loop.wasm", fn: "fib", args: []uint64{15}},
		{name: "defined global", file: "loop.wasm", fn: "get_g"},
		{name: "mutated global", file: "loop.wasm", fn: "bump"},
		{name: "imported and immutable globals", file: "loop.wasm", fn: "consts"},
		{name: "call_indirect", file: "loop.wasm", fn: "indirect", args: []uint64{100}},
		{name: "nested loops", file: "loop.wasm", fn: "nested", args: []uint64{30, 40}},
		{name: "multi-value blocks", file: "features.wasm", fn: "swap", args: []uint64{3, 4}},
		{name: "saturating truncation", file: "features.wasm", fn: "sat", args: []uint64{math.Float64bits(-1e30)}},
		{name: "sign extension", file: "features.wasm", fn: "signext", args: []uint64{0xff}},
		{name: "bulk memory", file: "features.wasm", fn: "bulk", args: []uint64{300}},
		{name: "reference types", file: "features.wasm", fn: "refs"},
		{name: "memory.grow", file: "features.wasm", fn: "grow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := readTestdata(t, tt.file)
			out, _ := mustRewrite(t, orig, Options{})
			want, err := instantiate(t, orig).call(tt.fn, tt.args...)
			if err != nil {
				t.Fatalf("original: %v", err)
			}
			got, used, err := instantiate(t, out).metered(plenty, tt.fn, tt.args...)
			if err != nil {
				t.Fatalf("rewritten: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rewritten returned %v, original %v", got, want)
			}
			if used <= 0 {
				t.Errorf("used %d fuel, want some", used)
			}
		})
	}
}

func TestRewriteDoesNotModifyInput(t *testing.T) {
	orig := readTestdata(t, "loop.wasm")
	cp := bytes.Clone(orig)
	mustRewrite(t, orig, Options{ExportGlobals: true, MaxMemoryPages: 2, MaxTableElements: 10})
	if !bytes.Equal(orig, cp) {
		t.Fatal("Rewrite modified its input")
	}
}

// TestFuelExact checks the cost model on functions small enough to count;
// TestFuelSegments has more.
func TestFuelExact(t *testing.T) {
	out, _ := mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	in := instantiate(t, out)

	// get_g: global.get (1) and the function's end (0), charged at entry.
	if _, used, err := in.metered(100, "get_g"); err != nil || used != 1 {
		t.Errorf("get_g used %d fuel (err %v), want 1", used, err)
	}
	// fib has no loop. Its entry segment, charged on every call, is
	// local.get, i32.const, i32.lt_u, if: 4. The then-arm (n < 2) is one
	// local.get: 1. The else-arm is local.get, i32.const, i32.sub, call,
	// local.get, i32.const, i32.sub, call, i32.add: 7 of weight 1 and 2 calls
	// of weight 5, 17. The end after both arms costs 0. So fib(0) and fib(1)
	// use 4+1 = 5, and fib(n) 4+17 = 21 plus what fib(n-1) and fib(n-2) use.
	const leaf, inner = 4 + 1, 4 + 7 + 2*costCall
	var want [21]int64
	want[0], want[1] = leaf, leaf
	for n := 2; n < len(want); n++ {
		want[n] = inner + want[n-1] + want[n-2]
	}
	for _, n := range []int{0, 1, 2, 10, 20} {
		_, used, err := in.metered(plenty, "fib", uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		if used != want[n] {
			t.Errorf("fib(%d) used %d fuel, want %d", n, used, want[n])
		}
	}
}

// linear checks that used(n) = a + b·n exactly over ns and returns a, b.
func linear(t *testing.T, ns []int64, used []int64) (a, b int64) {
	t.Helper()
	b = (used[1] - used[0]) / (ns[1] - ns[0])
	a = used[0] - b*ns[0]
	for i, n := range ns {
		if used[i] != a+b*n {
			t.Fatalf("fuel not linear in n: n=%v used=%v", ns, used)
		}
	}
	if b <= 0 {
		t.Fatalf("fuel per iteration %d, want > 0 (used %v)", b, used)
	}
	return a, b
}

func TestFuelLinearAndDeterministic(t *testing.T) {
	out, _ := mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	ns := []int64{0, 1, 10, 1000, 100000}
	run := func() []int64 {
		in := instantiate(t, out) // a fresh instance per run
		var used []int64
		for _, n := range ns {
			_, u, err := in.metered(plenty, "sum", uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			used = append(used, u)
		}
		return used
	}
	first := run()
	a, b := linear(t, ns, first)
	t.Logf("sum(n) uses %d + %d·n fuel", a, b)
	if second := run(); !reflect.DeepEqual(first, second) {
		t.Fatalf("fuel differs between runs: %v then %v", first, second)
	}

	// Nested loops: the inner body is charged n·m times, the outer n times.
	in := instantiate(t, out)
	measure := func(n, m uint64) int64 {
		_, u, err := in.metered(plenty, "nested", n, m)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	base := measure(0, 0)
	outer := measure(1, 0) - base
	inner := measure(1, 1) - base - outer
	for _, c := range [][2]uint64{{3, 7}, {10, 100}, {100, 3}} {
		n, m := int64(c[0]), int64(c[1])
		if got, want := measure(c[0], c[1]), base+n*outer+n*m*inner; got != want {
			t.Errorf("nested(%d, %d) used %d fuel, want %d", n, m, got, want)
		}
	}
}

func TestFuelExhaustion(t *testing.T) {
	out, _ := mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	tests := []struct {
		name   string
		budget int64
		fn     string
		args   []uint64
	}{
		{name: "infinite loop", budget: 100000, fn: "spin"},
		{name: "long loop", budget: 1000, fn: "sum", args: []uint64{1 << 30}},
		{name: "recursion", budget: 1000, fn: "fib", args: []uint64{30}},
		{name: "zero budget", budget: 0, fn: "get_g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := instantiate(t, out)
			_, _, err := in.metered(tt.budget, tt.fn, tt.args...)
			if err == nil {
				t.Fatal("call returned, want a trap")
			}
			if !strings.Contains(err.Error(), "unreachable") {
				t.Errorf("trap %v, want unreachable", err)
			}
			if f := in.fuel(); f >= 0 {
				t.Errorf("fuel after the trap is %d, want < 0", f)
			}
		})
	}
}

func TestBulkFuelProportional(t *testing.T) {
	out, _ := mustRewrite(t, readTestdata(t, "features.wasm"), Options{})
	in := instantiate(t, out)
	used := func(n uint64) int64 {
		_, u, err := in.metered(plenty, "fill", n)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	base := used(0)
	for _, n := range []uint64{63, 64, 6400, 65536} {
		if got, want := used(n), base+int64(n>>bulkMemoryShift); got != want {
			t.Errorf("memory.fill of %d bytes used %d fuel, want %d", n, got, want)
		}
	}
	// A fill that runs out of bounds is charged, then traps as before.
	in.setFuel(plenty)
	if _, err := in.call("fill", 1<<20); err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Errorf("fill past the memory: %v, want out of bounds", err)
	}
}

func TestIndicesPreserved(t *testing.T) {
	orig := readTestdata(t, "loop.wasm")
	out, info := mustRewrite(t, orig, Options{})
	if info.FuelGlobal != 4 {
		t.Errorf("fuel global index %d, want 4 (1 imported + 3 defined)", info.FuelGlobal)
	}
	mi, err := decode(orig)
	if err != nil {
		t.Fatal(err)
	}
	mo, err := decode(out)
	if err != nil {
		t.Fatalf("decoding the output: %v", err)
	}
	if !reflect.DeepEqual(mo.exports[:len(mi.exports)], mi.exports) {
		t.Errorf("exports changed: %v, was %v", mo.exports, mi.exports)
	}
	if got := mo.exports[len(mi.exports):]; !reflect.DeepEqual(got, []Export{
		{Name: FuelGlobal, Kind: KindGlobal, Index: 4},
		{Name: FloorGlobal, Kind: KindGlobal, Index: 5},
	}) {
		t.Errorf("added exports %v", got)
	}
	// The one function added, the yield function, comes last, of a new
	// type () → ().
	n := len(mi.funcTypes)
	if len(mo.funcTypes) != n+1 || !reflect.DeepEqual(mo.funcTypes[:n], mi.funcTypes) || mo.importedFuncs != mi.importedFuncs {
		t.Errorf("function space changed")
	} else if yt := mo.funcTypes[n]; int(yt) != len(mi.numParams) || mo.numParams[yt] != 0 {
		t.Errorf("yield function of type %d, want the new type %d", yt, len(mi.numParams))
	}
	for i, g := range mi.globals {
		if !reflect.DeepEqual(mo.globals[i], g) {
			t.Errorf("global %d changed: %v, was %v", i, mo.globals[i], g)
		}
	}
	// The name section is carried over byte for byte.
	custom := func(m *module) [][]byte {
		var cs [][]byte
		for _, s := range m.sections {
			if s.id == secCustom {
				cs = append(cs, m.wasm[s.start:s.end])
			}
		}
		return cs
	}
	if c := custom(mi); len(c) == 0 || !reflect.DeepEqual(custom(mo), c) {
		t.Errorf("custom sections %q, want %q", custom(mo), c)
	}
	// Function indices are checked by behaviour in TestRewriteKeepsResults
	// (call, call_indirect through the element segment, the imported add);
	// compare the compiled signatures too.
	ctx, rt := newRuntime(t)
	ci, err := rt.CompileModule(ctx, orig)
	if err != nil {
		t.Fatal(err)
	}
	co, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for name, fi := range ci.ExportedFunctions() {
		fo := co.ExportedFunctions()[name]
		if fo == nil || fo.Index() != fi.Index() || !reflect.DeepEqual(fo.ParamTypes(), fi.ParamTypes()) {
			t.Errorf("exported function %q moved or changed", name)
		}
	}
}

func TestExportGlobals(t *testing.T) {
	out, info := mustRewrite(t, readTestdata(t, "loop.wasm"), Options{ExportGlobals: true})
	want := []Global{
		{Index: 0, Type: ValueTypeI64, Imported: true},
		{Index: 1, Type: ValueTypeI32, Mutable: true, Export: "toolhost.global.1"},
		{Index: 2, Type: ValueTypeI64, Export: "toolhost.global.2"},
		{Index: 3, Type: ValueTypeF64, Mutable: true, Export: "toolhost.global.3"},
	}
	if !reflect.DeepEqual(info.Globals, want) {
		t.Errorf("Info.Globals = %+v, want %+v", info.Globals, want)
	}
	in := instantiate(t, out)
	for name, v := range map[string]uint64{
		"toolhost.global.1": 7,
		"toolhost.global.2": 42,
		"toolhost.global.3": math.Float64bits(1.5),
	} {
		g := in.mod.ExportedGlobal(name)
		if g == nil {
			t.Errorf("global %q not exported", name)
			continue
		}
		if g.Get() != v {
			t.Errorf("global %q = %d, want %d", name, g.Get(), v)
		}
	}
	// The exported global is the one the code uses.
	in.setFuel(plenty)
	if _, err := in.call("bump"); err != nil {
		t.Fatal(err)
	}
	if v := in.mod.ExportedGlobal("toolhost.global.1").Get(); v != 8 {
		t.Errorf("after bump the global is %d, want 8", v)
	}

	// Without the option only the fuel global is added, and a global that
	// is already exported keeps its name and gets no second one.
	_, info = mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	for _, g := range info.Globals {
		if g.Export != "" {
			t.Errorf("global %d exported as %q without ExportGlobals", g.Index, g.Export)
		}
	}
	exported := wasmModule(
		section(secGlobal, vec([]byte{typeI32, 1, 0x41, 5, 0x0b}, []byte{typeI32, 0, 0x41, 6, 0x0b})),
		section(secExport, vec(cat([]byte{1, 'g', byte(KindGlobal)}, uleb(0)))),
	)
	_, info = mustRewrite(t, exported, Options{ExportGlobals: true})
	if info.Globals[0].Export != "g" || info.Globals[1].Export != "toolhost.global.1" {
		t.Errorf("Info.Globals = %+v", info.Globals)
	}
}

func TestTableCap(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		opts    Options
		want    []Limits
		wantErr error
	}{
		{name: "default cap", file: "loop.wasm", want: []Limits{{Min: 4, Max: DefaultMaxTableElements, HasMax: true}}},
		{name: "no max", file: "loop.wasm", opts: Options{MaxTableElements: 10}, want: []Limits{{Min: 4, Max: 10, HasMax: true}}},
		{name: "max above cap", file: "features.wasm", opts: Options{MaxTableElements: 5}, want: []Limits{{Min: 2, Max: 5, HasMax: true}, {Min: 1, Max: 5, HasMax: true}}},
		{name: "max below cap", file: "features.wasm", opts: Options{MaxTableElements: 50}, want: []Limits{{Min: 2, Max: 8, HasMax: true}, {Min: 1, Max: 50, HasMax: true}}},
		{name: "initial above cap", file: "loop.wasm", opts: Options{MaxTableElements: 3}, wantErr: ErrLimits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := Rewrite(readTestdata(t, tt.file), tt.opts)
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []Limits
			for _, tb := range info.Tables {
				got = append(got, tb.Limits)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Info limits %+v, want %+v", got, tt.want)
			}
			m, err := decode(out)
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, tb := range m.tables {
				got = append(got, tb.limits)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("output limits %+v, want %+v", got, tt.want)
			}
		})
	}

	// The cap holds at run time: refs grows table $t from 2 to 4, then
	// fills slots 2 and 3; under a cap of 3 the grow fails and the fill
	// traps.
	out, _ := mustRewrite(t, readTestdata(t, "features.wasm"), Options{MaxTableElements: 3})
	in := instantiate(t, out)
	in.setFuel(plenty)
	if _, err := in.call("refs"); err == nil || !strings.Contains(err.Error(), "invalid table access") {
		t.Errorf("refs under a cap of 3: %v, want an invalid table access trap", err)
	}

	// An imported table is reported, for the host to refuse, and capped
	// like a defined one.
	imported := wasmModule(section(secImport, vec(cat(
		uleb(3), []byte("env"), uleb(1), []byte("t"), []byte{byte(KindTable), typeFuncref, 0, 1}))))
	out, info := mustRewrite(t, imported, Options{MaxTableElements: 7})
	if want := []Import{{Module: "env", Name: "t", Kind: KindTable}}; !reflect.DeepEqual(info.Imports, want) {
		t.Errorf("Info.Imports = %+v, want %+v", info.Imports, want)
	}
	m, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.imports[0].limits, (Limits{Min: 1, Max: 7, HasMax: true}); got != want {
		t.Errorf("imported table limits %+v, want %+v", got, want)
	}
}

func TestMemory(t *testing.T) {
	loop := readTestdata(t, "loop.wasm")
	_, info := mustRewrite(t, loop, Options{})
	want := &Memory{Declared: Limits{Min: 1, Max: 10, HasMax: true}, Limits: Limits{Min: 1, Max: 10, HasMax: true}, Exported: true}
	if !reflect.DeepEqual(info.Memory, want) {
		t.Errorf("Info.Memory = %+v, want %+v", info.Memory, want)
	}
	_, info = mustRewrite(t, loop, Options{MaxMemoryPages: 5})
	want.Limits.Max = 5
	if !reflect.DeepEqual(info.Memory, want) {
		t.Errorf("capped: Info.Memory = %+v, want %+v", info.Memory, want)
	}
	_, info = mustRewrite(t, loop, Options{MaxMemoryPages: 50})
	want.Limits.Max = 10
	if !reflect.DeepEqual(info.Memory, want) {
		t.Errorf("cap above max: Info.Memory = %+v, want %+v", info.Memory, want)
	}

	// No declared maximum: the cap becomes it, and grow stops there.
	out, info := mustRewrite(t, readTestdata(t, "features.wasm"), Options{MaxMemoryPages: 2})
	if want := (Limits{Min: 1, Max: 2, HasMax: true}); info.Memory.Limits != want || info.Memory.Declared.HasMax {
		t.Errorf("Info.Memory = %+v", info.Memory)
	}
	in := instantiate(t, out)
	for i, want := range []uint32{1, math.MaxUint32} {
		res, _, err := in.metered(plenty, "grow")
		if err != nil {
			t.Fatal(err)
		}
		if uint32(res[0]) != want {
			t.Errorf("grow %d returned %d, want %d", i, int32(res[0]), int32(want))
		}
	}

	// A minimum above the cap is refused.
	big := wasmModule(section(secMemory, vec([]byte{0, 3})))
	_, _, err := Rewrite(big, Options{MaxMemoryPages: 2})
	wantErr(t, err, ErrLimits)
	if _, _, err := Rewrite(big, Options{MaxMemoryPages: maxPages + 1}); err == nil {
		t.Error("MaxMemoryPages above 65536 accepted")
	}

	// An imported memory is reported and capped the same way.
	imported := wasmModule(section(secImport, vec(cat(
		uleb(3), []byte("env"), uleb(3), []byte("mem"), []byte{byte(KindMemory), 0, 1}))))
	_, info = mustRewrite(t, imported, Options{MaxMemoryPages: 4})
	if want := (&Memory{Declared: Limits{Min: 1}, Limits: Limits{Min: 1, Max: 4, HasMax: true}, Imported: true}); !reflect.DeepEqual(info.Memory, want) {
		t.Errorf("imported: Info.Memory = %+v, want %+v", info.Memory, want)
	}

	// No memory at all.
	_, info = mustRewrite(t, wasmModule(), Options{})
	if info.Memory != nil {
		t.Errorf("Info.Memory = %+v for a module without memory", info.Memory)
	}
}

func TestInfo(t *testing.T) {
	_, info := mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	wantImports := []Import{
		{Module: "env", Name: "add", Kind: KindFunction},
		{Module: "env", Name: "base", Kind: KindGlobal},
	}
	if !reflect.DeepEqual(info.Imports, wantImports) {
		t.Errorf("Info.Imports = %+v, want %+v", info.Imports, wantImports)
	}
	var names []string
	for _, e := range info.Exports {
		names = append(names, e.Kind.String()+" "+e.Name)
	}
	wantExports := "memory memory,func sum,func spin,func fib,func get_g,func bump,func consts,func indirect,func nested"
	if got := strings.Join(names, ","); got != wantExports {
		t.Errorf("Info.Exports = %s, want %s", got, wantExports)
	}
	if info.MeteredFunctions != 8 {
		t.Errorf("MeteredFunctions = %d, want 8", info.MeteredFunctions)
	}
}

func TestStartFunction(t *testing.T) {
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	start := readTestdata(t, "start.wasm")

	out, _ := mustRewrite(t, start, Options{})
	if _, err := rt.Instantiate(ctx, out); err == nil {
		t.Error("start function ran with no initial fuel")
	}
	out, _ = mustRewrite(t, start, Options{InitialFuel: 100})
	mod, err := rt.InstantiateWithConfig(ctx, out, wazero.NewModuleConfig().WithName("started"))
	if err != nil {
		t.Fatal(err)
	}
	// $init: i32.const, global.set (1 each), end (0).
	if f := int64(mod.ExportedGlobal(FuelGlobal).Get()); f != 98 {
		t.Errorf("fuel after the start function %d, want 98", f)
	}
	if res, err := mod.ExportedFunction("ready").Call(ctx); err != nil || res[0] != 1 {
		t.Errorf("ready() = %v, %v", res, err)
	}
}

// TestGuestCannotReachFuel checks that code cannot name the fuel global: its
// index is out of range in the input.
func TestGuestCannotReachFuel(t *testing.T) {
	// global.set 0 with no globals declared: index 0 will be the fuel.
	mod := oneFunc(0x42, 0x00, 0x24, 0x00, 0x0b)
	_, _, err := Rewrite(mod, Options{})
	wantErr(t, err, ErrMalformed)
	exp := wasmModule(section(secExport, vec(cat([]byte{1, 'g', byte(KindGlobal)}, uleb(0)))))
	_, _, err = Rewrite(exp, Options{})
	wantErr(t, err, ErrMalformed)
	reserved := wasmModule(
		section(secGlobal, vec([]byte{typeI64, 1, 0x42, 0, 0x0b})),
		section(secExport, vec(cat(uleb(uint64(len(FuelGlobal))), []byte(FuelGlobal), []byte{byte(KindGlobal)}, uleb(0)))))
	_, _, err = Rewrite(reserved, Options{})
	wantErr(t, err, ErrUnsupported)
}

func TestCompiles(t *testing.T) {
	// Every committed module rewrites to a module wazero compiles, under
	// every option.
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, name := range []string{"loop.wasm", "features.wasm", "start.wasm", "env.wasm", "segments.wasm", "tight.wasm", "simd.wasm"} {
		out, _ := mustRewrite(t, readTestdata(t, name), Options{ExportGlobals: true, MaxMemoryPages: 20, MaxTableElements: 64})
		cm, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cm.Close(ctx)
	}
}

// TestStopInterrupts runs a loop that never calls out, in both metering
// forms (spin keeps the count in the global, tight in a local), compiled
// with a function listener on the yield function alone, as the host does:
// a garbage collection completes while it runs (it yields to the Go
// runtime), and the listener, once told to stop, ends it at a yield with
// the fuel global not below zero, told from exhaustion. Were either broken,
// spin would run out of fuel and count would return.
func TestStopInterrupts(t *testing.T) {
	for _, tt := range []struct {
		file, fn string
		args     []uint64
	}{
		{"loop.wasm", "spin", nil},
		{"tight.wasm", "count", []uint64{math.MaxUint32}}, // seconds of iterations
	} {
		t.Run(tt.fn, func(t *testing.T) {
			out, info := mustRewrite(t, readTestdata(t, tt.file), Options{})
			ctx, rt := newRuntime(t)
			l := &stopListener{}
			cm, err := rt.CompileModule(experimental.WithFunctionListenerFactory(ctx, yieldListeners{uint32(info.Functions), l}), out)
			if err != nil {
				t.Fatal(err)
			}
			mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			in := &instance{t: t, ctx: ctx, rt: rt, mod: mod}
			in.setFuel(1 << 33) // seconds of fuel
			done := make(chan error, 1)
			go func() {
				_, err := in.call(tt.fn, tt.args...)
				done <- err
			}()
			time.Sleep(20 * time.Millisecond) // let it start
			runtime.GC()
			if l.yields.Load() == 0 {
				t.Errorf("%s ran 20 ms without a yield", tt.fn)
			}
			l.stop.Store(true)
			err = <-done
			if !errors.Is(err, errStopped) {
				t.Fatalf("%s ended with %v, want the listener's stop", tt.fn, err)
			}
			if f := in.fuel(); f < 0 {
				t.Errorf("fuel %d after an interruption, want it not below zero", f)
			}
		})
	}
}

// errStopped is what stopListener ends a call with.
var errStopped = errors.New("stopped at a yield")

// stopListener counts the yields and, once stop is set, ends the call at
// the next one, as the host's listener does when the call's context is
// done.
type stopListener struct {
	yields atomic.Int64
	stop   atomic.Bool
}

func (l *stopListener) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
	l.yields.Add(1)
	if l.stop.Load() {
		panic(errStopped)
	}
}

func (*stopListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (*stopListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// yieldListeners returns l for the function of index yield, defined with
// no parameters and no results, and no listener for any other.
type yieldListeners struct {
	yield uint32
	l     experimental.FunctionListener
}

func (f yieldListeners) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if _, _, imported := def.Import(); def.Index() == f.yield && !imported && len(def.ParamTypes()) == 0 && len(def.ResultTypes()) == 0 {
		return f.l
	}
	return nil
}

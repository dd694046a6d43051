package instrument

import (
	"errors"
	"testing"
	"time"

	"toolhost/internal/testmodule"
)

// brTableCode is code that runs a br_table of labels labels (its default
// included), all to the enclosing block: block; i32.const 0; br_table
// 0…0; end; end.
func brTableCode(labels int) []byte {
	code := cat([]byte{opBlock, blockEmpty, opI32Const, 0, 0x0e}, uleb(uint64(labels-1)))
	code = append(code, make([]byte, labels)...) // label 0, labels times
	return append(code, opEnd, opEnd)
}

// funcsModule is a module of n () -> () functions with code as each body,
// after imported imported functions from env.
func funcsModule(n, imported int, code []byte) []byte {
	var imports [][]byte
	for i := 0; i < imported; i++ {
		imports = append(imports, cat([]byte{3, 'e', 'n', 'v', 1, byte('a' + i%26), byte(KindFunction)}, uleb(0)))
	}
	funcs := make([][]byte, n)
	bodies := make([][]byte, n)
	for i := range funcs {
		funcs[i] = []byte{0}
		bodies[i] = body(code...)
	}
	sections := [][]byte{section(secType, vec(typeVoid))}
	if imported > 0 {
		sections = append(sections, section(secImport, vec(imports...)))
	}
	sections = append(sections, section(secFunction, vec(funcs...)), section(secCode, vec(bodies...)))
	return wasmModule(sections...)
}

// tablesModule is a module defining one funcref table per limits entry.
func tablesModule(limits ...Limits) []byte {
	tables := make([][]byte, len(limits))
	for i, l := range limits {
		tables[i] = appendLimits([]byte{typeFuncref}, l)
	}
	return wasmModule(section(secTable, vec(tables...)))
}

func wantLimit(t *testing.T, err error, want LimitError) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("got error %v, want a *LimitError %+v", err, want)
	}
	if !errors.Is(err, ErrLimits) {
		t.Errorf("%v does not wrap ErrLimits", err)
	}
	if *le != want {
		t.Errorf("got %+v, want %+v", *le, want)
	}
}

func TestStructureLimits(t *testing.T) {
	tests := []struct {
		name string
		wasm []byte
		opts Options
		want LimitError
	}{
		{
			name: "br_table over the function's limit",
			wasm: funcsModule(1, 0, brTableCode(101)),
			opts: Options{MaxFunctionBrTableTargets: 100},
			want: LimitError{Limit: LimitBrTableTargets, Value: 101, Max: 100, Where: "function 0"},
		},
		{
			name: "br_tables adding up over the function's limit",
			wasm: funcsModule(1, 0, cat(brTableCode(60)[:len(brTableCode(60))-1], brTableCode(60))),
			opts: Options{MaxFunctionBrTableTargets: 100},
			want: LimitError{Limit: LimitBrTableTargets, Value: 120, Max: 100, Where: "function 0"},
		},
		{
			name: "br_tables over the module's limit",
			wasm: funcsModule(3, 2, brTableCode(100)),
			opts: Options{MaxFunctionBrTableTargets: 100, MaxBrTableTargets: 250},
			want: LimitError{Limit: LimitBrTableTargets, Value: 300, Max: 250, Where: "module"},
		},
		{
			name: "defined and imported functions",
			wasm: funcsModule(8, 3, []byte{opEnd}),
			opts: Options{MaxFunctions: 10},
			want: LimitError{Limit: LimitFunctions, Value: 11, Max: 10, Where: "module"},
		},
		{
			name: "imported functions alone",
			wasm: funcsModule(0, 11, nil),
			opts: Options{MaxFunctions: 10},
			want: LimitError{Limit: LimitFunctions, Value: 11, Max: 10, Where: "module"},
		},
		{
			name: "tables",
			wasm: tablesModule(make([]Limits, 5)...),
			opts: Options{MaxTables: 4},
			want: LimitError{Limit: LimitTables, Value: 5, Max: 4, Where: "module"},
		},
		{
			name: "one table's initial size",
			wasm: tablesModule(Limits{}, Limits{Min: 11}),
			opts: Options{MaxTableElements: 10},
			want: LimitError{Limit: LimitTableElements, Value: 11, Max: 10, Where: "table 1"},
		},
		{
			name: "tables' initial sizes together",
			wasm: tablesModule(Limits{Min: 6}, Limits{Min: 6}),
			opts: Options{MaxTableElements: 10, MaxTotalTableElements: 11},
			want: LimitError{Limit: LimitTableElements, Value: 12, Max: 11, Where: "module's tables"},
		},
		{
			// The 6.7 KB module of issue 11: 1,000 tables of 100k funcrefs.
			name: "table bomb, default limits",
			wasm: tablesModule(repeatLimits(1000, Limits{Min: 100_000, Max: 100_000, HasMax: true})...),
			want: LimitError{Limit: LimitTables, Value: 1000, Max: DefaultMaxTables, Where: "module"},
		},
		{
			name: "table bomb within the table count, default limits",
			wasm: tablesModule(repeatLimits(DefaultMaxTables, Limits{Min: 100_000})...),
			want: LimitError{Limit: LimitTableElements, Value: DefaultMaxTables * 100_000, Max: DefaultMaxTotalTableElements, Where: "module's tables"},
		},
		{
			name: "memory minimum",
			wasm: wasmModule(section(secMemory, vec([]byte{0, 20}))),
			opts: Options{MaxMemoryPages: 10},
			want: LimitError{Limit: LimitMemoryPages, Value: 20, Max: 10, Where: "memory"},
		},
		{
			name: "locals",
			wasm: wasmModule(
				section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
				section(secCode, vec(bodyWithLocals(cat(uleb(1), uleb(maxLocals+1), []byte{typeI32}), opEnd)))),
			want: LimitError{Limit: LimitLocals, Value: maxLocals + 1, Max: maxLocals, Where: "function 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Rewrite(tt.wasm, tt.opts)
			wantLimit(t, err, tt.want)
		})
	}
}

func repeatLimits(n int, l Limits) []Limits {
	ls := make([]Limits, n)
	for i := range ls {
		ls[i] = l
	}
	return ls
}

// At their limits the counts are accepted, reported in Info, and the
// output compiles.
func TestStructureLimitsAccepted(t *testing.T) {
	wasm := funcsModule(3, 2, brTableCode(100))
	out, info := mustRewrite(t, wasm, Options{MaxFunctions: 5, MaxFunctionBrTableTargets: 100, MaxBrTableTargets: 300})
	if info.Functions != 5 || info.FunctionBrTableTargets != 100 || info.BrTableTargets != 300 {
		t.Errorf("Info: %d functions, %d br_table labels in one function, %d in all; want 5, 100, 300",
			info.Functions, info.FunctionBrTableTargets, info.BrTableTargets)
	}
	rt := newRuntimeNoEnv(t)
	if _, err := rt.CompileModule(t.Context(), out); err != nil {
		t.Fatalf("compiling the output: %v", err)
	}

	// Tables within the total keep their minimums; their maxima are lowered
	// in index order to fit, and their bytes reported.
	_, info = mustRewrite(t, tablesModule(Limits{Min: 2}, Limits{Min: 3, Max: 10, HasMax: true}, Limits{Min: 1}),
		Options{MaxTableElements: 10, MaxTotalTableElements: 9})
	want := []Limits{{Min: 2, Max: 5, HasMax: true}, {Min: 3, Max: 3, HasMax: true}, {Min: 1, Max: 1, HasMax: true}}
	for i, tb := range info.Tables {
		if tb.Limits != want[i] {
			t.Errorf("table %d: limits %+v, want %+v", i, tb.Limits, want[i])
		}
	}
	if info.TableElements != 9 || info.TableBytes != 9*TableElementBytes {
		t.Errorf("Info: %d table elements, %d bytes; want 9, %d", info.TableElements, info.TableBytes, 9*TableElementBytes)
	}
}

// The br_table bomb of issue 11 (1,000,000 labels, which wazero compiled
// for more than 11 minutes) is refused on its label count, before its
// labels are read: in milliseconds; the bound here is a wide margin.
func TestBrTableBombRefusedAtOnce(t *testing.T) {
	wasm := funcsModule(1, 0, brTableCode(1_000_000))
	start := time.Now()
	_, _, err := Rewrite(wasm, Options{})
	elapsed := time.Since(start)
	wantLimit(t, err, LimitError{Limit: LimitBrTableTargets, Value: 1_000_000, Max: DefaultMaxFunctionBrTableTargets, Where: "function 0"})
	if elapsed > 5*time.Second {
		t.Errorf("refusing took %v", elapsed)
	}
}

// The bundled Go modules sit well within the default structure limits: at
// most a quarter of each. Their figures are the ones docs/host.md gives.
func TestBundledModulesWithinLimits(t *testing.T) {
	for _, pkg := range []string{"plugins-src/codec", "plugins-src/markup", "plugins-src/text"} {
		t.Run(pkg, func(t *testing.T) {
			wasm := testmodule.Go(t, pkg)
			_, info := mustRewrite(t, wasm, Options{})
			t.Logf("%d bytes: %d functions, %d tables, %d table elements (%d bytes), br_table labels %d in one function, %d in all",
				len(wasm), info.Functions, len(info.Tables), info.TableElements, info.TableBytes, info.FunctionBrTableTargets, info.BrTableTargets)
			var tableMins uint64
			for _, tb := range info.Tables {
				tableMins += uint64(tb.Declared.Min)
			}
			for _, c := range []struct {
				what       string
				value, max uint64
			}{
				{LimitFunctions, uint64(info.Functions), DefaultMaxFunctions},
				{LimitTables, uint64(len(info.Tables)), DefaultMaxTables},
				{LimitTableElements, tableMins, DefaultMaxTableElements},
				{LimitBrTableTargets + " in one function", info.FunctionBrTableTargets, DefaultMaxFunctionBrTableTargets},
				{LimitBrTableTargets, info.BrTableTargets, DefaultMaxBrTableTargets},
			} {
				if c.value > c.max/4 {
					t.Errorf("%s: %d is over a quarter of the default limit %d", c.what, c.value, c.max)
				}
			}
		})
	}
}

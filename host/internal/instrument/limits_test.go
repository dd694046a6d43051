package instrument

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit"
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
			// Depths 3 (the entry), then 2, 3, … for each block's end:
			// 3+2+…+10 = 57 after nine, 68 after ten.
			name: "dominator depths over the function's limit",
			wasm: funcsModule(1, 0, blockRun(10)),
			opts: Options{MaxFunctionDominatorDepths: 60},
			want: LimitError{Limit: LimitDominatorDepths, Value: 68, Max: 60, Where: "function 0"},
		},
		{
			// 23 a function: 46, then the third's 3 and 2, 3, 4, 5.
			name: "dominator depths over the module's limit",
			wasm: funcsModule(3, 0, blockRun(5)),
			opts: Options{MaxDominatorDepths: 60},
			want: LimitError{Limit: LimitDominatorDepths, Value: 63, Max: 60, Where: "module"},
		},
		{
			name: "br_ifs to one block and its end",
			wasm: funcsModule(1, 0, brIfRun(10)),
			opts: Options{MaxLabelBranches: 10},
			want: LimitError{Limit: LimitLabelBranches, Value: 11, Max: 10, Where: "function 0"},
		},
		{
			name: "returns",
			wasm: funcsModule(1, 0, cat(bytes.Repeat([]byte{opI32Const, 0, 0x0d, 0}, 9), []byte{0x0f, opEnd})),
			opts: Options{MaxLabelBranches: 9},
			want: LimitError{Limit: LimitLabelBranches, Value: 10, Max: 9, Where: "function 0"},
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
			wasm := testkit.Go(t, pkg)
			_, info := mustRewrite(t, wasm, Options{})
			t.Logf("%d bytes: %d functions, %d tables, %d table elements (%d bytes), br_table labels %d in one function, %d in all; "+
				"dominator depths %d in one function, %d in all; %d ways into one label",
				len(wasm), info.Functions, len(info.Tables), info.TableElements, info.TableBytes, info.FunctionBrTableTargets, info.BrTableTargets,
				info.FunctionDominatorDepths, info.DominatorDepths, info.LabelBranches)
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
				{LimitDominatorDepths + " in one function", info.FunctionDominatorDepths, DefaultMaxFunctionDominatorDepths},
				{LimitDominatorDepths, info.DominatorDepths, DefaultMaxDominatorDepths},
				{LimitLabelBranches, info.LabelBranches, DefaultMaxLabelBranches},
			} {
				if c.value > c.max/4 {
					t.Errorf("%s: %d is over a quarter of the default limit %d", c.what, c.value, c.max)
				}
			}
		})
	}
}

// ifRun is code of n `i32.const 0; if; end` in a row; brIfRun of n
// `i32.const 0; br_if 0` to one block; loopRun of n `loop; end`; blockRun
// of n `block; end`. Each construct is a level deeper in the dominator
// tree than the one before.
func ifRun(n int) []byte {
	return cat(bytes.Repeat([]byte{opI32Const, 0, opIf, blockEmpty, opEnd}, n), []byte{opEnd})
}

func brIfRun(n int) []byte {
	return cat([]byte{opBlock, blockEmpty}, bytes.Repeat([]byte{opI32Const, 0, 0x0d, 0}, n), []byte{opEnd, opEnd})
}

func loopRun(n int) []byte {
	return cat(bytes.Repeat([]byte{opLoop, blockEmpty, opEnd}, n), []byte{opEnd})
}

func blockRun(n int) []byte {
	return cat(bytes.Repeat([]byte{opBlock, blockEmpty, opEnd}, n), []byte{opEnd})
}

// ifTree is a tree of if/else nested k deep whose 2^k leaves are leaf.
func ifTree(k int, leaf []byte) []byte {
	if k == 0 {
		return leaf
	}
	sub := ifTree(k-1, leaf)
	return cat([]byte{opI32Const, 0, opIf, blockEmpty}, sub, []byte{opElse}, sub, []byte{opEnd})
}

// brTree is code whose 2^k leaves of an if tree all br to one block.
func brTree(k int) []byte {
	return cat([]byte{opBlock, blockEmpty}, ifTree(k, []byte{0x0c, byte(k)}), []byte{opEnd, opEnd})
}

// The dominator depths and label branches, counted exactly on small
// functions. An empty function is its entry's metering test: two arms at
// depth 1 and the code after it, at 1 (3). Each `block; end` in a row
// ends a level deeper: the i-th at depth i+1.
func TestDominatorDepths(t *testing.T) {
	for _, c := range []struct {
		code         []byte
		depths, labs uint64
	}{
		{[]byte{opEnd}, 3, 1},
		{blockRun(1), 3 + 2, 1},
		{blockRun(10), 3 + 10 + 55, 1},
		// Both arms of an if reach its end: the code after it is a level
		// below the condition (at 2), whatever the arms hold. The entry
		// (3), the arms (2, 2), the then-arm's test (3, 3, then 3), its
		// blocks (4…8), the else-arm's test (3, 3, 3), after the if (2).
		{cat([]byte{opI32Const, 0, opIf, blockEmpty}, blockRun(5)[:15], []byte{opElse, opEnd, opEnd}),
			3 + 4 + 9 + 30 + 9 + 2, 2},
		// n br_ifs to one block and its end: n+1 ways into its label.
		{brIfRun(10), 0, 11},
	} {
		_, info := mustRewrite(t, funcsModule(1, 0, c.code), Options{})
		if c.depths != 0 && info.FunctionDominatorDepths != c.depths {
			t.Errorf("%x: dominator depths %d, want %d", c.code, info.FunctionDominatorDepths, c.depths)
		}
		if info.DominatorDepths != info.FunctionDominatorDepths {
			t.Errorf("%x: module's dominator depths %d, function's %d", c.code, info.DominatorDepths, info.FunctionDominatorDepths)
		}
		if info.LabelBranches != c.labs {
			t.Errorf("%x: label branches %d, want %d", c.code, info.LabelBranches, c.labs)
		}
	}
}

// The compile bombs of issue 11, and more, under the default limits: each
// is refused on its count in milliseconds, before wazero would spend
// seconds to minutes compiling it (measured: 10,000 ifs in a row 2.4 s,
// 20,000 10 s, 40,000 br_ifs to one block 27 s, 10,000 loops 18 s). Their
// dominator depths would add up to 10 to 1,000 times the limit; the tree
// has 262,144 branches to one block, 8 times that limit. The time bound is
// a wide margin, not a speed.
func TestCompileBombsRefusedAtOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		code  []byte
		limit string
		max   uint64
	}{
		{"5,000 ifs in a row", ifRun(5_000), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"20,000 ifs in a row", ifRun(20_000), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"6,400 br_ifs to one block", brIfRun(6_400), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"40,000 br_ifs to one block", brIfRun(40_000), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"10,000 loops in a row", loopRun(10_000), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"100,000 blocks in a row", blockRun(100_000), LimitDominatorDepths, DefaultMaxFunctionDominatorDepths},
		{"262,144 brs to one block", brTree(18), LimitLabelBranches, DefaultMaxLabelBranches},
	} {
		t.Run(c.name, func(t *testing.T) {
			wasm := funcsModule(1, 0, c.code)
			start := time.Now()
			_, _, err := Rewrite(wasm, Options{})
			elapsed := time.Since(start)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.limit || le.Max != c.max || le.Where != "function 0" || le.Value <= le.Max {
				t.Fatalf("Rewrite: %v, want %s over %d in function 0", err, c.limit, c.max)
			}
			if elapsed > 5*time.Second {
				t.Errorf("refusing took %v", elapsed)
			}
			t.Logf("%d bytes refused in %v: %v", len(wasm), elapsed, err)
		})
	}
}

// The largest run of each kind the default limits accept is accepted, one
// more is refused, and the output compiles; the compile times the log
// shows are those docs/host.md gives. A limit set to a module's own count
// accepts it, one less refuses it with that count.
func TestCompileBombsAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func(int) []byte
	}{
		{"ifs in a row", ifRun},
		{"br_ifs to one block", brIfRun},
		{"loops in a row", loopRun},
	} {
		t.Run(c.name, func(t *testing.T) {
			accepted := func(n int) bool {
				_, _, err := Rewrite(funcsModule(1, 0, c.gen(n)), Options{})
				return err == nil
			}
			lo, hi := 1, 1<<16 // accepted(lo), !accepted(hi)
			if !accepted(lo) || accepted(hi) {
				t.Fatalf("accepted(%d) = %v, accepted(%d) = %v", lo, accepted(lo), hi, accepted(hi))
			}
			for hi-lo > 1 {
				if mid := (lo + hi) / 2; accepted(mid) {
					lo = mid
				} else {
					hi = mid
				}
			}
			wasm := funcsModule(1, 0, c.gen(lo))
			out, info := mustRewrite(t, wasm, Options{})
			_, _, err := Rewrite(funcsModule(1, 0, c.gen(lo+1)), Options{})
			wantLimitName(t, err, LimitDominatorDepths)

			start := time.Now()
			cm, err := newRuntimeNoEnv(t).CompileModule(t.Context(), out)
			if err != nil {
				t.Fatalf("compiling the output: %v", err)
			}
			t.Logf("%d in a row, %d bytes (%d instrumented), dominator depths %d: compiled in %v",
				lo, len(wasm), len(out), info.FunctionDominatorDepths, time.Since(start))
			cm.Close(t.Context())

			exact := info.FunctionDominatorDepths
			mustRewrite(t, wasm, Options{MaxFunctionDominatorDepths: exact, MaxDominatorDepths: exact})
			_, _, err = Rewrite(wasm, Options{MaxFunctionDominatorDepths: exact - 1})
			wantLimit(t, err, LimitError{Limit: LimitDominatorDepths, Value: exact, Max: exact - 1, Where: "function 0"})
			_, _, err = Rewrite(wasm, Options{MaxDominatorDepths: exact - 1})
			wantLimit(t, err, LimitError{Limit: LimitDominatorDepths, Value: exact, Max: exact - 1, Where: "module"})
		})
	}
}

// A tree whose 32,768 leaves all br to one block, exactly at the default
// limit of ways into one label, is accepted and compiles.
func TestLabelBranchesAtTheLimit(t *testing.T) {
	wasm := funcsModule(1, 0, brTree(15))
	out, info := mustRewrite(t, wasm, Options{})
	if info.LabelBranches != DefaultMaxLabelBranches {
		t.Fatalf("label branches %d, want %d", info.LabelBranches, DefaultMaxLabelBranches)
	}
	_, _, err := Rewrite(wasm, Options{MaxLabelBranches: DefaultMaxLabelBranches - 1})
	wantLimit(t, err, LimitError{Limit: LimitLabelBranches, Value: DefaultMaxLabelBranches, Max: DefaultMaxLabelBranches - 1, Where: "function 0"})
	if testing.Short() {
		t.Skip("compiling takes seconds")
	}
	start := time.Now()
	cm, err := newRuntimeNoEnv(t).CompileModule(t.Context(), out)
	if err != nil {
		t.Fatalf("compiling the output: %v", err)
	}
	t.Logf("%d bytes (%d instrumented), dominator depths %d: compiled in %v", len(wasm), len(out), info.FunctionDominatorDepths, time.Since(start))
	cm.Close(t.Context())
}

func wantLimitName(t *testing.T, err error, limit string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		t.Fatalf("got error %v, want a *LimitError %s", err, limit)
	}
}

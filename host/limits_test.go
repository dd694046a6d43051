package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"toolhost/host"
	"toolhost/host/internal/instrument"
)

// The host's limit names are the instrumenter's, which it passes on.
func TestLimitNames(t *testing.T) {
	for _, c := range [][2]string{
		{host.LimitFunctions, instrument.LimitFunctions},
		{host.LimitTables, instrument.LimitTables},
		{host.LimitTableElements, instrument.LimitTableElements},
		{host.LimitBrTableTargets, instrument.LimitBrTableTargets},
		{host.LimitDominatorDepths, instrument.LimitDominatorDepths},
		{host.LimitLabelBranches, instrument.LimitLabelBranches},
		{host.LimitMemoryPages, instrument.LimitMemoryPages},
		{host.LimitLocals, instrument.LimitLocals},
		{host.LimitBlockNesting, instrument.LimitBlockNesting},
	} {
		if c[0] != c[1] {
			t.Errorf("host limit %q, instrument limit %q", c[0], c[1])
		}
	}
}

// A tiny module builder for the modules too large to commit as WAT.

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func section(id byte, payload []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(payload)))...), payload...)
}

// funcsModule is a module of n () -> () functions, each with the body code
// (its locals and final end included).
func funcsModule(n int, code []byte) []byte {
	funcs := uleb(uint64(n))
	bodies := uleb(uint64(n))
	for i := 0; i < n; i++ {
		funcs = append(funcs, 0)
		bodies = append(append(bodies, uleb(uint64(len(code)))...), code...)
	}
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	wasm = append(wasm, section(1, []byte{1, 0x60, 0, 0})...)
	wasm = append(wasm, section(3, funcs)...)
	return append(wasm, section(10, bodies)...)
}

// brTableBody is a function body running a br_table of labels labels (its
// default included), all to one block.
func brTableBody(labels int) []byte {
	code := append([]byte{0, 0x02, 0x40, 0x41, 0, 0x0e}, uleb(uint64(labels-1))...)
	code = append(code, make([]byte, labels)...)
	return append(code, 0x0b, 0x0b)
}

// runBody is a function body of n units in a row: (i32.const 0; if; end)
// for "if", (i32.const 0; br_if 0) inside one block for "br_if", (loop;
// end) for "loop".
func runBody(kind string, n int) []byte {
	var unit []byte
	switch kind {
	case "if":
		unit = []byte{0x41, 0, 0x04, 0x40, 0x0b}
	case "br_if":
		unit = []byte{0x41, 0, 0x0d, 0}
	case "loop":
		unit = []byte{0x03, 0x40, 0x0b}
	}
	code := []byte{0}
	if kind == "br_if" {
		code = append(code, 0x02, 0x40)
	}
	for i := 0; i < n; i++ {
		code = append(code, unit...)
	}
	if kind == "br_if" {
		code = append(code, 0x0b)
	}
	return append(code, 0x0b)
}

func wantLimit(t *testing.T, err error, limit string, value, max uint64) {
	t.Helper()
	var le *host.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("Load error %v, want a *host.LimitError %s", err, limit)
	}
	if !errors.Is(err, host.ErrModule) {
		t.Errorf("%v does not wrap ErrModule", err)
	}
	if le.Limit != limit || le.Value != value || le.Max != max {
		t.Errorf("Load error %+v, want limit %s, value %d, max %d", *le, limit, value, max)
	}
}

// Each structure bomb is refused at load, before it is compiled, with its
// limit's name; the hostile fixtures are refused under lowered limits,
// the large bombs, generated here, under the defaults. Every refusal comes
// from the instrumenter, which runs before the compiler, and takes
// milliseconds; the bound checked is a wide margin over that, not a speed.
func TestModuleStructureLimits(t *testing.T) {
	tests := []struct {
		name       string
		wasm       []byte
		cfg        host.Config
		limit      string
		value, max uint64
	}{
		{name: "br_table fixture", wasm: hostile(t, "br_table_bomb"), cfg: host.Config{MaxFunctionBrTableTargets: 200},
			limit: host.LimitBrTableTargets, value: 201, max: 200},
		{name: "br_table of 1,000,000 labels", wasm: funcsModule(1, brTableBody(1_000_000)),
			limit: host.LimitBrTableTargets, value: 1_000_000, max: host.DefaultMaxFunctionBrTableTargets},
		{name: "br_tables over the module's total", wasm: funcsModule(200, brTableBody(10_001)),
			limit: host.LimitBrTableTargets, value: 2_000_200, max: host.DefaultMaxBrTableTargets},
		{name: "function fixture", wasm: hostile(t, "function_bomb"), cfg: host.Config{MaxFunctions: 300},
			limit: host.LimitFunctions, value: 301, max: 300},
		{name: "functions over the default", wasm: funcsModule(host.DefaultMaxFunctions+1, []byte{0, 0x0b}),
			limit: host.LimitFunctions, value: host.DefaultMaxFunctions + 1, max: host.DefaultMaxFunctions},
		{name: "1,000 tables of 100,000 funcrefs", wasm: hostile(t, "tables_bomb"),
			limit: host.LimitTables, value: 1000, max: host.DefaultMaxTables},
		{name: "tables over the total", wasm: hostile(t, "table_charge"), cfg: host.Config{MaxTotalTableElements: 999_999},
			limit: host.LimitTableElements, value: 1_000_000, max: 999_999},
		{name: "if-run fixture", wasm: hostile(t, "if_run_bomb"), cfg: host.Config{MaxFunctionDominatorDepths: 100_000},
			limit: host.LimitDominatorDepths, value: 100_039, max: 100_000},
		{name: "br_if fixture", wasm: hostile(t, "br_if_bomb"), cfg: host.Config{MaxLabelBranches: 300},
			limit: host.LimitLabelBranches, value: 301, max: 300},
		// The compile bombs of issue 11: 20,000 ifs in a row compiled in
		// 10 s, 40,000 br_ifs to one block in 27 s; 10,000 loops in 18 s.
		{name: "20,000 ifs in a row", wasm: funcsModule(1, runBody("if", 20_000)),
			limit: host.LimitDominatorDepths, value: 16_001_954, max: host.DefaultMaxFunctionDominatorDepths},
		{name: "40,000 br_ifs to one block", wasm: funcsModule(1, runBody("br_if", 40_000)),
			limit: host.LimitDominatorDepths, value: 16_002_000, max: host.DefaultMaxFunctionDominatorDepths},
		{name: "10,000 loops in a row", wasm: funcsModule(1, runBody("loop", 10_000)),
			limit: host.LimitDominatorDepths, value: 16_002_335, max: host.DefaultMaxFunctionDominatorDepths},
		// Functions each within the limit, 1,460 loops in a row (which
		// compile in about 0.2 s), add up over the module's.
		{name: "loop runs over the module's total", wasm: funcsModule(5, runBody("loop", 1_460)),
			limit: host.LimitDominatorDepths, value: 64_000_031, max: host.DefaultMaxDominatorDepths},
		{name: "module over MaxModuleBytes", wasm: make([]byte, host.MaxModuleBytes+1),
			limit: host.LimitModuleBytes, value: host.MaxModuleBytes + 1, max: host.MaxModuleBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRuntime(t, tt.cfg)
			start := time.Now()
			m, err := r.Load(context.Background(), tt.wasm)
			elapsed := time.Since(start)
			if err == nil {
				m.Close(context.Background())
			}
			wantLimit(t, err, tt.limit, tt.value, tt.max)
			if elapsed > 5*time.Second {
				t.Errorf("refusing took %v", elapsed)
			}
		})
	}
}

// The fixtures load under the default limits: the br_table, function,
// if-run and br_if fixtures are well within them.
func TestModuleStructureWithinLimits(t *testing.T) {
	r := newRuntime(t, host.Config{})
	for _, name := range []string{"br_table_bomb", "function_bomb", "table_charge", "if_run_bomb", "br_if_bomb"} {
		load(t, r, name).Close(context.Background())
	}
}

// A module's tables, at their maxima, count toward each call's memory
// limit with the memory's minimum: table_charge's ten tables of 100,000
// elements need 8,000,000 bytes, its memory 65,536.
func TestTablesChargedToMemoryLimit(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "table_charge")
	defer m.Close(context.Background())
	need := uint64(10*100_000*host.TableElementBytes + 1<<16)
	if _, err := m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: need}); err != nil {
		t.Fatalf("Call within the memory limit: %v", err)
	}
	_, err := m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: need - 1})
	if !isCode(err, host.CodeMemoryLimit) {
		t.Fatalf("Call one byte short: %v, want memory_limit", err)
	}
}

// Imported tables and globals are refused by the import check, naming
// them, before the module is compiled.
func TestImportedTableAndGlobalRefused(t *testing.T) {
	r := newRuntime(t, host.Config{})
	for _, c := range []struct{ module, want string }{
		{"imported_table", "table env.table"},
		{"imported_global", "global env.counter"},
	} {
		_, err := r.Load(context.Background(), hostile(t, c.module))
		if !errors.Is(err, host.ErrImport) || errors.Is(err, host.ErrModule) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v, want ErrImport naming %s", c.module, err, c.want)
		}
	}
}

// Modules at the dominator-depth limits load: four functions of 1,460
// loops in a row, each within the function's limit and together within
// the module's (63,991,812), the costliest run per depth measured; and
// 1,999 br_ifs to one block, each a way into one label. The times logged
// are the worst docs/host.md gives for a module within the limits.
func TestModuleAtDominatorDepthLimitsLoads(t *testing.T) {
	r := newRuntime(t, host.Config{})
	for _, c := range []struct {
		name string
		wasm []byte
	}{
		{"4 × 1,460 loops", funcsModule(4, runBody("loop", 1_460))},
		{"1,999 br_ifs", funcsModule(1, runBody("br_if", 1_999))},
	} {
		start := time.Now()
		m, err := r.Load(context.Background(), c.wasm)
		if err != nil {
			t.Fatalf("Load(%s): %v", c.name, err)
		}
		t.Logf("%s: %d bytes loaded in %v", c.name, len(c.wasm), time.Since(start))
		m.Close(context.Background())
	}
}

package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/internal/instrument"
	"github.com/toolhost/toolhost/internal/testkit"
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
		{name: "br_table fixture", wasm: hostile(t, "br_table_bomb"), cfg: host.Config{ModuleLimits: host.ModuleLimits{MaxFunctionBrTableTargets: 200}},
			limit: host.LimitBrTableTargets, value: 201, max: 200},
		{name: "br_table of 1,000,000 labels", wasm: testkit.Funcs(1, testkit.BrTableBody(1_000_000)),
			limit: host.LimitBrTableTargets, value: 1_000_000, max: host.DefaultMaxFunctionBrTableTargets},
		{name: "br_tables over the module's total", wasm: testkit.Funcs(200, testkit.BrTableBody(10_001)),
			limit: host.LimitBrTableTargets, value: 2_000_200, max: host.DefaultMaxBrTableTargets},
		{name: "function fixture", wasm: hostile(t, "function_bomb"), cfg: host.Config{ModuleLimits: host.ModuleLimits{MaxFunctions: 300}},
			limit: host.LimitFunctions, value: 301, max: 300},
		{name: "functions over the default", wasm: testkit.Funcs(host.DefaultMaxFunctions+1, []byte{0, 0x0b}),
			limit: host.LimitFunctions, value: host.DefaultMaxFunctions + 1, max: host.DefaultMaxFunctions},
		{name: "1,000 tables of 100,000 funcrefs", wasm: hostile(t, "tables_bomb"),
			limit: host.LimitTables, value: 1000, max: host.DefaultMaxTables},
		{name: "tables over the total", wasm: hostile(t, "table_charge"), cfg: host.Config{ModuleLimits: host.ModuleLimits{MaxTotalTableElements: 999_999}},
			limit: host.LimitTableElements, value: 1_000_000, max: 999_999},
		{name: "if-run fixture", wasm: hostile(t, "if_run_bomb"), cfg: host.Config{ModuleLimits: host.ModuleLimits{MaxFunctionDominatorDepths: 100_000}},
			limit: host.LimitDominatorDepths, value: 100_039, max: 100_000},
		{name: "br_if fixture", wasm: hostile(t, "br_if_bomb"), cfg: host.Config{ModuleLimits: host.ModuleLimits{MaxLabelBranches: 300}},
			limit: host.LimitLabelBranches, value: 301, max: 300},
		// The compile bombs of issue 11: 20,000 ifs in a row compiled in
		// 10 s, 40,000 br_ifs to one block in 27 s; 10,000 loops in 18 s.
		{name: "20,000 ifs in a row", wasm: testkit.Funcs(1, testkit.RunBody("if", 20_000)),
			limit: host.LimitDominatorDepths, value: 16_001_954, max: host.DefaultMaxFunctionDominatorDepths},
		{name: "40,000 br_ifs to one block", wasm: testkit.Funcs(1, testkit.RunBody("br_if", 40_000)),
			limit: host.LimitDominatorDepths, value: 16_002_000, max: host.DefaultMaxFunctionDominatorDepths},
		{name: "10,000 loops in a row", wasm: testkit.Funcs(1, testkit.RunBody("loop", 10_000)),
			limit: host.LimitDominatorDepths, value: 16_002_335, max: host.DefaultMaxFunctionDominatorDepths},
		// Functions each within the limit, 1,460 loops in a row (which
		// compile in about 0.2 s), add up over the module's.
		{name: "loop runs over the module's total", wasm: testkit.Funcs(5, testkit.RunBody("loop", 1_460)),
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
		{"4 × 1,460 loops", testkit.Funcs(4, testkit.RunBody("loop", 1_460))},
		{"1,999 br_ifs", testkit.Funcs(1, testkit.RunBody("br_if", 1_999))},
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

package pac

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadSolution(t *testing.T) {
	for _, tc := range []struct {
		file, status string
		values       map[string]float64
		wantErr      bool
	}{
		{"optimal.txt", SolverOptimal, map[string]float64{"d0": 0, "n0": 15, "n1": 5}, false},
		{"feasible.txt", SolverFeasible, map[string]float64{"d0": 1907.2832, "n0": 3}, false},
		// The LP relaxation cbc writes when time ran out without an
		// integer solution is no plan: no values are read from it.
		{"no_solution.txt", SolverNoSolution, nil, false},
		{"infeasible.txt", SolverInfeasible, nil, false},
		{"integer_infeasible.txt", SolverInfeasible, nil, false},
		{"unbounded.txt", "", nil, true},
		{"iterations.txt", "", nil, true},
		{"missing.txt", "", nil, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sol, err := readSolution(filepath.Join("testdata", "solutions", tc.file))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if sol.status != tc.status || !reflect.DeepEqual(sol.values, tc.values) {
				t.Errorf("solution = %+v", sol)
			}
		})
	}
}

func TestReadGap(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "logs", "stopped.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gap := readGap(f)
	want := (236797.41042139 - 236795.971) / 236797.41042139
	if gap == nil || math.Abs(*gap-want) > 1e-15 {
		t.Errorf("gap = %v, want %v", gap, want)
	}
	g, err := os.Open(filepath.Join("testdata", "logs", "optimal.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if gap := readGap(g); gap != nil {
		t.Errorf("a log without a bound gives gap %v", *gap)
	}
}

func TestRunCBCInfeasible(t *testing.T) {
	requireCBC(t)
	// x + y ≥ 5 and x + y ≤ 3: cbc proves it infeasible.
	m := &lpModel{objective: []string{term(1, "x")}}
	m.row("c0", []string{term(1, "x"), term(1, "y")}, ">=", 5)
	m.row("c1", []string{term(1, "x"), term(1, "y")}, "<=", 3)
	m.bounds = []string{"0 <= x <= 10"}
	m.general = []string{"x"}
	sol, err := runCBC(t.Context(), t.TempDir(), m.bytes(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if sol.status != SolverInfeasible || sol.values != nil {
		t.Errorf("solution = %+v", sol)
	}
}

func TestRunCBCCancelled(t *testing.T) {
	requireCBC(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p := newPlanner(newScenario(ptr(randomPlan(50, 50, 13, "1")), true))
	if _, err := runCBC(ctx, t.TempDir(), p.model(), 30*time.Second); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
}

func TestModelFormat(t *testing.T) {
	p := newPlanner(newScenario(ptr(handChecked()), true))
	lp := string(p.model())
	for _, want := range []string{
		"Minimize\n obj:\n  + 1 d0\n  + 1 d1\n  + 2e-05 z\n",
		" dp0:\n  + 1 d0\n  - 40 n0\n  >= -600\n",
		" up1:\n  + 1 n1\n  - 6 y1\n  <= 0\n", // C: at most ceil(400 / 70) = 6 lots
		" budget:\n  + 40 n0\n  + 70 n1\n  <= 1000\n",
		"Bounds\n 0 <= n0 <= 15\n 0 <= n1 <= 6\n z free\n",
		"General\n n0\n n1\nBinary\n y0\n y1\nEnd\n",
	} {
		if !strings.Contains(lp, want) {
			t.Errorf("the model lacks %q:\n%s", want, lp)
		}
	}
	if strings.Contains(lp, "fa0") || strings.Contains(lp, "orders") {
		t.Errorf("rows without fees or an order limit:\n%s", lp)
	}
}

func TestLotsRepair(t *testing.T) {
	// The hand-checked portfolio (plan_test.go). A solver answer of 15 A
	// and 6 C is 20 over the cash: removing a lot of C adds 30 to the
	// deviation (20 → 50), one of A 40 (0 → 40), so C loses one.
	p := newPlanner(newScenario(ptr(handChecked()), true))
	lots, adjusted := p.lots(map[string]float64{"n0": 15, "n1": 6})
	if !adjusted || !reflect.DeepEqual(lots, []int64{15, 0, 5}) {
		t.Errorf("lots = %v adjusted %v", lots, adjusted)
	}
	// Values within the integrality tolerance round to the integer.
	lots, adjusted = p.lots(map[string]float64{"n0": 14.9999999, "n1": 5.0000001})
	if adjusted || !reflect.DeepEqual(lots, []int64{15, 0, 5}) {
		t.Errorf("lots = %v adjusted %v", lots, adjusted)
	}
	// One order allowed: the order whose removal adds least goes.
	in := handChecked()
	one := 1
	in.MaxOrders = &one
	p = newPlanner(newScenario(&in, true))
	lots, adjusted = p.lots(map[string]float64{"n0": 15, "n1": 5})
	if !adjusted || !reflect.DeepEqual(lots, []int64{15, 0, 0}) {
		t.Errorf("lots = %v adjusted %v", lots, adjusted)
	}
	// Below a minimum order: dropped.
	in = handChecked()
	in.Targets[2].MinOrder = str("400")
	p = newPlanner(newScenario(&in, true))
	lots, adjusted = p.lots(map[string]float64{"n0": 14, "n1": 5})
	if !adjusted || !reflect.DeepEqual(lots, []int64{14, 0, 0}) {
		t.Errorf("lots = %v adjusted %v", lots, adjusted)
	}
}

func TestSolverLeavesNoFiles(t *testing.T) {
	requireCBC(t)
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	mustRun(t, handChecked())
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("the solve left %d entries in TMPDIR", len(entries))
	}
}

func ptr[T any](v T) *T { return &v }

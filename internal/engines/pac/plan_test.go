package pac

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// handChecked is the portfolio every hand-checked plan starts from, in
// EUR with no cash:
//
//	A: 10 held at 40 (400), target 0.5
//	B:  4 held at 150 (600), target 0.3
//	C:  0 held at 70, target 0.2
//
// With a contribution of 1000 the reference total is 1000 + 1000 = 2000
// and the target values are A 1000, B 600, C 400: B is on target, A is
// 600 short and C 400 short. Buying a lots of A and c lots of C leaves a
// deviation of |600 − 40a| + |400 − 70c| (B's is 0: buying B only adds to
// it), with 40a + 70c ≤ 1000. Working through c:
//
//	c = 6 (420, deviation 20): a ≤ 14.5, a = 14 (560, deviation 40) → 60
//	c = 5 (350, deviation 50): a ≤ 16.25, a = 15 (600, deviation 0) → 50
//	c = 4 (280, deviation 120): a = 15 → 120, and fewer C only worse
//
// so the optimum is a = 15, c = 5: deviation 50 (from 1000 before),
// invested 950, 50 left.
func handChecked() Input {
	return Input{
		Operation: OpPlan, Currency: "EUR", Contribution: "1000",
		Holdings: []Holding{holding("A", "10", "40"), holding("B", "4", "150"), holding("C", "0", "70")},
		Targets: []Target{
			{InstrumentID: "A", Weight: "0.5"},
			{InstrumentID: "B", Weight: "0.3"},
			{InstrumentID: "C", Weight: "0.2"},
		},
	}
}

// orderSummary is an order's id, lots, amount and fee.
type orderSummary struct {
	id          string
	lots        int64
	amount, fee string
}

func summarize(orders []Order) []orderSummary {
	out := []orderSummary{}
	for _, o := range orders {
		out = append(out, orderSummary{o.InstrumentID, o.Lots, o.Amount, o.Fee})
	}
	return out
}

func TestPlanHandChecked(t *testing.T) {
	requireCBC(t)
	for _, tc := range []struct {
		name   string
		in     func() Input
		orders []orderSummary
		// invested, fees, remaining cash, deviation
		totals [4]string
	}{
		{
			name:   "whole lots",
			in:     handChecked,
			orders: []orderSummary{{"A", 15, "600.00", "0.00"}, {"C", 5, "350.00", "0.00"}},
			totals: [4]string{"950.00", "0.00", "50.00", "50.00"},
		},
		{
			// C in lots of 0.01 share (0.70 EUR): 571 lots are 399.70
			// (deviation 0.30), 572 would be 400.40 and, with A's 600,
			// more than the 1000 available.
			name: "fractional lots",
			in: func() Input {
				in := handChecked()
				in.Targets[2].LotSize = str("0.01")
				return in
			},
			orders: []orderSummary{{"A", 15, "600.00", "0.00"}, {"C", 571, "399.70", "0.00"}},
			totals: [4]string{"999.70", "0.00", "0.30", "0.30"},
		},
		{
			// A fixed fee of 30 an order: a = 15, c = 5 would cost
			// 600 + 350 + 60 = 1010. With two orders 40a + 70c ≤ 940:
			// c = 5, a = 14 → 40 + 50 = 90; c = 6, a = 13 → 80 + 20 = 100;
			// c = 4, a = 15 → 120. One order: A alone 15 lots → 400
			// (C's), C alone 6 lots → 620. Optimum a = 14, c = 5: 90.
			name: "a fixed fee changes the answer",
			in: func() Input {
				in := handChecked()
				in.Fees = &Fees{Fixed: str("30")}
				return in
			},
			orders: []orderSummary{{"A", 14, "560.00", "30.00"}, {"C", 5, "350.00", "30.00"}},
			totals: [4]string{"910.00", "60.00", "30.00", "90.00"},
		},
		{
			// A minimum order of 400 on C: 5 lots (350) are no longer an
			// order; c = 6 (420, deviation 20) leaves a ≤ 14.5, a = 14
			// (deviation 40) → 60; c = 0 leaves C's 400.
			name: "a minimum order changes the answer",
			in: func() Input {
				in := handChecked()
				in.Targets[2].MinOrder = str("400")
				return in
			},
			orders: []orderSummary{{"A", 14, "560.00", "0.00"}, {"C", 6, "420.00", "0.00"}},
			totals: [4]string{"980.00", "0.00", "20.00", "60.00"},
		},
		{
			// The fee is max(minimum, fixed + proportional × amount) =
			// max(5, 1 + 1 % of the amount): A's 600 pays 7, C's 350
			// pays max(5, 4.50) = 5. With a = 15, c = 5 the total is
			// 600 + 7 + 350 + 5 = 962 ≤ 1000: the optimum of the first
			// case still fits, and fees are reported exactly.
			name: "proportional and minimum fees",
			in: func() Input {
				in := handChecked()
				in.Fees = &Fees{Fixed: str("1"), Proportional: str("0.01"), Minimum: str("5")}
				return in
			},
			orders: []orderSummary{{"A", 15, "600.00", "7.00"}, {"C", 5, "350.00", "5.00"}},
			totals: [4]string{"950.00", "12.00", "38.00", "50.00"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustRun(t, tc.in())
			if out.Status != StatusReady || out.Plan == nil || out.Solver == nil {
				t.Fatalf("out = %+v", out)
			}
			if out.Solver.Status != SolverOptimal || out.Solver.Engine != "cbc" || out.Solver.TimeLimitMS != 30000 || out.Solver.Adjusted {
				t.Errorf("solver = %+v", *out.Solver)
			}
			p := out.Plan
			if got := summarize(p.Orders); !reflect.DeepEqual(got, tc.orders) {
				t.Errorf("orders = %v, want %v", got, tc.orders)
			}
			if got := [4]string{p.Invested, p.Fees, p.RemainingCash, p.Deviation}; got != tc.totals {
				t.Errorf("invested, fees, remaining, deviation = %v, want %v", got, tc.totals)
			}
			if p.Available != "1000.00" || p.ValueBefore != "1000.00" || p.ReferenceTotal != "2000.00" || p.DeviationBefore != "1000.00" {
				t.Errorf("plan = %+v", *p)
			}
		})
	}
}

// TestPlanReport checks every field of the first hand-checked plan.
func TestPlanReport(t *testing.T) {
	requireCBC(t)
	out := mustRun(t, handChecked())
	p := out.Plan
	wantOrders := []Order{
		{InstrumentID: "A", Lots: 15, Quantity: "15", Price: "40", Currency: "EUR", Amount: "600.00", Fee: "0.00"},
		{InstrumentID: "C", Lots: 5, Quantity: "5", Price: "70", Currency: "EUR", Amount: "350.00", Fee: "0.00"},
	}
	if !reflect.DeepEqual(p.Orders, wantOrders) {
		t.Errorf("orders = %+v", p.Orders)
	}
	// Weights after are of the wealth after: 1950 held + 50 cash.
	wantAllocation := []Allocation{
		{InstrumentID: "A", TargetWeight: "0.5", TargetValue: "1000.00", ValueBefore: "400.00", ValueAfter: "1000.00", WeightBefore: "0.200000", WeightAfter: "0.500000", Deviation: "0.00"},
		{InstrumentID: "B", TargetWeight: "0.3", TargetValue: "600.00", ValueBefore: "600.00", ValueAfter: "600.00", WeightBefore: "0.300000", WeightAfter: "0.300000", Deviation: "0.00"},
		{InstrumentID: "C", TargetWeight: "0.2", TargetValue: "400.00", ValueBefore: "0.00", ValueAfter: "350.00", WeightBefore: "0.000000", WeightAfter: "0.175000", Deviation: "50.00"},
	}
	if !reflect.DeepEqual(p.Allocation, wantAllocation) {
		t.Errorf("allocation =\n%+v\nwant\n%+v", p.Allocation, wantAllocation)
	}
	if p.ValueAfter != "1950.00" || len(p.Unaffordable) != 0 {
		t.Errorf("plan = %+v", *p)
	}
}

func TestPlanMaxOrders(t *testing.T) {
	requireCBC(t)
	// Nothing held, 1000 to invest at 10 a share toward 0.5 / 0.3 / 0.2:
	// 50, 30 and 20 shares reach every target. With two orders the one
	// left out keeps its whole shortfall (money put into the others past
	// their target only adds deviation), so C (200) is left out: 50 A,
	// 30 B, deviation 200, 200 left.
	in := Input{
		Operation: OpPlan, Currency: "EUR", Contribution: "1000",
		Holdings: []Holding{holding("A", "0", "10"), holding("B", "0", "10"), holding("C", "0", "10")},
		Targets:  []Target{{InstrumentID: "A", Weight: "0.5"}, {InstrumentID: "B", Weight: "0.3"}, {InstrumentID: "C", Weight: "0.2"}},
	}
	out := mustRun(t, in)
	if got := summarize(out.Plan.Orders); len(got) != 3 {
		t.Fatalf("without a limit: orders = %v, want 3", got)
	}
	two := 2
	in.MaxOrders = &two
	out = mustRun(t, in)
	want := []orderSummary{{"A", 50, "500.00", "0.00"}, {"B", 30, "300.00", "0.00"}}
	if got := summarize(out.Plan.Orders); !reflect.DeepEqual(got, want) || out.Plan.Deviation != "200.00" || out.Plan.RemainingCash != "200.00" {
		t.Errorf("orders = %v, deviation %s, remaining %s", got, out.Plan.Deviation, out.Plan.RemainingCash)
	}
}

func TestPlanSpreadsAmongUnderweights(t *testing.T) {
	requireCBC(t)
	// Z (10000, target 0) cannot be sold: the reference total is 11000,
	// the targets X 6600 and Y 4400, and whatever the split of 1000 both
	// stay under target, so the total absolute deviation is 20000 for
	// every split. The tie-break spreads the money in proportion to the
	// weights: (6600 − x) / 0.6 = (4400 − y) / 0.4 with x + y = 1000
	// gives x = 600, y = 400.
	in := Input{
		Operation: OpPlan, Currency: "EUR", Contribution: "1000",
		Holdings: []Holding{holding("X", "0", "10"), holding("Y", "0", "10"), holding("Z", "100", "100")},
		Targets:  []Target{{InstrumentID: "X", Weight: "0.6"}, {InstrumentID: "Y", Weight: "0.4"}},
	}
	out := mustRun(t, in)
	want := []orderSummary{{"X", 60, "600.00", "0.00"}, {"Y", 40, "400.00", "0.00"}}
	if got := summarize(out.Plan.Orders); !reflect.DeepEqual(got, want) || out.Plan.Deviation != "20000.00" || out.Plan.DeviationBefore != "21000.00" {
		t.Errorf("orders = %v, deviation %s", got, out.Plan.Deviation)
	}
}

func TestPlanNothingAffordable(t *testing.T) {
	// A minimum order of 2000 with 1000 available: the only plan is to
	// buy nothing. B (100, target 0) makes the reference total 1100, so
	// the deviation stays 1100 (A) + 100 (B). That is an answer, not an infeasible model (buying
	// nothing always fits): ready, no order, the solver not run, and A
	// listed as unaffordable. No cbc is needed.
	in := Input{
		Operation: OpPlan, Currency: "EUR", Contribution: "900", Cash: str("100"),
		Holdings: []Holding{holding("A", "0", "10"), holding("B", "5", "20")},
		Targets:  []Target{{InstrumentID: "A", Weight: "1", MinOrder: str("2000")}},
	}
	out := mustRun(t, in)
	if out.Status != StatusReady || out.Solver != nil || len(out.Plan.Orders) != 0 {
		t.Fatalf("out = %+v", out)
	}
	p := out.Plan
	if !reflect.DeepEqual(p.Unaffordable, []string{"A"}) || p.RemainingCash != "1000.00" || p.Invested != "0.00" || p.Deviation != p.DeviationBefore || p.Deviation != "1200.00" {
		t.Errorf("plan = %+v", *p)
	}
	// A minimum fee above the cash does the same.
	in.Targets[0].MinOrder = nil
	in.Fees = &Fees{Minimum: str("1000")}
	out = mustRun(t, in)
	if out.Status != StatusReady || out.Solver != nil || !reflect.DeepEqual(out.Plan.Unaffordable, []string{"A"}) {
		t.Errorf("out = %+v", out)
	}
}

func TestPlanNeedsInputAndInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(in *Input)
		status string
		prices []string
		rates  []string
		issues []Issue
	}{
		{
			name:   "missing price",
			edit:   func(in *Input) { in.Holdings[2].Price = nil },
			status: StatusNeedsInput, prices: []string{"C"}, rates: []string{},
		},
		{
			name: "missing rate",
			edit: func(in *Input) {
				in.Holdings[1].Currency = "USD"
			},
			status: StatusNeedsInput, prices: []string{}, rates: []string{"USD"},
		},
		{
			name: "an untargeted, unheld holding needs no price",
			edit: func(in *Input) {
				in.Holdings = append(in.Holdings, Holding{InstrumentID: "D", Quantity: "0", Currency: "JPY"})
			},
			status: StatusReady, prices: []string{}, rates: []string{},
		},
		{
			name:   "weights that do not sum to 1",
			edit:   func(in *Input) { in.Targets[2].Weight = "0.19" },
			status: StatusInvalid, prices: []string{}, rates: []string{},
			issues: []Issue{{"weights_sum", "/targets"}},
		},
		{
			// 600 EUR short in lots of 4e-9 EUR: 1.5e11 lots.
			name:   "a lot size too fine for the solver",
			edit:   func(in *Input) { in.Targets[0].LotSize = str("0.0000000001") },
			status: StatusInvalid, prices: []string{}, rates: []string{},
			issues: []Issue{{"out_of_range", "/targets/0/lot_size"}},
		},
		{
			name: "bad targets and fees",
			edit: func(in *Input) {
				in.Contribution = "-1"
				in.Targets = append(in.Targets,
					Target{InstrumentID: "X", Weight: "0"},
					Target{InstrumentID: "A", Weight: "0"},
				)
				in.Targets[1].LotSize = str("0")
				in.Targets[2].MinOrder = str("-5")
				in.Targets[2].Weight = "1.2"
				in.Targets[0].Weight = "-0.5"
				in.Fees = &Fees{Fixed: str("-1"), Proportional: str("1"), Minimum: str("-2")}
			},
			status: StatusInvalid, prices: []string{}, rates: []string{},
			issues: []Issue{
				{"negative", "/contribution"},
				{"out_of_range", "/targets/0/weight"},
				{"not_positive", "/targets/1/lot_size"},
				{"out_of_range", "/targets/2/weight"},
				{"negative", "/targets/2/min_order"},
				{"unknown_instrument", "/targets/3/instrument_id"},
				{"duplicate", "/targets/4/instrument_id"},
				{"negative", "/fees/fixed"},
				{"out_of_range", "/fees/proportional"},
				{"negative", "/fees/minimum"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status == StatusReady {
				requireCBC(t)
			}
			in := handChecked()
			tc.edit(&in)
			out := mustRun(t, in)
			if out.Status != tc.status || !reflect.DeepEqual(out.MissingPrices, tc.prices) || !reflect.DeepEqual(out.MissingRates, tc.rates) {
				t.Fatalf("out = %+v", out)
			}
			if tc.issues == nil {
				tc.issues = []Issue{}
			}
			if !reflect.DeepEqual(out.Issues, tc.issues) {
				t.Errorf("issues =\n%v\nwant\n%v", out.Issues, tc.issues)
			}
			if tc.status != StatusReady && (out.Plan != nil || out.Solver != nil) {
				t.Errorf("a %s result carries a plan or a solver: %+v", tc.status, out)
			}
		})
	}
}

func TestPlanWithRates(t *testing.T) {
	requireCBC(t)
	// The hand-checked portfolio with C quoted in USD at 35, 1 USD = 2
	// EUR: C's lot is still worth 70 EUR, so the plan is the same, and
	// its order's price is in USD and its amount in EUR.
	in := handChecked()
	in.Holdings[2] = Holding{InstrumentID: "C", Quantity: "0", Price: str("35"), Currency: "USD"}
	in.FXRates = []FXRate{{Currency: "USD", Rate: "2"}}
	out := mustRun(t, in)
	want := []Order{
		{InstrumentID: "A", Lots: 15, Quantity: "15", Price: "40", Currency: "EUR", Amount: "600.00", Fee: "0.00"},
		{InstrumentID: "C", Lots: 5, Quantity: "5", Price: "35", Currency: "USD", Amount: "350.00", Fee: "0.00"},
	}
	if !reflect.DeepEqual(out.Plan.Orders, want) {
		t.Errorf("orders = %+v", out.Plan.Orders)
	}
}

// TestPlanCutByItsWindow runs an instance CBC does not prove optimal in
// 30 s on this VM with a one-second engine window: the answer is a plan
// not proven optimal, with its gap, or no plan — never "optimal".
func TestPlanCutByItsWindow(t *testing.T) {
	requireCBC(t)
	for _, window := range []time.Duration{time.Second, time.Millisecond} {
		t.Run(window.String(), func(t *testing.T) {
			start := time.Now()
			out, err := run(t, withTimeout(t, window), randomPlan(50, 50, 13, "1"))
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			elapsed := time.Since(start)
			if out.Solver == nil || out.Solver.TimeLimitMS != window.Milliseconds() {
				t.Fatalf("solver = %+v", out.Solver)
			}
			switch out.Solver.Status {
			case SolverFeasible:
				if out.Status != StatusReady || out.Plan == nil {
					t.Errorf("a feasible solve gives status %s", out.Status)
				}
				if out.Solver.Gap == nil || *out.Solver.Gap < 0 {
					t.Errorf("a feasible solve without its gap: %+v", *out.Solver)
				}
			case SolverNoSolution:
				if out.Status != StatusNoSolution || out.Plan != nil {
					t.Errorf("no solution gives status %s, plan %v", out.Status, out.Plan)
				}
			default:
				t.Errorf("a solve cut at %v reports %s", window, out.Solver.Status)
			}
			gap := "none"
			if out.Solver.Gap != nil {
				gap = strconv.FormatFloat(*out.Solver.Gap, 'g', 4, 64)
			}
			t.Logf("window %v: %s (gap %s) in %v", window, out.Solver.Status, gap, elapsed)
		})
	}
}

func TestPlanFractionalRandomInstance(t *testing.T) {
	requireCBC(t)
	// Fractional lots with fees and minimum orders on twenty instruments:
	// whatever the solver says, the plan must hold in exact arithmetic.
	in := randomPlan(20, 20, 6, "0.001")
	out := mustRun(t, in)
	if out.Status != StatusReady {
		t.Fatalf("status = %s", out.Status)
	}
	p := out.Plan
	if len(p.Orders) == 0 || len(p.Orders) > 6 {
		t.Errorf("%d orders", len(p.Orders))
	}
	for _, o := range p.Orders {
		if a := mustDecimal(o.Amount); a.Cmp(rat(200)) < 0 {
			t.Errorf("order %s of %s is below its minimum", o.InstrumentID, o.Amount)
		}
	}
	if mustDecimal(p.RemainingCash).Sign() < 0 {
		t.Errorf("remaining cash %s", p.RemainingCash)
	}
}

func TestPlanWindowRefused(t *testing.T) {
	// 1 s to the soft deadline cannot hold a 30 s engine window and its
	// reserve: the claim fails with execution_limit, before cbc starts.
	ctx := native.NewContext(t.Context(), "test", time.Now().Add(time.Second), 30*time.Second)
	_, err := run(t, ctx, handChecked())
	if code, _ := toolerr.CodeOf(err); code != toolerr.ExecutionLimit {
		t.Fatalf("err = %v, want execution_limit", err)
	}
}

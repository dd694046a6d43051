package pac

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Parameters of the plan model (docs/tools/pac_allocator.md, "The model").
const (
	// postEngineReserve is the time the tool claims after the solver's
	// window for its own work: reading the solution, the exact
	// recomputation and the result.
	postEngineReserve = 2 * time.Second
	// killGrace is how long after the window's deadline a solver that has
	// not stopped by itself is killed; it is within postEngineReserve.
	killGrace = time.Second
	// maxLots bounds the lots of one order: a lot size so fine that an
	// order needs more is out of range (the solver's integers and
	// float64 coefficients would no longer be exact enough).
	maxLots = 1_000_000_000
	// feeWeight is the objective's weight of the fees: among plans whose
	// deviations differ by less than a thousandth of the fees they save,
	// the cheaper one wins.
	feeWeight = 1e-3
	// spreadWeight scales the tie-break that spreads the money over
	// underweight instruments in proportion to their weights when the
	// total absolute deviation alone does not choose (see model).
	spreadWeight = 1e-4
)

// candidate is an instrument the plan may buy: underweight, targeted,
// with an order that is both useful and affordable.
type candidate struct {
	index     int      // in scenario.instruments
	lotValue  *big.Rat // lot × price × rate, in the base currency
	shortfall *big.Rat // weight × reference total − value before (> 0)
	nMin      int64    // the fewest lots of an order (the minimum order)
	nMax      int64    // the most lots worth buying and affordable
}

// planner holds an item's plan computation: the exact values every
// report is derived from.
type planner struct {
	s            *scenario
	values       []*big.Rat // value before, per instrument
	valueBefore  *big.Rat   // Σ values
	available    *big.Rat   // contribution + cash
	reference    *big.Rat   // valueBefore + available
	candidates   []candidate
	unaffordable []string
}

// plan computes the plan operation.
func plan(ctx *native.Context, in *Input) (Output, error) {
	s := newScenario(in, true)
	if s.status() != StatusReady {
		return s.output(), nil
	}
	p := newPlanner(s)
	out := s.output() // after newPlanner, which may add issues
	if out.Status != StatusReady {
		return out, nil
	}
	if err := ctx.Checkpoint(); err != nil {
		return Output{}, err
	}
	lots := make([]int64, len(s.instruments))
	if len(p.candidates) > 0 {
		sol, limit, err := p.solve(ctx)
		if err != nil {
			return Output{}, err
		}
		out.Solver = &Solver{
			Engine: Engine, Status: sol.status, Gap: sol.gap,
			TimeMS: sol.time.Milliseconds(), TimeLimitMS: limit.Milliseconds(),
		}
		switch sol.status {
		case SolverInfeasible:
			out.Status = StatusInfeasible
			return out, nil
		case SolverNoSolution:
			out.Status = StatusNoSolution
			return out, nil
		}
		lots, out.Solver.Adjusted = p.lots(sol.values)
		if err := ctx.Checkpoint(); err != nil {
			return Output{}, err
		}
	}
	out.Plan = p.report(lots)
	return out, nil
}

// newPlanner values the scenario and selects the candidates. A lot size
// too fine for the solver is recorded as an issue.
func newPlanner(s *scenario) *planner {
	p := &planner{
		s:            s,
		values:       make([]*big.Rat, len(s.instruments)),
		valueBefore:  new(big.Rat),
		available:    add(s.contribution, s.cash),
		unaffordable: []string{},
	}
	for i, ins := range s.instruments {
		p.values[i] = ins.marketValue()
		p.valueBefore.Add(p.valueBefore, p.values[i])
	}
	p.reference = add(p.valueBefore, p.available)
	for i, ins := range s.instruments {
		if ins.weight.Sign() <= 0 {
			continue // weight 0: any purchase adds to its deviation
		}
		c := candidate{index: i, lotValue: mul(mul(ins.lot, ins.price), ins.rate)}
		c.shortfall = sub(mul(ins.weight, p.reference), p.values[i])
		if c.shortfall.Sign() <= 0 {
			continue // at or over its target: any purchase adds to its deviation
		}
		nMin := maxInt(big.NewInt(1), ceilRat(quo(ins.minOrder, c.lotValue)))
		// Buying nMin lots is useful only when it leaves the deviation
		// below the shortfall: nMin × lotValue < 2 × shortfall. More lots
		// than the smallest count reaching the target only add deviation.
		if mul(rat(2), c.shortfall).Cmp(mul(new(big.Rat).SetInt(nMin), c.lotValue)) <= 0 {
			continue
		}
		useful := maxInt(nMin, ceilRat(quo(c.shortfall, c.lotValue)))
		affordable := p.affordableLots(c.lotValue)
		if affordable.Cmp(nMin) < 0 {
			p.unaffordable = append(p.unaffordable, ins.id)
			continue
		}
		nMax := minInt(useful, affordable)
		if !nMax.IsInt64() || nMax.Int64() > maxLots {
			s.issues = append(s.issues, Issue{Code: "out_of_range", Path: ins.lotPath})
			continue
		}
		c.nMin, c.nMax = nMin.Int64(), nMax.Int64()
		p.candidates = append(p.candidates, c)
	}
	return p
}

// affordableLots returns the most lots of value lotValue whose order and
// fee fit the available cash: n × lv + max(min, fixed + prop × n × lv) ≤ C
// holds when both n × lv + min ≤ C and n × lv × (1 + prop) + fixed ≤ C.
func (p *planner) affordableLots(lotValue *big.Rat) *big.Int {
	f := p.s.fees
	byMin := floorRat(quo(sub(p.available, f.minimum), lotValue))
	byRate := floorRat(quo(sub(p.available, f.fixed), mul(lotValue, add(rat(1), f.proportional))))
	return minInt(byMin, byRate)
}

// model writes the MILP of the candidates (docs/tools/pac_allocator.md):
//
//	minimise   Σ d_k + feeWeight Σ f_k + spreadWeight·min(w) z
//	d_k ≥ ±(lv_k n_k − s_k)             deviation after, s_k the shortfall
//	nMin_k y_k ≤ n_k ≤ nMax_k y_k        an order or none, its minimum
//	f_k ≥ fixed y_k + prop lv_k n_k      the fee, at least
//	f_k ≥ minimum y_k
//	Σ (lv_k n_k + f_k) ≤ available       the cash
//	Σ y_k ≤ max_orders
//	w_k z + lv_k n_k ≥ s_k               z: the largest remaining shortfall per unit of weight
//
// with n_k integer, y_k binary, d_k, f_k ≥ 0 and z free.
func (p *planner) model() []byte {
	m := &lpModel{}
	fees := p.s.fees
	fixed, _ := fees.fixed.Float64()
	prop, _ := fees.proportional.Float64()
	minimum, _ := fees.minimum.Float64()
	hasFees := !fees.zero()
	spread := len(p.candidates) > 1
	minWeight := math.Inf(1)
	var budget, orders []string
	for k, c := range p.candidates {
		n, y, d, f := "n"+strconv.Itoa(k), "y"+strconv.Itoa(k), "d"+strconv.Itoa(k), "f"+strconv.Itoa(k)
		lv, _ := c.lotValue.Float64()
		s, _ := c.shortfall.Float64()
		w, _ := p.s.instruments[c.index].weight.Float64()
		minWeight = math.Min(minWeight, w)

		m.objective = append(m.objective, term(1, d))
		m.row("dp"+strconv.Itoa(k), []string{term(1, d), term(-lv, n)}, ">=", -s)
		m.row("dn"+strconv.Itoa(k), []string{term(1, d), term(lv, n)}, ">=", s)
		m.row("up"+strconv.Itoa(k), []string{term(1, n), term(-float64(c.nMax), y)}, "<=", 0)
		m.row("lo"+strconv.Itoa(k), []string{term(1, n), term(-float64(c.nMin), y)}, ">=", 0)
		budget = append(budget, term(lv, n))
		if hasFees {
			m.objective = append(m.objective, term(feeWeight, f))
			if fixed != 0 || prop != 0 {
				m.row("fa"+strconv.Itoa(k), []string{term(1, f), term(-prop*lv, n), term(-fixed, y)}, ">=", 0)
			}
			if minimum != 0 {
				m.row("fb"+strconv.Itoa(k), []string{term(1, f), term(-minimum, y)}, ">=", 0)
			}
			budget = append(budget, term(1, f))
		}
		if spread {
			m.row("sp"+strconv.Itoa(k), []string{term(w, "z"), term(lv, n)}, ">=", s)
		}
		orders = append(orders, term(1, y))
		m.bounds = append(m.bounds, "0 <= "+n+" <= "+strconv.FormatInt(c.nMax, 10))
		m.general = append(m.general, n)
		m.binary = append(m.binary, y)
	}
	available, _ := p.available.Float64()
	m.row("budget", budget, "<=", available)
	if k := p.s.maxOrders; k > 0 && k < len(p.candidates) {
		m.row("orders", orders, "<=", float64(k))
	}
	if spread {
		m.objective = append(m.objective, term(spreadWeight*minWeight, "z"))
		m.bounds = append(m.bounds, "z free")
	}
	return m.bytes()
}

// solve runs cbc on the model inside the item's engine window and returns
// what it reported and the time limit it was given. It returns
// execution_limit when the window cannot be claimed or the solver outlives
// it, and an error wrapping errEngine when cbc fails.
func (p *planner) solve(ctx *native.Context) (solution, time.Duration, error) {
	model := p.model()
	// Inside the item's scratch folder, which the supervisor removes
	// after the item however it ends (a kill skips the defer below).
	dir, err := os.MkdirTemp(ctx.ScratchDir(), "pac-")
	if err != nil {
		return solution{}, 0, fmt.Errorf("creating the solver's directory: %w", err)
	}
	defer os.RemoveAll(dir) //nolint:errcheck // what stays goes with the scratch folder
	w, err := ctx.ClaimEngineWindow(postEngineReserve)
	if err != nil {
		return solution{}, 0, err
	}
	runCtx, cancel := context.WithDeadline(ctx.Context(), w.Deadline.Add(killGrace))
	defer cancel()
	sol, err := runCBC(runCtx, dir, model, w.Timeout)
	switch {
	case err == nil:
		return sol, w.Timeout, nil
	case ctx.Context().Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		// Cancelled, or the solver overran its window: no answer.
		return solution{}, 0, toolerr.New(toolerr.ExecutionLimit)
	}
	return solution{}, 0, err
}

// lots reads the solver's lot counts and checks them exactly: an order
// below its minimum, more orders than allowed, or orders and fees over the
// available cash — which the solver's floating-point tolerances can let
// through by a hair — are repaired by removing lots, never adding any.
// adjusted reports whether anything was removed.
func (p *planner) lots(values map[string]float64) (lots []int64, adjusted bool) {
	lots = make([]int64, len(p.s.instruments))
	for k, c := range p.candidates {
		x := values["n"+strconv.Itoa(k)]
		n := int64(math.Round(x))
		n = min(max(n, 0), c.nMax)
		if float64(n) != math.Round(x) {
			adjusted = true
		}
		if n > 0 && n < c.nMin {
			n, adjusted = 0, true
		}
		lots[c.index] = n
	}
	// Too many orders: drop the one whose removal adds least deviation.
	for p.s.maxOrders > 0 && p.orderCount(lots) > p.s.maxOrders {
		p.removeCheapest(lots, func(c candidate, n int64) int64 { return 0 })
		adjusted = true
	}
	// Over the cash: take a lot from the order where that adds least
	// deviation; an order that falls below its minimum is dropped.
	for p.spent(lots).Cmp(p.available) > 0 {
		p.removeCheapest(lots, func(c candidate, n int64) int64 {
			if n-1 < c.nMin {
				return 0
			}
			return n - 1
		})
		adjusted = true
	}
	return lots, adjusted
}

// removeCheapest applies next to the order whose change adds the least
// deviation (the first such order on a tie).
func (p *planner) removeCheapest(lots []int64, next func(c candidate, n int64) int64) {
	best, bestCost := -1, (*big.Rat)(nil)
	for k, c := range p.candidates {
		n := lots[c.index]
		if n == 0 {
			continue
		}
		cost := sub(p.deviationOf(c.index, next(c, n)), p.deviationOf(c.index, n))
		if best < 0 || cost.Cmp(bestCost) < 0 {
			best, bestCost = k, cost
		}
	}
	if best >= 0 {
		c := p.candidates[best]
		lots[c.index] = next(c, lots[c.index])
	}
}

// orderCount returns the number of orders.
func (p *planner) orderCount(lots []int64) int {
	n := 0
	for _, l := range lots {
		if l > 0 {
			n++
		}
	}
	return n
}

// amount returns the exact amount of n lots of instrument i.
func (p *planner) amount(i int, n int64) *big.Rat {
	ins := p.s.instruments[i]
	return mul(mul(mul(rat(n), ins.lot), ins.price), ins.rate)
}

// spent returns the orders' amounts plus their fees, exactly.
func (p *planner) spent(lots []int64) *big.Rat {
	total := new(big.Rat)
	for i, n := range lots {
		if n > 0 {
			a := p.amount(i, n)
			total.Add(total, add(a, p.s.fees.of(a)))
		}
	}
	return total
}

// target returns instrument i's target value: weight × reference total.
func (p *planner) target(i int) *big.Rat {
	return mul(p.s.instruments[i].weight, p.reference)
}

// deviationOf returns |value after − target| of instrument i with n lots
// bought.
func (p *planner) deviationOf(i int, n int64) *big.Rat {
	after := p.values[i]
	if n > 0 {
		after = add(after, p.amount(i, n))
	}
	return absRat(sub(after, p.target(i)))
}

// report builds the plan of lots, every amount exact until formatted.
func (p *planner) report(lots []int64) *Plan {
	s := p.s
	out := &Plan{Orders: []Order{}, Allocation: []Allocation{}, Unaffordable: p.unaffordable}
	invested, fees := new(big.Rat), new(big.Rat)
	after := make([]*big.Rat, len(s.instruments))
	valueAfter := new(big.Rat)
	for i, ins := range s.instruments {
		after[i] = p.values[i]
		if n := lots[i]; n > 0 {
			a := p.amount(i, n)
			fee := s.fees.of(a)
			invested.Add(invested, a)
			fees.Add(fees, fee)
			after[i] = add(after[i], a)
			out.Orders = append(out.Orders, Order{
				InstrumentID: ins.id, Lots: n,
				Quantity: formatExact(mul(rat(n), ins.lot)),
				Price:    formatExact(ins.price), Currency: ins.currency,
				Amount: formatFixed(a, amountDecimals), Fee: formatFixed(fee, amountDecimals),
			})
		}
		valueAfter.Add(valueAfter, after[i])
	}
	remaining := sub(sub(p.available, invested), fees)
	wealthAfter := add(valueAfter, remaining)
	devBefore, devAfter := new(big.Rat), new(big.Rat)
	for i, ins := range s.instruments {
		target := p.target(i)
		before := absRat(sub(p.values[i], target))
		dev := absRat(sub(after[i], target))
		devBefore.Add(devBefore, before)
		devAfter.Add(devAfter, dev)
		out.Allocation = append(out.Allocation, Allocation{
			InstrumentID: ins.id,
			TargetWeight: formatExact(ins.weight),
			TargetValue:  formatFixed(target, amountDecimals),
			ValueBefore:  formatFixed(p.values[i], amountDecimals),
			ValueAfter:   formatFixed(after[i], amountDecimals),
			WeightBefore: formatFixed(share(p.values[i], p.reference), weightDecimals),
			WeightAfter:  formatFixed(share(after[i], wealthAfter), weightDecimals),
			Deviation:    formatFixed(dev, amountDecimals),
		})
	}
	out.Available = formatFixed(p.available, amountDecimals)
	out.Invested = formatFixed(invested, amountDecimals)
	out.Fees = formatFixed(fees, amountDecimals)
	out.RemainingCash = formatFixed(remaining, amountDecimals)
	out.ValueBefore = formatFixed(p.valueBefore, amountDecimals)
	out.ValueAfter = formatFixed(valueAfter, amountDecimals)
	out.ReferenceTotal = formatFixed(p.reference, amountDecimals)
	out.DeviationBefore = formatFixed(devBefore, amountDecimals)
	out.Deviation = formatFixed(devAfter, amountDecimals)
	return out
}

func maxInt(a, b *big.Int) *big.Int {
	if b.Cmp(a) > 0 {
		return b
	}
	return a
}

func minInt(a, b *big.Int) *big.Int {
	if b.Cmp(a) < 0 {
		return b
	}
	return a
}

package pac

import (
	"math/big"
	"slices"
	"strconv"
)

// instrument is one holding as the computation sees it: exact values,
// defaults applied.
type instrument struct {
	id, currency string
	quantity     *big.Rat
	price        *big.Rat // nil when absent
	rate         *big.Rat // nil when unknown; 1 for the base currency
	// Plan only.
	weight   *big.Rat // 0 without a target
	lot      *big.Rat // 1 without a target or a lot_size
	minOrder *big.Rat // 0 without a target or a min_order
	lotPath  string   // the lot_size's JSON pointer, for issues
}

// feeModel is the fee of one order of amount a > 0:
// max(minimum, fixed + proportional × a).
type feeModel struct {
	fixed, proportional, minimum *big.Rat
}

// of returns the exact fee of an order of amount a (0 for no order).
func (f feeModel) of(a *big.Rat) *big.Rat {
	if a.Sign() <= 0 {
		return new(big.Rat)
	}
	return maxRat(f.minimum, add(f.fixed, mul(f.proportional, a)))
}

// zero reports whether orders cost nothing.
func (f feeModel) zero() bool {
	return f.fixed.Sign() == 0 && f.proportional.Sign() == 0 && f.minimum.Sign() == 0
}

// scenario is the checked parameters of an item.
type scenario struct {
	currency      string
	cash          *big.Rat
	instruments   []*instrument
	issues        []Issue
	missingPrices []string
	missingRates  []string
	// Plan only.
	contribution *big.Rat
	fees         feeModel
	maxOrders    int // 0: no limit
}

// status returns the domain status the checks leave: invalid before
// needs_input before ready.
func (s *scenario) status() string {
	switch {
	case len(s.issues) > 0:
		return StatusInvalid
	case len(s.missingPrices) > 0 || len(s.missingRates) > 0:
		return StatusNeedsInput
	}
	return StatusReady
}

// output returns an Output with the status and the findings of the checks.
func (s *scenario) output() Output {
	return Output{
		Status:        s.status(),
		Currency:      s.currency,
		Issues:        s.issues,
		MissingPrices: s.missingPrices,
		MissingRates:  s.missingRates,
	}
}

// pointer returns the JSON pointer of a parameter: pointer("holdings", 2,
// "price") is "/holdings/2/price".
func pointer(segs ...any) string {
	p := ""
	for _, s := range segs {
		switch v := s.(type) {
		case string:
			p += "/" + v
		case int:
			p += "/" + strconv.Itoa(v)
		}
	}
	return p
}

// decimalOr parses an optional decimal, def when absent.
func decimalOr(s *string, def int64) *big.Rat {
	if s == nil {
		return rat(def)
	}
	return mustDecimal(*s)
}

// mustDecimal parses a decimal the input schema has accepted; it reads
// anything else as 0, which the schema rules out.
func mustDecimal(s string) *big.Rat {
	r, ok := parseDecimal(s)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// newScenario checks in. For plan it also reads the targets, fees and
// order limit, and a price is needed for every holding that is held or
// targeted; for value, for every holding that is held.
func newScenario(in *Input, forPlan bool) *scenario {
	s := &scenario{
		currency:      in.Currency,
		cash:          decimalOr(in.Cash, 0),
		issues:        []Issue{},
		missingPrices: []string{},
		missingRates:  []string{},
	}
	issue := func(code string, segs ...any) {
		s.issues = append(s.issues, Issue{Code: code, Path: pointer(segs...)})
	}
	if s.cash.Sign() < 0 {
		issue("negative", "cash")
	}

	rates := map[string]*big.Rat{in.Currency: rat(1)}
	for i, r := range in.FXRates {
		v := mustDecimal(r.Rate)
		switch {
		case r.Currency == in.Currency:
			issue("base_currency_rate", "fx_rates", i, "currency")
			continue
		case rates[r.Currency] != nil:
			issue("duplicate", "fx_rates", i, "currency")
			continue
		case v.Sign() <= 0:
			issue("not_positive", "fx_rates", i, "rate")
			continue
		}
		rates[r.Currency] = v
	}

	byID := map[string]*instrument{}
	for i, h := range in.Holdings {
		ins := &instrument{
			id: h.InstrumentID, currency: h.Currency,
			quantity: mustDecimal(h.Quantity), rate: rates[h.Currency],
			weight: new(big.Rat), lot: rat(1), minOrder: new(big.Rat),
		}
		if h.Price != nil {
			ins.price = mustDecimal(*h.Price)
			if ins.price.Sign() <= 0 {
				issue("not_positive", "holdings", i, "price")
			}
		}
		if ins.quantity.Sign() < 0 {
			issue("negative", "holdings", i, "quantity")
		}
		if byID[h.InstrumentID] != nil {
			issue("duplicate", "holdings", i, "instrument_id")
		} else {
			byID[h.InstrumentID] = ins
		}
		s.instruments = append(s.instruments, ins)
	}

	if forPlan {
		s.contribution = mustDecimal(in.Contribution)
		if s.contribution.Sign() < 0 {
			issue("negative", "contribution")
		}
		s.readTargets(in.Targets, byID, issue)
		s.readFees(in.Fees, issue)
		if in.MaxOrders != nil {
			s.maxOrders = *in.MaxOrders
		}
	}

	// What is needed and absent. A holding whose price is not needed
	// (nothing held, nothing targeted) needs no rate either.
	missingRate := map[string]bool{}
	for _, ins := range s.instruments {
		needed := ins.quantity.Sign() != 0 || (forPlan && ins.weight.Sign() > 0)
		if !needed {
			continue
		}
		if ins.price == nil {
			s.missingPrices = append(s.missingPrices, ins.id)
		}
		if ins.rate == nil {
			missingRate[ins.currency] = true
		}
	}
	for c := range missingRate {
		s.missingRates = append(s.missingRates, c)
	}
	slices.Sort(s.missingRates)
	return s
}

// readTargets reads the plan's targets into the instruments they name.
func (s *scenario) readTargets(targets []Target, byID map[string]*instrument, issue func(string, ...any)) {
	sum := new(big.Rat)
	seen := map[string]bool{}
	for i, t := range targets {
		ins := byID[t.InstrumentID]
		switch {
		case ins == nil:
			issue("unknown_instrument", "targets", i, "instrument_id")
			continue
		case seen[t.InstrumentID]:
			issue("duplicate", "targets", i, "instrument_id")
			continue
		}
		seen[t.InstrumentID] = true
		ins.weight = mustDecimal(t.Weight)
		if ins.weight.Sign() < 0 || ins.weight.Cmp(rat(1)) > 0 {
			issue("out_of_range", "targets", i, "weight")
		}
		sum.Add(sum, ins.weight)
		ins.lot = decimalOr(t.LotSize, 1)
		ins.lotPath = pointer("targets", i, "lot_size")
		if ins.lot.Sign() <= 0 {
			issue("not_positive", "targets", i, "lot_size")
		}
		ins.minOrder = decimalOr(t.MinOrder, 0)
		if ins.minOrder.Sign() < 0 {
			issue("negative", "targets", i, "min_order")
		}
	}
	if sum.Cmp(rat(1)) != 0 {
		issue("weights_sum", "targets")
	}
}

// readFees reads the fee model; no fees when f is nil.
func (s *scenario) readFees(f *Fees, issue func(string, ...any)) {
	if f == nil {
		s.fees = feeModel{fixed: new(big.Rat), proportional: new(big.Rat), minimum: new(big.Rat)}
		return
	}
	s.fees = feeModel{
		fixed:        decimalOr(f.Fixed, 0),
		proportional: decimalOr(f.Proportional, 0),
		minimum:      decimalOr(f.Minimum, 0),
	}
	if s.fees.fixed.Sign() < 0 {
		issue("negative", "fees", "fixed")
	}
	if s.fees.proportional.Sign() < 0 || s.fees.proportional.Cmp(rat(1)) >= 0 {
		issue("out_of_range", "fees", "proportional")
	}
	if s.fees.minimum.Sign() < 0 {
		issue("negative", "fees", "minimum")
	}
}

// marketValue returns quantity × price × rate of a holding whose price and
// rate are known, 0 for a holding with nothing held.
func (ins *instrument) marketValue() *big.Rat {
	if ins.quantity.Sign() == 0 {
		return new(big.Rat)
	}
	return mul(mul(ins.quantity, ins.price), ins.rate)
}

package pac

import "math/big"

// value computes the value operation: every market value is quantity ×
// price × rate, exactly; weights are fractions of the total, holdings and
// cash together.
func value(in *Input) Output {
	s := newScenario(in, false)
	out := s.output()
	if out.Status != StatusReady {
		return out
	}
	values := make([]*big.Rat, len(s.instruments))
	holdings := new(big.Rat)
	for i, ins := range s.instruments {
		values[i] = ins.marketValue()
		holdings.Add(holdings, values[i])
	}
	total := add(holdings, s.cash)
	v := &Valuation{
		Positions:     make([]Position, 0, len(s.instruments)),
		HoldingsValue: formatFixed(holdings, amountDecimals),
		Cash:          formatFixed(s.cash, amountDecimals),
		Total:         formatFixed(total, amountDecimals),
		CashWeight:    formatFixed(share(s.cash, total), weightDecimals),
	}
	for i, ins := range s.instruments {
		p := Position{
			InstrumentID: ins.id,
			Quantity:     formatExact(ins.quantity),
			Currency:     ins.currency,
			MarketValue:  formatFixed(values[i], amountDecimals),
			Weight:       formatFixed(share(values[i], total), weightDecimals),
		}
		if ins.price != nil {
			price := formatExact(ins.price)
			p.Price = &price
		}
		if ins.rate != nil {
			rate := formatExact(ins.rate)
			p.Rate = &rate
		}
		v.Positions = append(v.Positions, p)
	}
	out.Valuation = v
	return out
}

// share returns part / whole, 0 when whole is 0.
func share(part, whole *big.Rat) *big.Rat {
	if whole.Sign() == 0 {
		return new(big.Rat)
	}
	return quo(part, whole)
}

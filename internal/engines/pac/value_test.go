package pac

import (
	"math/big"
	"reflect"
	"testing"
)

func TestFormatFixed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       *big.Rat
		decimals int
		want     string
	}{
		{"half away from zero", big.NewRat(2005, 1000), 2, "2.01"},
		{"negative half away from zero", big.NewRat(-2005, 1000), 2, "-2.01"},
		{"below half", big.NewRat(2004999, 1000000), 2, "2.00"},
		{"tiny negative is zero", big.NewRat(-4, 1000), 2, "0.00"},
		{"zero", new(big.Rat), 2, "0.00"},
		{"integer", big.NewRat(7, 1), 2, "7.00"},
		{"large", big.NewRat(1234567891, 1000), 2, "1234567.89"},
		{"below one", big.NewRat(5, 100), 2, "0.05"},
		{"a third", big.NewRat(1, 3), 6, "0.333333"},
		{"two thirds", big.NewRat(2, 3), 6, "0.666667"},
		{"no decimals", big.NewRat(5, 2), 0, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatFixed(tc.in, tc.decimals); got != tc.want {
				t.Errorf("formatFixed(%s, %d) = %q, want %q", tc.in.RatString(), tc.decimals, got, tc.want)
			}
		})
	}
}

func TestFormatExact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"12.50", "12.5"}, {"3", "3"}, {"0.001", "0.001"}, {"-0.5", "-0.5"}, {"000.0", "0"}, {"1234567890.0123456789", "1234567890.0123456789"},
	} {
		r, ok := parseDecimal(tc.in)
		if !ok {
			t.Fatalf("parseDecimal(%q) failed", tc.in)
		}
		if got := formatExact(r); got != tc.want {
			t.Errorf("formatExact(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "1e3", "1/3", "abc"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) accepted", bad)
		}
	}
}

func TestValue(t *testing.T) {
	base := func() Input {
		return Input{Operation: OpValue, Currency: "EUR", Cash: str("100.005")}
	}
	for _, tc := range []struct {
		name   string
		in     func() Input
		status string
		check  func(t *testing.T, out Output)
	}{
		{
			// 3 × 33.333 = 99.999 and 0.5 × 0.01 = 0.005 round half away
			// from zero; 2 USD × 10 at 0.9 is 18 EUR. The total is the
			// rounded exact sum 99.999 + 0.005 + 18 + 100.005 = 218.009.
			name: "exact decimals and a rate",
			in: func() Input {
				in := base()
				in.Holdings = []Holding{
					holding("A", "3", "33.333"),
					holding("B", "0.5", "0.01"),
					{InstrumentID: "C", Quantity: "2", Price: str("10.00"), Currency: "USD"},
					holding("D", "0", ""), // nothing held: no price needed
				}
				in.FXRates = []FXRate{{Currency: "USD", Rate: "0.9"}}
				return in
			},
			status: StatusReady,
			check: func(t *testing.T, out Output) {
				v := out.Valuation
				if v == nil {
					t.Fatal("no valuation")
				}
				if v.HoldingsValue != "118.00" || v.Cash != "100.01" || v.Total != "218.01" || v.CashWeight != "0.458720" {
					t.Errorf("totals = %+v", *v)
				}
				want := []Position{
					{InstrumentID: "A", Quantity: "3", Price: str("33.333"), Currency: "EUR", Rate: str("1"), MarketValue: "100.00", Weight: "0.458692"},
					{InstrumentID: "B", Quantity: "0.5", Price: str("0.01"), Currency: "EUR", Rate: str("1"), MarketValue: "0.01", Weight: "0.000023"},
					{InstrumentID: "C", Quantity: "2", Price: str("10"), Currency: "USD", Rate: str("0.9"), MarketValue: "18.00", Weight: "0.082565"},
					{InstrumentID: "D", Quantity: "0", Currency: "EUR", Rate: str("1"), MarketValue: "0.00", Weight: "0.000000"},
				}
				if !reflect.DeepEqual(v.Positions, want) {
					t.Errorf("positions =\n%+v\nwant\n%+v", v.Positions, want)
				}
			},
		},
		{
			name: "zero total",
			in: func() Input {
				in := base()
				in.Cash = nil
				in.Holdings = []Holding{holding("A", "0", "10")}
				return in
			},
			status: StatusReady,
			check: func(t *testing.T, out Output) {
				if v := out.Valuation; v.Total != "0.00" || v.CashWeight != "0.000000" || v.Positions[0].Weight != "0.000000" {
					t.Errorf("valuation = %+v", *v)
				}
			},
		},
		{
			name: "missing price and rate",
			in: func() Input {
				in := base()
				in.Holdings = []Holding{
					holding("A", "1", ""),
					{InstrumentID: "B", Quantity: "1", Price: str("5"), Currency: "USD"},
					{InstrumentID: "C", Quantity: "1", Price: str("5"), Currency: "CHF"},
					{InstrumentID: "D", Quantity: "0", Currency: "GBP"}, // not needed
				}
				return in
			},
			status: StatusNeedsInput,
			check: func(t *testing.T, out Output) {
				if !reflect.DeepEqual(out.MissingPrices, []string{"A"}) || !reflect.DeepEqual(out.MissingRates, []string{"CHF", "USD"}) || out.Valuation != nil {
					t.Errorf("out = %+v", out)
				}
			},
		},
		{
			name: "invalid",
			in: func() Input {
				in := base()
				in.Cash = str("-1")
				in.Holdings = []Holding{holding("A", "-2", "10"), holding("A", "1", "0"), holding("B", "1", "")}
				in.FXRates = []FXRate{{Currency: "EUR", Rate: "1"}, {Currency: "USD", Rate: "0"}, {Currency: "CHF", Rate: "1"}, {Currency: "CHF", Rate: "2"}}
				return in
			},
			status: StatusInvalid,
			check: func(t *testing.T, out Output) {
				want := []Issue{
					{"negative", "/cash"},
					{"base_currency_rate", "/fx_rates/0/currency"},
					{"not_positive", "/fx_rates/1/rate"},
					{"duplicate", "/fx_rates/3/currency"},
					{"negative", "/holdings/0/quantity"},
					{"not_positive", "/holdings/1/price"},
					{"duplicate", "/holdings/1/instrument_id"},
				}
				if !reflect.DeepEqual(out.Issues, want) {
					t.Errorf("issues =\n%v\nwant\n%v", out.Issues, want)
				}
				// The missing price is reported too, but invalid wins.
				if !reflect.DeepEqual(out.MissingPrices, []string{"B"}) || out.Valuation != nil {
					t.Errorf("out = %+v", out)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustRun(t, tc.in())
			if out.Status != tc.status || out.Currency != "EUR" {
				t.Fatalf("status = %s, want %s: %+v", out.Status, tc.status, out)
			}
			tc.check(t, out)
		})
	}
}

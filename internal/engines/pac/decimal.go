package pac

import (
	"math/big"
	"strings"
)

// Decimal precision of the results (docs/tools/pac_allocator.md). Every
// reported value is computed exactly with big.Rat and rounded once, half
// away from zero, when it is formatted: a total is the rounded exact sum,
// not the sum of rounded parts.
const (
	// amountDecimals is the precision of money: market values, order
	// amounts, fees, totals, cash, deviations.
	amountDecimals = 2
	// weightDecimals is the precision of weights (fractions of 1).
	weightDecimals = 6
)

// decimalPattern is the syntax of every decimal string parameter: an
// optional minus sign, 1 to 12 integer digits, and optionally a point and
// 1 to 10 fraction digits. The schema checks the syntax; the tool checks
// the meaning (a negative quantity is a domain issue, not a schema error).
const decimalPattern = `^-?[0-9]{1,12}(\.[0-9]{1,10})?$`

// parseDecimal reads a decimal string the schema has accepted. ok is false
// for anything else (it cannot happen behind the worker's validation).
func parseDecimal(s string) (*big.Rat, bool) {
	if s == "" || strings.ContainsAny(s, "eE/") {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// rat returns the exact rational of an integer.
func rat(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

// add, sub, mul and quo return new values; they never modify their
// arguments.
func add(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
func sub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func quo(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }

// absRat returns |a| as a new value.
func absRat(a *big.Rat) *big.Rat { return new(big.Rat).Abs(a) }

// maxRat returns the larger of a and b (a when equal).
func maxRat(a, b *big.Rat) *big.Rat {
	if b.Cmp(a) > 0 {
		return b
	}
	return a
}

// floorRat returns the largest integer at most r.
func floorRat(r *big.Rat) *big.Int {
	// Div is Euclidean and a Rat's denominator is positive: the
	// quotient is the floor.
	return new(big.Int).Div(r.Num(), r.Denom())
}

// ceilRat returns the smallest integer at least r.
func ceilRat(r *big.Rat) *big.Int {
	q := floorRat(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// formatFixed formats r with exactly decimals fraction digits, rounding
// half away from zero: formatFixed(2.005, 2) is "2.01", formatFixed(-2.005,
// 2) is "-2.01". Zero is never negative ("-0.00" is written "0.00").
func formatFixed(r *big.Rat, decimals int) string {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	neg := x.Sign() < 0
	x.Abs(x)
	// round half away from zero: floor(|x| + 1/2)
	x.Add(x, big.NewRat(1, 2))
	n := floorRat(x)
	digits := n.String()
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	out := digits
	if decimals > 0 {
		out = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg && n.Sign() != 0 {
		out = "-" + out
	}
	return out
}

// formatExact formats r, which must have a finite decimal expansion (a
// product of parameters), with as many fraction digits as it needs and no
// trailing zeros: "12.5", "3", "0.001".
func formatExact(r *big.Rat) string {
	// The denominator of a product of decimals divides a power of ten:
	// find the smallest one that makes r an integer.
	decimals := 0
	x := new(big.Rat).Set(r)
	ten := big.NewRat(10, 1)
	for !x.IsInt() {
		x.Mul(x, ten)
		decimals++
		if decimals > 200 { // not a terminating decimal: cannot happen for products of parameters
			return formatFixed(r, 20)
		}
	}
	return formatFixed(r, decimals)
}

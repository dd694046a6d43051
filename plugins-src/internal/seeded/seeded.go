// Package seeded is the one source of pseudo-randomness of the text
// transforms: a PCG generator (math/rand/v2's PCG-DXSM, whose output the
// Go project specifies) seeded from a caller's number, so that the same
// seed gives the same lines and words on every platform and every Go
// release. The reduction to a range and the shuffle are written here, not
// taken from math/rand/v2's Rand, whose algorithms may change between
// releases.
package seeded

import (
	"math/bits"
	"math/rand/v2"
)

// stream is PCG's second state word: a fixed constant, so that the seed
// alone chooses the sequence.
const stream = 0x9e3779b97f4a7c15

// Source is a deterministic generator.
type Source struct{ pcg *rand.PCG }

// New returns the generator of seed.
func New(seed uint64) *Source { return &Source{pcg: rand.NewPCG(seed, stream)} }

// Below returns a number in [0, n) for n > 0, without modulo bias
// (Lemire's multiply-and-reject; Lemire, "Fast Random Integer Generation
// in an Interval", 2019).
func (s *Source) Below(n uint64) uint64 {
	for {
		hi, lo := bits.Mul64(s.pcg.Uint64(), n)
		if lo >= n || lo >= (-n)%n {
			return hi
		}
	}
}

// Between returns a number in [lo, hi], lo <= hi.
func (s *Source) Between(lo, hi int) int { return lo + int(s.Below(uint64(hi-lo+1))) }

// Shuffle permutes n elements with Fisher–Yates (Knuth's Algorithm P),
// from the last element down, calling swap(i, j).
func (s *Source) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, int(s.Below(uint64(i+1))))
	}
}

package guard

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestRateItem: the RateLimit and RateLimit-Policy items are written
// without fmt, byte for byte as "%q;q=%d;w=%d;qu=%q" and "%q;r=%d;t=%d"
// write them, names that need quoting included.
func TestRateItem(t *testing.T) {
	for _, name := range []string{ClassRun, "target", "", `a"b`, "é\x00\n", "tools-\u2028"} {
		for _, a := range []Allowance{{Burst: 600, PerMinute: 300}, {Burst: 0, PerMinute: 0}, {Burst: math.MaxInt32, PerMinute: 7}} {
			w := 60
			if a.PerMinute > 0 {
				w = int(math.Ceil(float64(a.Burst) * 60 / float64(a.PerMinute)))
			}
			if got, want := policy(name, a, UnitCost), fmt.Sprintf("%q;q=%d;w=%d;qu=%q", name, a.Burst, w, UnitCost); got != want {
				t.Errorf("policy(%q, %+v) = %s, want %s", name, a, got, want)
			}
		}
		for _, r := range []int{0, 1, -3, math.MaxInt32} {
			for _, reset := range []time.Duration{0, time.Millisecond, 90 * time.Second} {
				tt := 0
				if reset > 0 {
					tt = int(math.Ceil(reset.Seconds()))
				}
				if got, want := limitField(name, r, reset), fmt.Sprintf("%q;r=%d;t=%d", name, r, tt); got != want {
					t.Errorf("limitField(%q, %d, %v) = %s, want %s", name, r, reset, got, want)
				}
			}
		}
	}
}

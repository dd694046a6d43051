package metrics

import (
	"strings"
	"testing"
)

func TestSpareMetrics(t *testing.T) {
	used := uint64(6)
	m := New(WithSpares(func() Spares {
		used++
		return Spares{Ready: 2, Used: used, Fresh: 3, Lost: 1}
	}))
	body := scrape(t, m)
	for _, want := range []string{
		"toolhost_native_spares_ready 2\n",
		"toolhost_native_spares_used_total 7\n",
		"toolhost_native_fresh_workers_total 3\n",
		"toolhost_native_spares_lost_total 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if body := scrape(t, m); !strings.Contains(body, "toolhost_native_spares_used_total 8\n") {
		t.Error("the second scrape did not read the counters again")
	}
	// Without a supervisor the metrics are absent.
	if body := scrape(t, New(WithSpares(nil))); strings.Contains(body, "toolhost_native_spares") {
		t.Error("spare metrics without a supervisor")
	}
}

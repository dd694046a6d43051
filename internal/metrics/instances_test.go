package metrics

import (
	"strings"
	"testing"
)

func TestInstanceCounters(t *testing.T) {
	n := uint64(0)
	m := New(WithInstances(func() Instances {
		n++
		return Instances{Instantiated: 3, Reused: 40 + n, Discarded: map[string]uint64{"trap": 2, "memory_growth": 1}}
	}))
	body := scrape(t, m)
	for _, want := range []string{
		"toolhost_wasm_instances_instantiated_total 3\n",
		"toolhost_wasm_instances_reused_total 41\n",
		`toolhost_wasm_instances_discarded_total{reason="trap"} 2` + "\n",
		`toolhost_wasm_instances_discarded_total{reason="memory_growth"} 1` + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Each scrape reads the counters again.
	if body := scrape(t, m); !strings.Contains(body, "toolhost_wasm_instances_reused_total 42\n") {
		t.Error("the second scrape did not read the counters again")
	}
}

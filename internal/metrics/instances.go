package metrics

import "github.com/prometheus/client_golang/prometheus"

// Instances is a snapshot of the WASM runtime's instance counters, as the
// callback given to [WithInstances] returns it (host.Runtime.InstanceStats).
type Instances struct {
	// Instantiated counts instances made for items; Reused counts items
	// served by an idle instance reset to its pristine state.
	Instantiated, Reused uint64
	// Discarded counts instances closed instead of reused, by reason
	// (trap, interrupt, fuel, host_error, memory_limit, memory_growth,
	// wasi_state, pool_full, closed).
	Discarded map[string]uint64
}

// WithInstances makes the instance counters read fn at each scrape; fn
// must be safe for concurrent use and quick. Without it the counters are
// absent.
func WithInstances(fn func() Instances) Option {
	return func(m *Metrics) { m.extra = append(m.extra, instanceCollector{fn: fn}) }
}

var (
	instantiatedDesc = prometheus.NewDesc("toolhost_wasm_instances_instantiated_total",
		"WASM instances made for items (every item of a module that is not pooled, and each item of a pooled one that found no idle instance).", nil, nil)
	reusedDesc = prometheus.NewDesc("toolhost_wasm_instances_reused_total",
		"WASM items served by an idle instance reset to its pristine state.", nil, nil)
	discardedDesc = prometheus.NewDesc("toolhost_wasm_instances_discarded_total",
		"Pooled WASM instances closed instead of reused, by reason.", []string{"reason"}, nil)
)

// instanceCollector reports one snapshot of the instance counters per
// scrape.
type instanceCollector struct{ fn func() Instances }

func (c instanceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- instantiatedDesc
	ch <- reusedDesc
	ch <- discardedDesc
}

func (c instanceCollector) Collect(ch chan<- prometheus.Metric) {
	in := c.fn()
	ch <- prometheus.MustNewConstMetric(instantiatedDesc, prometheus.CounterValue, float64(in.Instantiated))
	ch <- prometheus.MustNewConstMetric(reusedDesc, prometheus.CounterValue, float64(in.Reused))
	for reason, n := range in.Discarded {
		ch <- prometheus.MustNewConstMetric(discardedDesc, prometheus.CounterValue, float64(n), safe(reason))
	}
}

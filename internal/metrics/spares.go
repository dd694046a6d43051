package metrics

import "github.com/prometheus/client_golang/prometheus"

// Spares is a snapshot of the native supervisor's workers, as the
// callback given to [WithSpares] returns it (supervisor.Supervisor.Stats).
type Spares struct {
	// Running is the number of workers running an item now.
	Running int
	// Ready spares are started, verified and idle; Starting spares are
	// between their spawn and their ready frame.
	Ready, Starting int
	// JobCgroups is the number of job cgroups the supervisor has now (the
	// kernel's count; 0 without cgroups).
	JobCgroups int
	// Used counts the native items handed to a spare; Fresh the items that
	// found none ready and started a fresh worker; Lost the spares that
	// died while idle (never handed an item).
	Used, Fresh, Lost uint64
}

// WithSpares makes the spare-worker metrics read fn at each scrape; fn
// must be safe for concurrent use and quick. A nil fn (no native
// supervisor) leaves them absent.
func WithSpares(fn func() Spares) Option {
	return func(m *Metrics) {
		if fn != nil {
			m.extra = append(m.extra, spareCollector{fn: fn})
		}
	}
}

var (
	workersDesc = prometheus.NewDesc("toolhost_native_workers",
		"Live native worker processes by state: running an item, spare_ready (verified, idle) or spare_starting.", []string{"state"}, nil)
	jobCgroupsDesc = prometheus.NewDesc("toolhost_native_job_cgroups",
		"Job cgroups the native supervisor has now, as the kernel lists them (running items', placed spares', emptied ones being removed); 0 without cgroups.", nil, nil)
	sparesReadyDesc = prometheus.NewDesc("toolhost_native_spares_ready",
		"Spare native workers started, verified and waiting for an item.", nil, nil)
	sparesUsedDesc = prometheus.NewDesc("toolhost_native_spares_used_total",
		"Native items handed to a spare worker (each spare serves one item).", nil, nil)
	freshWorkersDesc = prometheus.NewDesc("toolhost_native_fresh_workers_total",
		"Native items that found no spare ready (or spares off) and started a fresh worker.", nil, nil)
	sparesLostDesc = prometheus.NewDesc("toolhost_native_spares_lost_total",
		"Spare native workers that died while idle or were unusable when taken; none was handed an item.", nil, nil)
)

// spareCollector reports one snapshot of the spares per scrape.
type spareCollector struct{ fn func() Spares }

func (c spareCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- workersDesc
	ch <- jobCgroupsDesc
	ch <- sparesReadyDesc
	ch <- sparesUsedDesc
	ch <- freshWorkersDesc
	ch <- sparesLostDesc
}

func (c spareCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.fn()
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(s.Running), "running")
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(s.Ready), "spare_ready")
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(s.Starting), "spare_starting")
	ch <- prometheus.MustNewConstMetric(jobCgroupsDesc, prometheus.GaugeValue, float64(s.JobCgroups))
	ch <- prometheus.MustNewConstMetric(sparesReadyDesc, prometheus.GaugeValue, float64(s.Ready))
	ch <- prometheus.MustNewConstMetric(sparesUsedDesc, prometheus.CounterValue, float64(s.Used))
	ch <- prometheus.MustNewConstMetric(freshWorkersDesc, prometheus.CounterValue, float64(s.Fresh))
	ch <- prometheus.MustNewConstMetric(sparesLostDesc, prometheus.CounterValue, float64(s.Lost))
}

// Package metrics is Toolhost's Prometheus instrumentation: counters of
// runs, refusals and quota decisions, gauges of the executor's lanes and a
// histogram of item durations, in a registry of its own (never the global
// default), served by [Metrics.Handler] at /metrics.
//
// # No identities in labels
//
// Labels carry only bounded, non-identifying values: tool ids, outcomes,
// reason codes, quota classes, tiers and decisions. No caller identity —
// no IP address, no principal, subject, token, app name or caller hash —
// is ever a label: it would make the series unbounded and turn the metrics
// into a record of who called. As a safety belt, a label value that parses
// as an IP address or prefix is replaced by [Redacted]. Callers must not
// rely on it: they pass the fixed codes above and nothing else.
package metrics

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Redacted replaces a label value that looks like an IP address or prefix.
const Redacted = "redacted"

// DurationBuckets are the item duration histogram's upper bounds, in
// seconds: from 50 µs (a WASM item on a reused instance) in steps of 1, 2.5,
// 5 per decade to 10 s (a native item, a DNS lookup), then 30 s to 5 minutes
// (a job). 21 buckets: each of the decades an item can land in is split in
// three, so a median and a p99 read from them are off by at most a factor
// of 2.5.
var DurationBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, // 50 µs … 500 µs
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, // 1 ms … 500 ms
	1, 2.5, 5, 10, 30, 60, 120, 300, // 1 s … 5 min
}

// FuelBuckets are the fuel histogram's upper bounds: 1,000 to 10^10 (the
// default budget is 2·10^10) in decades.
var FuelBuckets = prometheus.ExponentialBuckets(1e3, 10, 8)

// MemoryBuckets are the memory peak histogram's upper bounds: 64 KiB (one
// WASM page) to 16 GiB, by factors of 4.
var MemoryBuckets = prometheus.ExponentialBuckets(64<<10, 4, 10)

// ItemPhases are an item's measured phases, in milliseconds as the
// executor reports them; a nil phase was not observed and is not recorded.
type ItemPhases struct {
	QueueWait, Startup, InputValidation, Compute, OutputValidation, Serialization, Cleanup *float64
}

// Lanes is a snapshot of the executor's lanes, as the callback given to
// [WithLanes] returns it.
type Lanes struct {
	// Lanes is the configured number of lanes.
	Lanes int
	// Active lanes run an item; Degraded lanes are quarantined after an
	// unconfirmed cleanup.
	Active   int
	Degraded int
	// Queued items wait for a lane.
	Queued int
	// Waiting batches wait for admission (executor.Batch.Wait).
	Waiting int
}

// Option configures [New].
type Option func(*Metrics)

// WithLanes makes the executor gauges read fn at each scrape. fn is called
// from the scraping goroutine, so it must be safe for concurrent use and
// quick (executor.Executor.Pool, say). Without it the gauges are absent.
func WithLanes(fn func() Lanes) Option {
	return func(m *Metrics) { m.lanes = fn }
}

// WithCollectors registers more collectors in the registry, such as the
// abuse log's counters, which the server owns.
func WithCollectors(cs ...prometheus.Collector) Option {
	return func(m *Metrics) { m.extra = append(m.extra, cs...) }
}

// Metrics holds the collectors and their registry. Its methods are safe
// for concurrent use.
type Metrics struct {
	registry  *prometheus.Registry
	runs      *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	quota     *prometheus.CounterVec
	durations *prometheus.HistogramVec
	// An item's phases, fuel and memory peak (ObserveItem).
	phases *prometheus.HistogramVec
	fuel   *prometheus.HistogramVec
	peaks  *prometheus.HistogramVec
	lanes  func() Lanes
	extra  []prometheus.Collector
	// The HTTP answers (http.go).
	httpDurations *prometheus.HistogramVec
	httpInFlight  *prometheus.GaugeVec
	build         *prometheus.GaugeVec
}

// New returns a Metrics with its own registry, which also holds the Go
// runtime and process collectors.
func New(opts ...Option) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_runs_total",
			Help: "Runs of a tool that reached an outcome (succeeded, failed, refused, cancelled…).",
		}, []string{"tool", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_refusals_total",
			Help: "Runs refused (or, in report mode, that would have been), by stable reason code.",
		}, []string{"reason"}),
		quota: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_quota_decisions_total",
			Help: "Quota decisions by quota class, caller tier and decision (allowed, throttled, reported…).",
		}, []string{"class", "tier", "decision"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolhost_item_duration_seconds",
			Help:    "How long an item ran, from lane acquisition to its end, in seconds.",
			Buckets: DurationBuckets,
		}, []string{"tool"}),
	}
	m.phases = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toolhost_item_phase_seconds",
		Help:    "How long each measured phase of an item took (queue_wait, startup, input_validation, compute, output_validation, serialization, cleanup), in seconds.",
		Buckets: DurationBuckets,
	}, []string{"tool", "phase"})
	m.fuel = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toolhost_item_fuel_used",
		Help:    "The WASM fuel an item consumed.",
		Buckets: FuelBuckets,
	}, []string{"tool"})
	m.peaks = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "toolhost_item_memory_peak_bytes",
		Help:    "The most memory an item's sandbox held at once, in bytes (WASM instance or job cgroup).",
		Buckets: MemoryBuckets,
	}, []string{"tool"})
	m.httpDurations, m.httpInFlight, m.build = httpCollectors()
	for _, o := range opts {
		o(m)
	}
	m.registry.MustRegister(
		m.runs, m.refusals, m.quota, m.durations, m.phases, m.fuel, m.peaks, m.httpDurations, m.httpInFlight, m.build,
		collectors.NewBuildInfoCollector(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if m.lanes != nil {
		m.registry.MustRegister(laneCollector{fn: m.lanes})
	}
	m.registry.MustRegister(m.extra...)
	return m
}

// CountRun counts one run of tool that ended with outcome.
func (m *Metrics) CountRun(tool, outcome string) {
	m.runs.WithLabelValues(safe(tool), safe(outcome)).Inc()
}

// CountRefusal counts one refusal with its stable reason code.
func (m *Metrics) CountRefusal(reason string) {
	m.refusals.WithLabelValues(safe(reason)).Inc()
}

// CountQuotaDecision counts one quota decision for a quota class and a
// caller tier (anonymous, session, user, app): the tier, never the caller.
func (m *Metrics) CountQuotaDecision(class, tier, decision string) {
	m.quota.WithLabelValues(safe(class), safe(tier), safe(decision)).Inc()
}

// ObserveItemDuration records how long one item of tool ran.
func (m *Metrics) ObserveItemDuration(tool string, d time.Duration) {
	m.durations.WithLabelValues(safe(tool)).Observe(d.Seconds())
}

// ObserveItem records one item of tool: each phase it measured, its fuel
// and its memory peak (nil when the item reported none).
func (m *Metrics) ObserveItem(tool string, p ItemPhases, fuel, peakBytes *int64) {
	tool = safe(tool)
	for _, ph := range []struct {
		name string
		ms   *float64
	}{
		{"queue_wait", p.QueueWait}, {"startup", p.Startup}, {"input_validation", p.InputValidation},
		{"compute", p.Compute}, {"output_validation", p.OutputValidation},
		{"serialization", p.Serialization}, {"cleanup", p.Cleanup},
	} {
		if ph.ms != nil {
			m.phases.WithLabelValues(tool, ph.name).Observe(*ph.ms / 1000)
		}
	}
	if fuel != nil {
		m.fuel.WithLabelValues(tool).Observe(float64(*fuel))
	}
	if peakBytes != nil {
		m.peaks.WithLabelValues(tool).Observe(float64(*peakBytes))
	}
}

// Handler serves the registry in the Prometheus exposition formats, for
// /metrics. A collector that fails is reported in the answer while the
// others are still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.registry, // promhttp_metric_handler_errors_total
	})
}

// safe returns v, or Redacted when v parses as an IP address or prefix.
func safe(v string) string {
	// Every address and prefix has a dot or a colon; the fixed codes
	// callers pass have neither, and skip the parsers (whose failures
	// allocate).
	if !strings.ContainsAny(v, ".:") {
		return v
	}
	if _, err := netip.ParseAddr(v); err == nil {
		return Redacted
	}
	if _, err := netip.ParsePrefix(v); err == nil {
		return Redacted
	}
	return v
}

var (
	lanesDesc    = prometheus.NewDesc("toolhost_executor_lanes", "Configured executor lanes.", nil, nil)
	activeDesc   = prometheus.NewDesc("toolhost_executor_lanes_active", "Executor lanes running an item.", nil, nil)
	degradedDesc = prometheus.NewDesc("toolhost_executor_lanes_degraded", "Executor lanes quarantined after an unconfirmed cleanup.", nil, nil)
	queuedDesc   = prometheus.NewDesc("toolhost_executor_queued_items", "Items waiting for an executor lane.", nil, nil)
	waitingDesc  = prometheus.NewDesc("toolhost_executor_waiting_batches", "Batches waiting for the executor's pending items (the run route's admission wait).", nil, nil)
)

// laneCollector reports one snapshot of the lanes per scrape, so that the
// five gauges agree with each other.
type laneCollector struct{ fn func() Lanes }

func (c laneCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lanesDesc
	ch <- activeDesc
	ch <- degradedDesc
	ch <- queuedDesc
	ch <- waitingDesc
}

func (c laneCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.fn()
	ch <- prometheus.MustNewConstMetric(lanesDesc, prometheus.GaugeValue, float64(l.Lanes))
	ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, float64(l.Active))
	ch <- prometheus.MustNewConstMetric(degradedDesc, prometheus.GaugeValue, float64(l.Degraded))
	ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(l.Queued))
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(l.Waiting))
}

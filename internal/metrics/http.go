package metrics

import (
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPBuckets are the bounds, in seconds, of the HTTP answer durations:
// from a cached registry document (well under a millisecond) to a run that
// waits for its job (a minute).
var HTTPBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func httpCollectors() (*prometheus.HistogramVec, *prometheus.GaugeVec, *prometheus.GaugeVec) {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolhost_http_request_duration_seconds",
			Help:    "How long an HTTP answer took, from the request's routing to its handler's end, by method, route pattern and status.",
			Buckets: HTTPBuckets,
		}, []string{"method", "route", "status"}),
		prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolhost_http_requests_in_flight",
			Help: "HTTP requests being answered, by method and route pattern.",
		}, []string{"method", "route"}),
		prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolhost_build_info",
			Help: "Always 1: the server's version and the Go version it was built with.",
		}, []string{"version", "goversion"})
}

// unmatchedRoute is the route label of a request that matched no route
// (a 404 or 405): the path itself would make the label unbounded.
const unmatchedRoute = "unmatched"

// StartRequest counts an HTTP request to route (its pattern, such as
// /api/v1/tools/:id; empty for none) as in flight and returns the function
// that ends it with the answer's status, recording its duration. It is
// safe for concurrent use; a nil Metrics counts nothing.
func (m *Metrics) StartRequest(method, route string) func(status int) {
	if m == nil {
		return func(int) {}
	}
	if route == "" {
		route = unmatchedRoute
	}
	start := time.Now()
	g := m.httpInFlight.WithLabelValues(method, route)
	g.Inc()
	return func(status int) {
		g.Dec()
		m.httpDurations.WithLabelValues(method, route, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
	}
}

// SetBuildInfo records the server's version in toolhost_build_info.
func (m *Metrics) SetBuildInfo(version string) {
	if m == nil {
		return
	}
	m.build.WithLabelValues(version, runtime.Version()).Set(1)
}

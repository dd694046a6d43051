package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// jobsScrapeTimeout bounds the query a scrape makes for the jobs by state.
const jobsScrapeTimeout = time.Second

var jobsDesc = prometheus.NewDesc("toolhost_jobs",
	"Jobs in each state now (state=\"queued\" is the queue's depth; state=\"stalled\" the jobs left running by a replica whose lease ran out, until a rescuer settles them), as the job store holds them.", []string{"state"}, nil)

// jobCollector reports the jobs by state at each scrape; with no jobs
// service, or when the store does not answer within jobsScrapeTimeout, it
// reports nothing rather than stale or invented counts.
type jobCollector struct{ s *Server }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (c jobCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.jobs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobsScrapeTimeout)
	defer cancel()
	counts, err := c.s.jobs.CountByState(ctx)
	if err != nil {
		return
	}
	for st, n := range counts {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), string(st))
	}
}

package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolhost/toolhost/internal/registry"
)

// registryCollectors are the registry's gauges, read from the published
// snapshot at each scrape (issue 16 item 30): its generation, its
// services and the modules or services it refused. Zero before the first
// snapshot.
func registryCollectors(s *Server) []prometheus.Collector {
	snap := func(f func(*registry.Snapshot) float64) func() float64 {
		return func() float64 {
			if s.registry == nil {
				return 0
			}
			sn := s.registry.Snapshot()
			if sn == nil {
				return 0
			}
			return f(sn)
		}
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolhost_registry_generation",
			Help: "The generation of the published tool snapshot; it rises with each reload.",
		}, snap(func(sn *registry.Snapshot) float64 { return float64(sn.Generation()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolhost_registry_services",
			Help: "Tools (services) in the published snapshot.",
		}, snap(func(sn *registry.Snapshot) float64 { return float64(len(sn.Services())) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolhost_registry_failures",
			Help: "Modules or services the published snapshot refused (diagnostics lists them).",
		}, snap(func(sn *registry.Snapshot) float64 { return float64(len(sn.Failures())) })),
	}
}

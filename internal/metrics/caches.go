package metrics

import "github.com/prometheus/client_golang/prometheus"

// Caches is a snapshot of the WASM runtime's lookups in its cache folder,
// as the callback given to [WithCaches] returns it (host.Runtime.CacheStats):
// code lookups find a module's compiled code or compile it; image lookups
// find the memory image its initialiser left or run the initialiser; load
// lookups find what instrumenting the module gave or instrument it.
type Caches struct {
	CodeHits, CodeMisses   uint64
	ImageHits, ImageMisses uint64
	LoadHits, LoadMisses   uint64
}

// WithCaches makes the cache lookup counters read fn at each scrape; fn
// must be safe for concurrent use and quick. Without it they are absent.
func WithCaches(fn func() Caches) Option {
	return func(m *Metrics) { m.extra = append(m.extra, cacheCollector{fn: fn}) }
}

var cacheLookupsDesc = prometheus.NewDesc("toolhost_compile_cache_lookups_total",
	"Module loads' lookups in the cache folder, by cache (code: compiled code; image: the initialiser's memory image; load: what instrumenting the module gave) and result (hit, miss).",
	[]string{"cache", "result"}, nil)

// cacheCollector reports one snapshot of the cache counters per scrape.
type cacheCollector struct{ fn func() Caches }

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cacheLookupsDesc }

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.fn()
	for _, v := range []struct {
		cache, result string
		n             uint64
	}{
		{"code", "hit", s.CodeHits}, {"code", "miss", s.CodeMisses},
		{"image", "hit", s.ImageHits}, {"image", "miss", s.ImageMisses},
		{"load", "hit", s.LoadHits}, {"load", "miss", s.LoadMisses},
	} {
		ch <- prometheus.MustNewConstMetric(cacheLookupsDesc, prometheus.CounterValue, float64(v.n), v.cache, v.result)
	}
}

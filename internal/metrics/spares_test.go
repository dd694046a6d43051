package metrics

import (
	"strings"
	"testing"
)

func TestSpareMetrics(t *testing.T) {
	used := uint64(6)
	m := New(WithSpares(func() Spares {
		used++
		return Spares{Running: 4, Ready: 2, Starting: 1, JobCgroups: 6, Used: used, Fresh: 3, Lost: 1}
	}))
	body := scrape(t, m)
	for _, want := range []string{
		"toolhost_native_spares_ready 2\n",
		"toolhost_native_spares_used_total 7\n",
		"toolhost_native_fresh_workers_total 3\n",
		"toolhost_native_spares_lost_total 1\n",
		`toolhost_native_workers{state="running"} 4` + "\n",
		`toolhost_native_workers{state="spare_ready"} 2` + "\n",
		`toolhost_native_workers{state="spare_starting"} 1` + "\n",
		"toolhost_native_job_cgroups 6\n",
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

func TestCacheMetrics(t *testing.T) {
	hits := uint64(0)
	m := New(WithCaches(func() Caches {
		hits++
		return Caches{CodeHits: hits, CodeMisses: 2, ImageHits: 3, ImageMisses: 4, LoadHits: 5, LoadMisses: 6}
	}))
	body := scrape(t, m)
	for _, want := range []string{
		`toolhost_compile_cache_lookups_total{cache="code",result="hit"} 1`,
		`toolhost_compile_cache_lookups_total{cache="code",result="miss"} 2`,
		`toolhost_compile_cache_lookups_total{cache="image",result="hit"} 3`,
		`toolhost_compile_cache_lookups_total{cache="image",result="miss"} 4`,
		`toolhost_compile_cache_lookups_total{cache="load",result="hit"} 5`,
		`toolhost_compile_cache_lookups_total{cache="load",result="miss"} 6`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if body := scrape(t, m); !strings.Contains(body, `toolhost_compile_cache_lookups_total{cache="code",result="hit"} 2`+"\n") {
		t.Error("the second scrape did not read the counters again")
	}
}

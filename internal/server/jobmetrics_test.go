package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// /metrics reports the jobs by state from the job store (issue 16, item
// 30): every state, 0 when none, and a finished job counted once; and
// beside them the cache folder's lookups of the modules loaded and the
// native supervisor's live workers and job cgroups.
func TestJobsByStateMetric(t *testing.T) {
	r := startConfigured(t, map[string][]byte{"ping.wasm": testkit.WAT(t, "ping")}, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	scrape := func() string {
		status, _, body := r.do("GET", "/metrics", "", nil)
		if status != http.StatusOK {
			t.Fatalf("/metrics: %d", status)
		}
		return string(body)
	}
	before := scrape()
	for _, want := range []string{`toolhost_jobs{state="queued"} 0`, `toolhost_jobs{state="running"} 0`, `toolhost_jobs{state="succeeded"} 0`} {
		if !strings.Contains(before, want) {
			t.Errorf("before any job, /metrics lacks %s", want)
		}
	}
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"a","owner_password":"b"}`)},
		part{name: "wait_ms", content: []byte("60000")},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	if status != http.StatusOK {
		t.Fatalf("run: %d %s", status, body)
	}
	after := scrape()
	for _, want := range []string{`toolhost_jobs{state="succeeded"} 1`, `toolhost_jobs{state="queued"} 0`, `toolhost_jobs{state="failed"} 0`,
		`toolhost_native_workers{state="running"} 0`, "toolhost_native_job_cgroups "} {
		if !strings.Contains(after, want) {
			t.Errorf("after one job, /metrics lacks %s", want)
		}
	}
	// Every module loaded looked its code up in the cache folder once.
	lookups := 0.0
	for _, result := range []string{"hit", "miss"} {
		lookups += metricValue(t, after, `toolhost_compile_cache_lookups_total{cache="code",result="`+result+`"}`)
	}
	if lookups < 1 {
		t.Errorf("no code cache lookup counted with the bundled modules loaded:\n%s", after)
	}
}

// metricValue returns the value of the sample named series (with its
// labels) in an exposition body.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return v
		}
	}
	t.Fatalf("/metrics lacks %s", series)
	return 0
}

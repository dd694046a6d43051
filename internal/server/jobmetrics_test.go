package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
)

// /metrics reports the jobs by state from the job store (issue 16, item
// 30): every state, 0 when none, and a finished job counted once.
func TestJobsByStateMetric(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
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
	for _, want := range []string{`toolhost_jobs{state="succeeded"} 1`, `toolhost_jobs{state="queued"} 0`, `toolhost_jobs{state="failed"} 0`} {
		if !strings.Contains(after, want) {
			t.Errorf("after one job, /metrics lacks %s", want)
		}
	}
}

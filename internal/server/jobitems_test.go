package server_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
)

// Issue 16, items 2–9: job files, job documents and their events.

// TestRefusedUploadCostsNothing (issue 16, item 5): an upload refused
// before the tool runs (415 tools.run.file_type, on the run route and on
// POST /jobs) spends none of the caller's quota: with an allowance of one
// pdf_protect run, any number of refused uploads leave it whole, the run
// after them is admitted, and only the run after that is refused 429.
func TestRefusedUploadCostsNothing(t *testing.T) {
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	var cost int
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		cost = 3 // one run of pdf_protect (cost 2), not two
		tb := guard.DefaultTable()
		cl := tb.Classes[guard.ClassJob]
		cl.User = guard.Allowance{Burst: cost, PerMinute: 1}
		tb.Classes[guard.ClassJob] = cl
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: &tb, Now: clock.Now}
	})
	var tool struct {
		Cost int `json:"cost"`
	}
	r.getJSON("/api/v1/tools/pdf_protect", &tool)
	if tool.Cost < 1 || tool.Cost > cost || 2*tool.Cost <= cost {
		t.Fatalf("pdf_protect costs %d: the test's allowance of %d is not one run", tool.Cost, cost)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 64)...)
	input := []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)
	for i := range 3 {
		status, h, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
			part{name: "input", content: input}, part{name: "file", content: png, file: true})
		problemCode(t, "a PNG run", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
		status, h, body = r.doMultipart("/api/v1/jobs", r.token,
			part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"protect","user_password":"a","owner_password":"b"}}`)},
			part{name: "file", content: png, file: true})
		problemCode(t, "a PNG job", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
		if t.Failed() {
			t.Fatalf("refusal %d", i)
		}
	}
	letter := readPDF(t, "letter_3pages.pdf")
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: input}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: letter, file: true})
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("the run after the refusals: %d %s", status, body)
	}
	status, h, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: input}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: letter, file: true})
	problemCode(t, "the run over the allowance", status, h, body, http.StatusTooManyRequests, contracts.ProblemQuotaExceeded)
}

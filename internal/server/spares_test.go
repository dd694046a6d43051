package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
)

// nativeWorkersDiag is the part of diagnostics that reports the native
// supervisor's spare workers.
type nativeWorkersDiag struct {
	NativeWorkers *struct {
		Spares           int   `json:"spares"`
		SparesReady      int   `json:"spares_ready"`
		SparesUsed       int   `json:"spares_used"`
		FreshWorkers     int   `json:"fresh_workers"`
		SpareMemoryBytes int64 `json:"spare_memory_bytes"`
	} `json:"native_workers"`
}

// A server with spare workers hands a native item to a ready spare, and
// diagnostics and /metrics say so; without spares diagnostics leave them
// out.
func TestSpareWorkers(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) { c.Supervisor.Spares = 1 })
	var d nativeWorkersDiag
	deadline := time.Now().Add(time.Minute)
	for {
		r.getJSON("/api/v1/tools/diagnostics", &d)
		if d.NativeWorkers == nil {
			t.Fatal("diagnostics without native_workers while spares are on")
		}
		if d.NativeWorkers.SparesReady == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no spare ready: %+v", *d.NativeWorkers)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d.NativeWorkers.Spares != 1 || d.NativeWorkers.SpareMemoryBytes <= 0 {
		t.Errorf("native workers %+v", *d.NativeWorkers)
	}
	body := `{"input":{"operation":"value","currency":"EUR","holdings":[` +
		`{"instrument_id":"A","quantity":"10","price":"40","currency":"EUR"}]}}`
	status, _, out := r.do("POST", "/api/v1/tools/pac_allocator/run", r.token, []byte(body))
	if status != http.StatusOK {
		t.Fatalf("run: %d %s", status, out)
	}
	var res struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Status != "succeeded" {
		t.Fatalf("run: %s (%v)", out, err)
	}
	r.getJSON("/api/v1/tools/diagnostics", &d)
	if d.NativeWorkers.SparesUsed != 1 || d.NativeWorkers.FreshWorkers != 0 {
		t.Errorf("native workers after one item %+v", *d.NativeWorkers)
	}
	if m := r.metricsText(); !strings.Contains(m, "toolhost_native_spares_used_total 1\n") ||
		!strings.Contains(m, "toolhost_native_fresh_workers_total 0\n") {
		t.Errorf("/metrics does not count the spare:\n%s", grepLines(m, "toolhost_native_"))
	}

	off := startConfigured(t, nil, true, nil)
	var none nativeWorkersDiag
	off.getJSON("/api/v1/tools/diagnostics", &none)
	if none.NativeWorkers != nil {
		t.Errorf("native_workers without spares: %+v", *none.NativeWorkers)
	}
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

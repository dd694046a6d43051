package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestReadRouteBudget: the catalogue and diagnostics routes run under a
// request budget of their own (seed 000: 20 s, DefaultReadBudget), the
// account lookup included; a request whose budget is spent before it
// answers gets 503 request_timeout (issue 16, item 23). The budget here is
// spent before the handler runs, so the test does not depend on timing.
func TestReadRouteBudget(t *testing.T) {
	r := startHygiene(t)
	for _, path := range []string{"/api/v1/tools/catalog", "/api/v1/tools/diagnostics"} {
		if resp, body := r.do("GET", path, true); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s within the default budget: %d %s", path, resp.StatusCode, body)
		}
	}
	if r.api.cfg.ReadBudget != 0 {
		t.Fatalf("the default budget is %v, want zero (DefaultReadBudget, %v)", r.api.cfg.ReadBudget, DefaultReadBudget)
	}

	cfg := r.api.cfg
	cfg.ReadBudget = time.Nanosecond
	srv := httptest.NewServer(New(cfg).Handler())
	t.Cleanup(srv.Close)
	spent := &hygieneRig{t: t, url: srv.URL, token: r.token}
	for _, path := range []string{"/api/v1/tools/catalog", "/api/v1/tools/diagnostics"} {
		resp, body := spent.do("GET", path, true)
		var p struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != http.StatusServiceUnavailable || p.Code != "request_timeout" {
			t.Errorf("%s past its budget: %d %s, want 503 request_timeout", path, resp.StatusCode, body)
		}
	}
	// Compute has its own budget (the largest request_timeout_ms of its
	// items): the read budget does not apply to it.
	resp, _ := spent.do("POST", "/api/v1/tools/compute", true)
	if resp.StatusCode == http.StatusServiceUnavailable {
		t.Errorf("compute answered %d under the read budget", resp.StatusCode)
	}
}

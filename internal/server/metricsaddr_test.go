package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/server"
)

// With MetricsElsewhere (serve --metrics-addr), /metrics is not on the
// API's listener but on a listener of its own, where it still counts the
// API's answers and has the registry's gauges (issue 16 item 30).
func TestMetricsOnTheirOwnListener(t *testing.T) {
	r := startConfigured(t, nil, false, func(c *server.Config) { c.MetricsElsewhere = true })
	resp, err := r.client.Get(r.url + "/api/v1/tools")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = r.client.Get(r.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the API's listener: %d, want 404", resp.StatusCode)
	}
	ms := httptest.NewServer(r.srv.MetricsHandler())
	defer ms.Close()
	resp, err = r.client.Get(ms.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `toolhost_http_request_duration_seconds_count{method="GET",route="/api/v1/tools",status="200"} 1`) ||
		!strings.Contains(string(body), "toolhost_build_info{") || !strings.Contains(string(body), "toolhost_registry_generation ") ||
		!strings.Contains(string(body), "toolhost_registry_failures ") {
		t.Errorf("the metrics listener: %d\n%.2000s", resp.StatusCode, body)
	}
}

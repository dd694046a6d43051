package api

import (
	"runtime"
	"strings"
	"testing"
)

// /metrics has per-route HTTP durations (by method, route pattern and
// status; a request that matched no route is "unmatched", never its path)
// and the requests in flight — the scrape itself among them — and the
// build info (issue 16 item 30).
func TestHTTPMetrics(t *testing.T) {
	r := startHygiene(t)
	r.api.cfg.Metrics.SetBuildInfo("9.9.9")
	r.do("GET", Prefix+"/tools", false)
	r.do("GET", Prefix+"/tools", false)
	r.do("GET", Prefix+"/tools/no_such_tool", false)
	r.do("GET", "/nowhere/secret-path", false)
	_, body := r.do("GET", "/metrics", false, "Accept", "text/plain")
	text := string(body)
	for _, want := range []string{
		`toolhost_http_request_duration_seconds_count{method="GET",route="/api/v1/tools",status="200"} 2`,
		`toolhost_http_request_duration_seconds_count{method="GET",route="/api/v1/tools/:id",status="404"} 1`,
		`toolhost_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1`,
		`toolhost_http_requests_in_flight{method="GET",route="/metrics"} 1`,
		`toolhost_http_requests_in_flight{method="GET",route="/api/v1/tools"} 0`,
		`toolhost_build_info{goversion="` + runtime.Version() + `",version="9.9.9"} 1`,
		`go_build_info{`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in /metrics", want)
		}
	}
	if strings.Contains(text, "secret-path") {
		t.Error("an unmatched path is a label value")
	}
}

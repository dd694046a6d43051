package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scrape fetches m's /metrics as the text exposition format.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v\n%s", resp.StatusCode, err, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	return string(body)
}

func TestExposition(t *testing.T) {
	var mu sync.Mutex
	lanes := Lanes{Lanes: 4, Active: 3, Degraded: 1, Queued: 7, Waiting: 3}
	m := New(WithLanes(func() Lanes {
		mu.Lock()
		defer mu.Unlock()
		return lanes
	}))
	m.CountRun("json_minify", "succeeded")
	m.CountRun("json_minify", "succeeded")
	m.CountRun("port_check", "refused")
	m.CountRefusal("quota.exceeded")
	m.CountRefusal("probe.forbidden")
	m.CountRefusal("quota.exceeded")
	m.CountQuotaDecision("heavy", "anonymous", "throttled")
	m.CountQuotaDecision("light", "user", "allowed")
	m.ObserveItemDuration("json_minify", 3*time.Millisecond)
	m.ObserveItemDuration("json_minify", 700*time.Millisecond)

	body := scrape(t, m)
	tests := []struct {
		name string
		line string
	}{
		{name: "runs", line: `toolhost_runs_total{outcome="succeeded",tool="json_minify"} 2`},
		{name: "refused run", line: `toolhost_runs_total{outcome="refused",tool="port_check"} 1`},
		{name: "refusals", line: `toolhost_refusals_total{reason="quota.exceeded"} 2`},
		{name: "another refusal", line: `toolhost_refusals_total{reason="probe.forbidden"} 1`},
		{name: "quota throttled", line: `toolhost_quota_decisions_total{class="heavy",decision="throttled",tier="anonymous"} 1`},
		{name: "quota allowed", line: `toolhost_quota_decisions_total{class="light",decision="allowed",tier="user"} 1`},
		{name: "histogram type", line: `# TYPE toolhost_item_duration_seconds histogram`},
		{name: "bucket 1ms", line: `toolhost_item_duration_seconds_bucket{tool="json_minify",le="0.001"} 0`},
		{name: "bucket 5ms", line: `toolhost_item_duration_seconds_bucket{tool="json_minify",le="0.005"} 1`},
		{name: "bucket 0.5s", line: `toolhost_item_duration_seconds_bucket{tool="json_minify",le="0.5"} 1`},
		{name: "bucket 1s", line: `toolhost_item_duration_seconds_bucket{tool="json_minify",le="1"} 2`},
		{name: "bucket inf", line: `toolhost_item_duration_seconds_bucket{tool="json_minify",le="+Inf"} 2`},
		{name: "duration sum", line: `toolhost_item_duration_seconds_sum{tool="json_minify"} 0.703`},
		{name: "duration count", line: `toolhost_item_duration_seconds_count{tool="json_minify"} 2`},
		{name: "lanes", line: `toolhost_executor_lanes 4`},
		{name: "active", line: `toolhost_executor_lanes_active 3`},
		{name: "degraded", line: `toolhost_executor_lanes_degraded 1`},
		{name: "queued", line: `toolhost_executor_queued_items 7`},
		{name: "waiting", line: `toolhost_executor_waiting_batches 3`},
		{name: "gauge type", line: `# TYPE toolhost_executor_lanes_active gauge`},
		{name: "counter type", line: `# TYPE toolhost_runs_total counter`},
		{name: "go runtime", line: `# TYPE go_goroutines gauge`},
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		lines[l] = true
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !lines[tt.line] {
				t.Fatalf("no line %q in:\n%s", tt.line, body)
			}
		})
	}

	// The gauges follow the callback at each scrape.
	mu.Lock()
	lanes.Active, lanes.Queued = 0, 0
	mu.Unlock()
	body = scrape(t, m)
	for _, want := range []string{"\ntoolhost_executor_lanes_active 0\n", "\ntoolhost_executor_queued_items 0\n"} {
		if !strings.Contains(body, want) {
			t.Fatalf("second scrape lacks %q", want)
		}
	}
}

func TestOwnRegistry(t *testing.T) {
	a, b := New(), New() // two registries: no duplicate registration panic
	a.CountRefusal("quota.exceeded")
	if strings.Contains(scrape(t, b), "toolhost_refusals_total{") {
		t.Fatal("a refusal counted in one Metrics shows in another")
	}
	if strings.Contains(scrape(t, a), "toolhost_executor_lanes") {
		t.Fatal("lane gauges without a lanes callback")
	}
}

func TestNoAddressInLabels(t *testing.T) {
	m := New()
	addrs := []string{"203.0.113.9", "2001:db8::7", "::ffff:198.51.100.1", "10.0.0.0/8", "2001:db8::/64"}
	for _, a := range addrs {
		m.CountRun(a, "refused")
		m.CountRefusal(a)
		m.CountQuotaDecision("heavy", a, "throttled")
		m.ObserveItemDuration(a, time.Second)
	}
	body := scrape(t, m)
	for _, a := range addrs {
		if strings.Contains(body, a) {
			t.Errorf("the exposition contains %q", a)
		}
	}
	for _, want := range []string{
		`toolhost_refusals_total{reason="redacted"} 5`,
		`toolhost_quota_decisions_total{class="heavy",decision="throttled",tier="redacted"} 5`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no line %q", want)
		}
	}
	// Ordinary codes are left alone.
	for _, v := range []string{"quota.exceeded", "port_check", "anonymous", "1.5"} {
		if got := safe(v); got != v {
			t.Errorf("safe(%q) = %q", v, got)
		}
	}
}

// The item-duration histogram resolves a WASM item (issue 13, item 5):
// its buckets start at 50 µs, so an item of 80 µs and one of 400 µs land
// in different buckets below a millisecond, and they still reach 300 s.
func TestDurationBucketsResolveMicroseconds(t *testing.T) {
	if first, last := DurationBuckets[0], DurationBuckets[len(DurationBuckets)-1]; first != 50e-6 || last != 300 {
		t.Fatalf("DurationBuckets run from %g to %g s, want 5e-05 to 300", first, last)
	}
	for i := 1; i < len(DurationBuckets); i++ {
		if DurationBuckets[i] <= DurationBuckets[i-1] {
			t.Fatalf("DurationBuckets not increasing at %d: %v", i, DurationBuckets)
		}
	}
	m := New()
	m.ObserveItemDuration("hash", 80*time.Microsecond)
	m.ObserveItemDuration("hash", 400*time.Microsecond)
	m.ObserveItemDuration("hash", 3*time.Millisecond)
	body := scrape(t, m)
	var les []string
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, `toolhost_item_duration_seconds_bucket{tool="hash",le="`); ok {
			les = append(les, rest[:strings.IndexByte(rest, '"')])
		}
	}
	if len(les) != len(DurationBuckets)+1 {
		t.Fatalf("%d buckets exposed, want %d and +Inf: %v", len(les), len(DurationBuckets), les)
	}
	for _, want := range []string{
		`le="5e-05"} 0`,
		`le="0.0001"} 1`,
		`le="0.00025"} 1`,
		`le="0.0005"} 2`,
		`le="0.001"} 2`,
		`le="0.005"} 3`,
		`le="300"} 3`,
		`le="+Inf"} 3`,
	} {
		if !strings.Contains(body, `toolhost_item_duration_seconds_bucket{tool="hash",`+want+"\n") {
			t.Errorf("no bucket line %s", want)
		}
	}
}

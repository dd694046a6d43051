package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// TestRedisSharedGuard: two servers over one Redis (serve --redis) share
// one anonymous caller's quota — together they admit its allowance, as
// one server would. When Redis stops, the enforcing server refuses runs
// with 503 tools.server.unavailable and Retry-After (never a 500), the
// reporting one runs them, and both /readyz answer 503 naming redis; when
// Redis returns, both are ready and the quota counts again.
func TestRedisSharedGuard(t *testing.T) {
	redis := redistest.Start(t)
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	withRedis := func(mode guard.Mode) func(*server.Config) {
		return func(c *server.Config) {
			c.Redis = redis.URL()
			c.Guard = server.GuardConfig{Mode: mode, Quotas: smallTable(cost), Now: clock.Now}
		}
	}
	a := startConfigured(t, bundled(t), false, withRedis(guard.Enforce))
	b := startConfigured(t, bundled(t), false, withRedis(guard.Enforce))
	report := startConfigured(t, bundled(t), false, withRedis(guard.Report))

	// The anonymous allowance of smallTable is 2 runs, on a frozen clock.
	admitted := 0
	for i := range 6 {
		r := a
		if i%2 == 1 {
			r = b
		}
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun))
		switch status {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
			problemCode(t, "over the shared allowance", status, h, body, http.StatusTooManyRequests, "tools.caller.quota_exceeded")
			if h.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
		default:
			t.Fatalf("run %d: %d %s", i, status, body)
		}
	}
	if admitted != 2 {
		t.Fatalf("two servers admitted %d runs of one caller's 2", admitted)
	}
	for _, r := range []*rig{a, b} {
		if status, _, body := r.do("GET", "/readyz", "", nil); status != http.StatusOK {
			t.Fatalf("/readyz with Redis up: %d %s", status, body)
		}
	}

	redis.Stop()
	for range 3 {
		status, h, body := a.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun))
		problemCode(t, "enforce, Redis down", status, h, body, http.StatusServiceUnavailable, "tools.server.unavailable")
		if h.Get("Retry-After") != "1" {
			t.Errorf("enforce, Redis down: Retry-After %q", h.Get("Retry-After"))
		}
	}
	if status, _, body := report.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun)); status != http.StatusOK {
		t.Fatalf("report, Redis down: %d %s", status, body)
	}
	for _, r := range []*rig{a, report} {
		status, _, body := r.do("GET", "/readyz", "", nil)
		var ready struct {
			Status string `json:"status"`
			Checks struct {
				Redis struct {
					Status string `json:"status"`
				} `json:"redis"`
			} `json:"checks"`
		}
		if err := json.Unmarshal(body, &ready); err != nil || status != http.StatusServiceUnavailable || ready.Checks.Redis.Status == "" {
			t.Fatalf("/readyz with Redis down: %d %s", status, body)
		}
	}

	redis.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, body := a.do("GET", "/readyz", "", nil)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after Redis returned: %d %s", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The restarted Redis holds nothing: the caller's bucket is full again.
	admitted = 0
	for i := range 4 {
		r := a
		if i%2 == 1 {
			r = b
		}
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun))
		switch status {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("after recovery, run %d: %d %v %s", i, status, h, body)
		}
	}
	if admitted != 2 {
		t.Fatalf("after recovery: %d admitted of 2", admitted)
	}
}

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
)

// The guard, end to end (issue 7, "Done means"): tiers, quotas with
// Retry-After, proxies, probes and their capability, per-target throttles,
// report mode and the abuse log without raw addresses.

// allowance is a tools-run cell of n runs of cost each, refilled at one
// run a minute (the tests freeze the guard's clock, so nothing refills
// unless they move it).
func allowance(n, cost int) guard.Allowance {
	return guard.Allowance{Burst: n * cost, PerMinute: cost}
}

// smallTable gives tools-run 2, 3, 4, 5 and 1 runs of cost to anonymous,
// session, user, app and sandbox callers.
func smallTable(cost int) *guard.Table {
	t := guard.DefaultTable()
	t.Classes[guard.ClassRun] = guard.Class{
		Anonymous: allowance(2, cost), Session: allowance(3, cost), User: allowance(4, cost),
		App: allowance(5, cost), Sandbox: allowance(1, cost),
	}
	return &t
}

// guardClock is the guard's clock in a test.
type guardClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *guardClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *guardClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cred is how a request presents itself.
type cred struct {
	bearer, session string
	header          http.Header
}

// send sends a JSON request with c's credentials.
func (r *rig) send(method, path string, c cred, body []byte) (int, http.Header, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.session != "" {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: c.session})
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b.Bytes()
}

const hashRun = `{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`

// hashCost reads the hash tool's cost from its descriptor.
func hashCost(t *testing.T) int {
	t.Helper()
	r := start(t, bundled(t))
	var tool struct {
		Cost       int    `json:"cost"`
		QuotaClass string `json:"quotaClass"`
	}
	r.getJSON("/api/v1/tools/hash", &tool)
	if tool.QuotaClass != guard.ClassRun || tool.Cost < 1 {
		t.Fatalf("hash: class %q cost %d", tool.QuotaClass, tool.Cost)
	}
	return tool.Cost
}

// admitted runs hash as c until it is refused and returns the runs that
// succeeded and the refusal.
func (r *rig) admitted(c cred, most int) (n int, status int, h http.Header, body []byte) {
	r.t.Helper()
	for n = 0; n <= most; n++ {
		status, h, body = r.send("POST", "/api/v1/tools/hash/run", c, []byte(hashRun))
		if status != http.StatusOK {
			return n, status, h, body
		}
		if h.Get("RateLimit-Policy") == "" || h.Get("RateLimit") == "" {
			r.t.Errorf("run %d: no rate-limit fields: %v", n, h)
		}
	}
	r.t.Fatalf("never refused after %d runs", n)
	return
}

func TestGuardTiersAndRetry(t *testing.T) {
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: smallTable(cost), Now: clock.Now}
	})
	ctx := context.Background()
	session, _, err := r.srv.Accounts().CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app, err := r.srv.Accounts().CreateAppToken(ctx, "acme", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	sandbox, err := r.srv.Accounts().CreateAppToken(ctx, "acme-sandbox", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cred cred
		want int
	}{
		{name: "anonymous", want: 2},
		{name: "session", cred: cred{session: session}, want: 3},
		{name: "user", cred: cred{bearer: r.token}, want: 4},
		{name: "app", cred: cred{bearer: app}, want: 5},
		{name: "sandbox", cred: cred{bearer: sandbox}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, status, h, body := r.admitted(tt.cred, 10)
			if n != tt.want {
				t.Errorf("%d runs admitted, want %d", n, tt.want)
			}
			problemCode(t, "over the allowance", status, h, body, http.StatusTooManyRequests, "tools.caller.quota_exceeded")
			secs, err := strconv.Atoi(h.Get("Retry-After"))
			if err != nil || secs < 1 {
				t.Fatalf("Retry-After %q", h.Get("Retry-After"))
			}
			if h.Get("RateLimit-Policy") == "" {
				t.Errorf("no RateLimit-Policy on the 429: %v", h)
			}
		})
	}

	// A spoofed X-Forwarded-For from an untrusted peer changes nothing:
	// the anonymous caller is still the loopback peer, whose bucket is
	// spent.
	spoofed := cred{header: http.Header{"X-Forwarded-For": {"203.0.113.9"}, "X-Real-Ip": {"203.0.113.10"}}}
	status, h, body := r.send("POST", "/api/v1/tools/hash/run", spoofed, []byte(hashRun))
	problemCode(t, "spoofed", status, h, body, http.StatusTooManyRequests, "tools.caller.quota_exceeded")

	// After the Retry-After the run is admitted again.
	secs, _ := strconv.Atoi(h.Get("Retry-After"))
	clock.advance(time.Duration(secs) * time.Second)
	if status, _, body := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun)); status != http.StatusOK {
		t.Fatalf("retry after Retry-After: %d %s", status, body)
	}

	// A credential that does not resolve is a 401, never anonymous.
	status, h, body = r.send("POST", "/api/v1/tools/hash/run", cred{bearer: "th_nope"}, []byte(hashRun))
	problemCode(t, "bad token", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	status, h, body = r.send("POST", "/api/v1/tools/hash/run", cred{session: "ths_nope"}, []byte(hashRun))
	problemCode(t, "bad session", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")

	// Parallel requests never over-admit: a fresh user with 4 runs.
	carol, err := r.srv.Accounts().CreateToken(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, quota := 0, 0
	for range 12 {
		wg.Go(func() {
			status, _, _ := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: carol}, []byte(hashRun))
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				quota++
			}
		})
	}
	wg.Wait()
	// The guard alone decides a caller's runs: exactly 4 are admitted,
	// and the executor (with lanes and pending room to spare) runs them.
	if ok != 4 || quota != 8 {
		t.Errorf("%d parallel runs succeeded and %d were refused by the quota, want 4 and 8", ok, quota)
	}

	// The metrics are served, with no address in them.
	status, _, body = r.do("GET", "/metrics", "", nil)
	if status != http.StatusOK || !bytes.Contains(body, []byte("quota_exceeded")) || bytes.Contains(body, []byte("127.0.0.1")) {
		t.Errorf("/metrics: %d\n%s", status, body)
	}
}

// TestGuardReportMode: what enforce refuses, report lets through and logs.
func TestGuardReportMode(t *testing.T) {
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Report, Quotas: smallTable(cost), Now: clock.Now}
	})
	for i := range 4 {
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun))
		if status != http.StatusOK {
			t.Fatalf("run %d in report mode: %d %s", i, status, body)
		}
		// A run let through is a success: it carries the rate-limit
		// fields (spent) but never a Retry-After.
		if i >= 2 && (h.Get("RateLimit") == "" || h.Get("Retry-After") != "") {
			t.Errorf("run %d: want RateLimit and no Retry-After on a reported run: %v", i, h)
		}
	}
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if events(rows) != 2 {
		t.Fatalf("abuse rows %+v count %d events, want 2", rows, events(rows))
	}
	for _, row := range rows {
		if !row.Reported || row.Reason != string(guard.ReasonQuotaExceeded) || row.Tool != "hash" || row.Caller == "" {
			t.Errorf("row %+v", row)
		}
	}

	// Authentication and capabilities are enforced in report mode too:
	// they protect the probes, whose workers do not know the caller.
	probe := []byte(`{"input":{"operation":"check","host":"192.0.2.1","ports":[80]}}`)
	status, h, body := r.send("POST", "/api/v1/tools/port_check/run", cred{}, probe)
	problemCode(t, "anonymous probe in report mode", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	status, h, body = r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: r.token}, probe)
	problemCode(t, "probe without the capability in report mode", status, h, body, http.StatusForbidden, "tools.caller.forbidden")
}

// TestGuardProbes: the probes need a capability token; private targets
// are refused unless allowed; the per-target throttle spans callers; the
// seed-000 compute route refuses a probe to a token without the
// capability.
func TestGuardProbes(t *testing.T) {
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce}
		c.ProbeAllow = "127.0.0.0/8"
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	probe := func(host string) []byte {
		return []byte(fmt.Sprintf(`{"input":{"operation":"check","host":%q,"ports":[%d]}}`, host, port))
	}
	ctx := context.Background()
	bob, err := r.srv.Accounts().CreateUserToken(ctx, "bob", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}
	dave, err := r.srv.Accounts().CreateUserToken(ctx, "dave", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}

	status, h, body := r.send("POST", "/api/v1/tools/port_check/run", cred{}, probe("127.0.0.1"))
	problemCode(t, "anonymous probe", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	status, h, body = r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: r.token}, probe("127.0.0.1"))
	problemCode(t, "probe without the capability", status, h, body, http.StatusForbidden, "tools.caller.forbidden")

	status, _, body = r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: bob}, probe("127.0.0.1"))
	var run struct {
		Status string `json:"status"`
		Result struct {
			Ports []struct {
				State string `json:"state"`
			} `json:"ports"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &run); status != http.StatusOK || err != nil || run.Status != "succeeded" ||
		len(run.Result.Ports) != 1 || run.Result.Ports[0].State != "open" {
		t.Fatalf("probe with the capability: %d %s", status, body)
	}

	// A private address outside the allow-list is refused by the tool.
	status, _, body = r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: dave}, probe("10.0.0.1"))
	if status == http.StatusOK && !bytes.Contains(body, []byte(`"failed"`)) {
		t.Errorf("a probe at a private address: %d %s", status, body)
	}
	if !bytes.Contains(body, []byte("invalid")) {
		t.Errorf("a probe at a private address: %d %s", status, body)
	}

	// The per-target throttle spans callers: bob ran once against
	// 127.0.0.1; bob and dave share the remaining runs.
	callers := []string{bob, dave}
	admitted := 1
	for i := 0; ; i++ {
		status, h, body = r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: callers[i%2]}, probe("127.0.0.1"))
		if status != http.StatusOK {
			break
		}
		admitted++
		if i > 20 {
			t.Fatal("never throttled")
		}
	}
	problemCode(t, "throttled target", status, h, body, http.StatusTooManyRequests, "tools.caller.throttled")
	if admitted != 6 || h.Get("Retry-After") == "" {
		t.Errorf("%d runs against one target admitted (want 6), Retry-After %q", admitted, h.Get("Retry-After"))
	}
	// Another target is not throttled.
	if status, _, body := r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: dave}, probe("127.0.0.2")); status != http.StatusOK {
		t.Errorf("another target: %d %s", status, body)
	}

	// The seed-000 compute route refuses a probe item to a token without
	// the capability, before anything runs.
	item := r.item("p", "port_check", map[string]any{"operation": "check", "host": "127.0.0.1", "ports": []int{port}})
	status, _, body = r.do("POST", "/api/v1/tools/compute", r.token, encode(t, map[string]any{"request_id": "probe", "items": []any{item}}))
	if status != http.StatusForbidden {
		t.Errorf("compute of a probe without the capability: %d %s", status, body)
	}
}

// TestGuardNoRawAddress: after a run of refusals the abuse table and the
// server's log hold no raw client address. The client connects from
// 127.0.0.2 so that the listener's own address (127.0.0.1) in the log does
// not count.
func TestGuardNoRawAddress(t *testing.T) {
	cost := hashCost(t)
	logs := &syncBuffer{}
	var dataDir string
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: smallTable(cost)}
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		dataDir = c.DataDir
	})
	const client = "127.0.0.2"
	r.client.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(client)}}).DialContext}
	refused := 0
	for range 6 {
		if status, _, _ := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun)); status == http.StatusTooManyRequests {
			refused++
		}
	}
	r.send("POST", "/api/v1/tools/hash/run", cred{bearer: "th_nope"}, []byte(hashRun))
	if refused != 4 {
		t.Fatalf("%d refusals, want 4", refused)
	}
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil || events(rows) != 5 {
		t.Fatalf("abuse rows %+v, %v", rows, err)
	}
	files, _ := filepath.Glob(filepath.Join(dataDir, server.DatabaseFile+"*"))
	if len(files) == 0 {
		t.Fatal("no database file")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(client)) {
			t.Errorf("%s holds the raw client address", filepath.Base(f))
		}
	}
	if bytes.Contains([]byte(logs.String()), []byte(client)) {
		t.Errorf("the log holds the raw client address:\n%s", logs.String())
	}
	for _, row := range rows {
		if bytes.Contains([]byte(row.Caller+row.Principal), []byte(client)) {
			t.Errorf("row %+v", row)
		}
	}
}

// events is how many events abuse rows stand for: a row counts the
// events of one caller, tool and reason in a minute.
func events(rows []abuse.Row) (n int64) {
	for _, r := range rows {
		n += r.Count
	}
	return n
}

// jobTable gives tools-job n runs of cost 1 to users, refilled at one a
// minute (the tests freeze the guard's clock), with at most concurrent of
// them in flight per caller (0 for no limit).
func jobTable(n, concurrent int) *guard.Table {
	t := guard.DefaultTable()
	c := t.Classes[guard.ClassJob]
	c.User = guard.Allowance{Burst: n, PerMinute: 1, ConcurrentPerCaller: concurrent}
	t.Classes[guard.ClassJob] = c
	return &t
}

// submitSleeper submits a sleeper job of ms as token and returns its id,
// or fails.
func (r *rig) submitSleeper(token string, ms int) string {
	r.t.Helper()
	status, _, body := r.do("POST", "/api/v1/jobs", token, []byte(`{"type":"test","input":{"tool":"sleep","ms":`+strconv.Itoa(ms)+`}}`))
	var d jobDoc
	if err := json.Unmarshal(body, &d); err != nil || status != http.StatusAccepted {
		r.t.Fatalf("submit: %d %s", status, body)
	}
	return d.ID
}

// metricsText scrapes /metrics.
func (r *rig) metricsText() string {
	r.t.Helper()
	status, _, body := r.do("GET", "/metrics", "", nil)
	if status != http.StatusOK {
		r.t.Fatalf("/metrics: %d %s", status, body)
	}
	return string(body)
}

// TestGuardJobRunsAndRetry: job runs are counted by tool and outcome with
// their durations; a retry is admitted like a submission and refused as
// elsewhere (429 problem with Retry-After and RateLimit, an abuse row, the
// refusal in the metrics).
func TestGuardJobRunsAndRetry(t *testing.T) {
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: jobTable(3, 0), Now: clock.Now}
	})
	id := r.submitSleeper(r.token, 10)
	if d := r.final(id); d.State != "succeeded" {
		t.Fatalf("the job: %+v", d)
	}
	m := r.metricsText()
	for _, want := range []string{
		`toolhost_runs_total{outcome="success",tool="sleeper"} 1`,
		`toolhost_item_duration_seconds_count{tool="sleeper"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A job cancelled while it runs, retried (the third run of the
	// allowance) and cancelled again.
	cancelRunning := func(id string) {
		t.Helper()
		eventually(t, "the job runs", func() bool { return r.job(id, r.token).State == "running" })
		if status, _, body := r.do("POST", "/api/v1/jobs/"+id+"/cancel", r.token, nil); status != http.StatusOK {
			t.Fatalf("cancel: %d %s", status, body)
		}
		if d := r.final(id); d.State != "cancelled" {
			t.Fatalf("the cancelled job: %+v", d)
		}
	}
	slow := r.submitSleeper(r.token, 3000)
	cancelRunning(slow)
	status, _, body := r.do("POST", "/api/v1/jobs/"+slow+"/retry", r.token, nil)
	if status != http.StatusOK {
		t.Fatalf("retry: %d %s", status, body)
	}
	cancelRunning(slow)
	// The fourth run is refused, with nothing retried.
	status, h, body := r.do("POST", "/api/v1/jobs/"+slow+"/retry", r.token, nil)
	problemCode(t, "retry over the allowance", status, h, body, http.StatusTooManyRequests, "tools.caller.quota_exceeded")
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 || h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" {
		t.Errorf("refused retry headers: %v", h)
	}
	if d := r.job(slow, r.token); d.State != "cancelled" {
		t.Errorf("the refused retry changed the job: %+v", d)
	}
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil || len(rows) != 1 || rows[0].Tool != "sleeper" || rows[0].Reason != string(guard.ReasonQuotaExceeded) {
		t.Errorf("abuse rows %+v, %v", rows, err)
	}
	m = r.metricsText()
	for _, want := range []string{
		`toolhost_runs_total{outcome="success",tool="sleeper"} 1`,
		`toolhost_runs_total{outcome="cancelled",tool="sleeper"} 2`,
		`toolhost_item_duration_seconds_count{tool="sleeper"} 3`,
		`toolhost_refusals_total{reason="quota_exceeded"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A job the caller does not own is a 404 and costs nothing.
	bob, err := r.srv.Accounts().CreateToken(context.Background(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	status, h, body = r.do("POST", "/api/v1/jobs/"+id+"/retry", bob, nil)
	problemCode(t, "retry of another's job", status, h, body, http.StatusNotFound, "tools.job.not_found")
}

// TestGuardJobHoldsSlot: a job holds its concurrency slot for its whole
// life, not only while the route waits for it; the slot comes back when
// the job reaches a final state.
func TestGuardJobHoldsSlot(t *testing.T) {
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: jobTable(10, 1), Now: clock.Now}
	})
	// The run route answers 202 after its wait; the job still runs and
	// still holds the caller's only slot.
	status, _, body := r.do("POST", "/api/v1/tools/sleeper/run", r.token, []byte(`{"input":{"ms":3000},"wait_ms":1}`))
	var run struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &run); status != http.StatusAccepted || err != nil || run.ID == "" {
		t.Fatalf("run: %d %s", status, body)
	}
	status, h, body := r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"test","input":{"tool":"sleep","ms":10}}`))
	problemCode(t, "a second job while the first runs", status, h, body, http.StatusTooManyRequests, "tools.caller.concurrency_exceeded")
	if h.Get("Retry-After") == "" || !strings.Contains(h.Get("RateLimit"), `"concurrency";r=0;t=1`) ||
		!strings.Contains(strings.Join(h.Values("RateLimit-Policy"), ", "), `"concurrency";q=1;qu="concurrent-requests"`) {
		t.Errorf("a concurrency refusal without its Retry-After, RateLimit and RateLimit-Policy items: %v", h)
	}
	// Another caller has a slot of its own.
	bob, err := r.srv.Accounts().CreateToken(context.Background(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	bobs := r.submitSleeper(bob, 10)

	// Once the first job is final, the slot is back.
	if status, _, body := r.do("POST", "/api/v1/jobs/"+run.ID+"/cancel", r.token, nil); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if d := r.final(run.ID); d.State != "cancelled" {
		t.Fatalf("the first job: %+v", d)
	}
	var next string
	eventually(t, "the slot comes back", func() bool {
		status, _, body := r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"test","input":{"tool":"sleep","ms":2000}}`))
		var d jobDoc
		if status == http.StatusAccepted && json.Unmarshal(body, &d) == nil {
			next = d.ID
			return true
		}
		return false
	})
	// A job still running at shutdown holds its slot until then; the
	// shutdown releases it (goleak in TestMain sees no follower left).
	if d := r.job(next, r.token); d.State == "succeeded" {
		t.Errorf("the next job ended too soon to be held at shutdown: %+v", d)
	}
	r.token = bob
	if d := r.final(bobs); d.State != "succeeded" {
		t.Errorf("bob's job: %+v", d)
	}
}

// TestGuardComputeBatch: the seed-000 compute route counts against the
// quotas: a batch is admitted once per quota class with the summed cost of
// its items (one concurrency slot per class, so a batch larger than the
// caller's concurrency runs), and a refusal refuses the whole batch before
// any item runs.
func TestGuardComputeBatch(t *testing.T) {
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	table := smallTable(cost)
	c := table.Classes[guard.ClassRun]
	c.User.ConcurrentPerCaller = 1
	table.Classes[guard.ClassRun] = c
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: table, Now: clock.Now}
	})
	batch := func(id string, n int) []byte {
		items := []any{}
		for i := range n {
			items = append(items, r.item(fmt.Sprintf("c-%d", i), "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"}))
		}
		// An unknown tool is answered per item and costs nothing.
		unknown := r.item("unknown", "hash", map[string]any{})
		unknown["tool_code"] = "nope"
		items = append(items, unknown)
		return encode(t, map[string]any{"request_id": id, "items": items})
	}
	type answer struct {
		Code      string `json:"code"`
		Retryable *bool  `json:"retryable"`
		Results   []struct {
			Status string `json:"status"`
		} `json:"results"`
	}
	// Three items of the user's four runs: one slot, admitted.
	status, h, body := r.do("POST", "/api/v1/tools/compute", r.token, batch("b-1", 3))
	var a answer
	if err := json.Unmarshal(body, &a); status != http.StatusOK || err != nil || len(a.Results) != 4 {
		t.Fatalf("first batch: %d %s", status, body)
	}
	if h.Get("RateLimit-Policy") == "" || h.Get("RateLimit") == "" {
		t.Errorf("no rate-limit fields on the admitted batch: %v", h)
	}
	// Two more do not fit: the whole batch is refused, nothing runs.
	status, h, body = r.do("POST", "/api/v1/tools/compute", r.token, batch("b-2", 2))
	a = answer{}
	if err := json.Unmarshal(body, &a); status != http.StatusTooManyRequests || err != nil || a.Code != "quota_exceeded" ||
		a.Retryable == nil || !*a.Retryable || a.Results != nil {
		t.Fatalf("second batch: %d %s", status, body)
	}
	if !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") || h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" {
		t.Errorf("refused batch headers: %v", h)
	}
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	// A batch that can never fit is not a 429 but a 403, as on the run
	// route: two runs for a sandbox token, whose burst is one.
	sandbox, err := r.srv.Accounts().CreateAppToken(context.Background(), "acme-sandbox", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	status, _, body = r.do("POST", "/api/v1/tools/compute", sandbox, batch("b-3", 2))
	a = answer{}
	if err := json.Unmarshal(body, &a); status != http.StatusForbidden || err != nil || a.Code != "cost_exceeds_allowance" {
		t.Errorf("batch over the burst: %d %s", status, body)
	}
	// The remaining run is still there, and the first batch's slot was
	// released when it ended.
	if status, _, body := r.do("POST", "/api/v1/tools/compute", r.token, batch("b-4", 1)); status != http.StatusOK {
		t.Fatalf("batch of the last run: %d %s", status, body)
	}
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil || len(rows) != 2 || rows[0].Tool != "hash" {
		t.Errorf("abuse rows %+v, %v", rows, err)
	}
	if m := r.metricsText(); !strings.Contains(m, `toolhost_refusals_total{reason="quota_exceeded"} 1`) {
		t.Errorf("/metrics lacks the batch refusal")
	}
}

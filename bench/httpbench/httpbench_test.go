package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// counter is a loopback server that answers 200 to every third request and
// 429 to the others, and keeps what it was sent.
type counter struct {
	mu      sync.Mutex
	n       int
	bodies  map[string]int
	tokens  map[string]int
	answers map[int]int
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.bodies[string(b)]++
	c.tokens[r.Header.Get("Authorization")]++
	status := http.StatusTooManyRequests
	if c.n%3 == 0 {
		status = http.StatusOK
	}
	c.answers[status]++
	w.WriteHeader(status)
	io.WriteString(w, `{"success_count":4,"failed_count":0}`)
}

func newCounter(t *testing.T) (*counter, string) {
	c := &counter{bodies: map[string]int{}, tokens: map[string]int{}, answers: map[int]int{}}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func needWrk(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed (bench-http's load generator; CI does not install it)")
	}
	return p
}

// TestRunScript drives a real wrk with the run route's script against a
// loopback server and checks that every request carried the same body
// (the non-ASCII bytes included) and headers, and that the script's status
// counts are the server's own.
func TestRunScript(t *testing.T) {
	c := config{wrk: needWrk(t), threads: 2, connections: 4}
	srv, url := newCounter(t)
	body := runBody(`Héllo "Wörld" \ 😀`)
	script := runScript(body, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer tok"})
	m, err := runWrk(context.Background(), c, t.TempDir(), "run", script, url+runPath, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bodies) != 1 || srv.bodies[string(body)] == 0 {
		t.Errorf("bodies sent = %d distinct, want only %s", len(srv.bodies), body)
	}
	if len(srv.tokens) != 1 || srv.tokens["Bearer tok"] == 0 {
		t.Errorf("authorizations sent = %v, want only Bearer tok", srv.tokens)
	}
	ok, other := m.split()
	// wrk stops counting at its deadline, with requests still in flight
	// that the server answered: at most one per connection more.
	if ok > int64(srv.answers[200]) || other > int64(srv.answers[429]) ||
		ok+other < int64(srv.n-c.connections) || ok == 0 {
		t.Errorf("counted %d 2xx and %d other; the server answered %v", ok, other, srv.answers)
	}
	if m.Statuses["429"] != other || m.Items != 0 {
		t.Errorf("statuses = %v, items = %d", m.Statuses, m.Items)
	}
	if m.Latency.P50 <= 0 || m.Latency.P99 < m.Latency.P50 || m.DurationUS <= 0 {
		t.Errorf("latency = %+v, duration %d µs", m.Latency, m.DurationUS)
	}
}

// TestComputeScript checks the compute script against a real wrk: each
// thread spreads its requests over its share of the tokens, each request
// has its own request_id, and success_count is summed over the 200s.
func TestComputeScript(t *testing.T) {
	c := config{wrk: needWrk(t), threads: 2, connections: 4}
	srv, url := newCounter(t)
	tokens := []string{"t1", "t2", "t3", "t4"}
	script := computeScript("abc", pin{"1.0.0", "1.0.0", strings.Repeat("0", 64)}, tokens, c.threads)
	m, err := runWrk(context.Background(), c, t.TempDir(), "compute", script, url, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, tok := range tokens {
		if srv.tokens["Bearer "+tok] == 0 {
			t.Errorf("token %s never sent (sent: %v)", tok, srv.tokens)
		}
	}
	if len(srv.tokens) != len(tokens) {
		t.Errorf("tokens sent = %v", srv.tokens)
	}
	if len(srv.bodies) != srv.n {
		t.Errorf("%d distinct bodies in %d requests: request_id repeated", len(srv.bodies), srv.n)
	}
	for b := range srv.bodies {
		if !strings.Contains(b, `"tool_code":"hash"`) || strings.Count(b, `"correlation_id"`) != 4 {
			t.Fatalf("body = %s, want a batch of four hash items", b)
		}
		break
	}
	ok, _ := m.split()
	if m.Items != 4*ok || ok == 0 {
		t.Errorf("items = %d for %d 200 answers, want 4 each", m.Items, ok)
	}
}

// TestOpenLoop sends a fixed rate at a real loopback server: exactly the
// requests due are sent, each answered and recorded once, and latencies
// and lags are sorted and not negative.
func TestOpenLoop(t *testing.T) {
	srv, url := newCounter(t)
	o, err := openLoop(context.Background(), openLoopConfig{
		url: url, body: []byte(`{}`), rate: 200, duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if o.recorded != 200 || srv.n != 200 {
		t.Fatalf("recorded %d, the server got %d, want 200 (1 s at 200/s)", o.recorded, srv.n)
	}
	if o.ok != srv.answers[200] || o.non2xx != srv.answers[429] || o.failed != 0 || o.dropped != 0 {
		t.Errorf("ok %d non2xx %d failed %d dropped %d; the server answered %v", o.ok, o.non2xx, o.failed, o.dropped, srv.answers)
	}
	if len(o.lat) != o.ok || len(o.lag) != o.recorded {
		t.Errorf("%d latencies for %d 2xx, %d lags for %d recorded", len(o.lat), o.ok, len(o.lag), o.recorded)
	}
	for i := range o.lat {
		if o.lat[i] <= 0 || (i > 0 && o.lat[i] < o.lat[i-1]) {
			t.Fatalf("latencies not positive and sorted: %v", o.lat)
		}
	}
	if o.lag[0] < 0 {
		t.Errorf("a request was sent %s before it was due", -o.lag[0])
	}
}

// TestOpenLoopUnreadable: an answer the minimal client cannot read (a
// chunked body) counts as no answer, never as a 2xx.
func TestOpenLoopUnreadable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{}"))
		w.(http.Flusher).Flush() // no Content-Length: chunked
	}))
	t.Cleanup(srv.Close)
	o, err := openLoop(context.Background(), openLoopConfig{url: srv.URL, body: []byte(`{}`), rate: 100, duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.recorded != 20 || o.failed != 20 || o.ok != 0 {
		t.Errorf("recorded %d, failed %d, ok %d; want 20 failed", o.recorded, o.failed, o.ok)
	}
}

// TestOpenLoopWarmup checks that requests due in the warm-up are sent but
// not recorded.
func TestOpenLoopWarmup(t *testing.T) {
	srv, url := newCounter(t)
	o, err := openLoop(context.Background(), openLoopConfig{
		url: url, body: []byte(`{}`), rate: 100, duration: 500 * time.Millisecond, warmup: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if o.recorded != 50 || srv.n != 80 {
		t.Errorf("recorded %d of %d sent, want 50 of 80", o.recorded, srv.n)
	}
}

func TestPercentile(t *testing.T) {
	d := make([]time.Duration, 100)
	for i := range d {
		d[i] = time.Duration(i + 1)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {99.9, 100}, {100, 100}, {0.5, 1}} {
		if got := percentile(d, tt.p); got != tt.want {
			t.Errorf("percentile(%v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	if percentile(nil, 99) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		v    []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}} {
		if got := median(tt.v); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestParseWrk(t *testing.T) {
	out := "Running 1s test @ http://x\n" + resultPrefix +
		`{"duration_us":1000000,"requests":10,"bytes":100,"errors":{"connect":0,"read":1,"write":0,"status":3,"timeout":2},` +
		`"latency_us":{"min":1,"mean":2.5,"p50":2,"p90":3,"p99":4,"p999":5,"max":6},"statuses":{"200":7,"429":3},"items":0}` + "\n"
	r, err := parseWrk([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if ok, other := r.split(); ok != 7 || other != 3 || r.socketErrors() != 3 || r.Latency.P99 != 4 {
		t.Errorf("parsed %+v", r)
	}
	if _, err := parseWrk([]byte("Running 1s test\n")); err == nil {
		t.Error("output without a result line parsed")
	}
}

// TestStopAll starts a real child whose own child leaves the process group
// (setsid): stopAll stops the child, finds the escaped grandchild by the
// run's marker, kills it and says so.
func TestStopAll(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	ps := newProcesses(t.TempDir())
	p, err := ps.start("shell", exec.Command("sh", "-c", "setsid sleep 60 & exec sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	// Until the grandchild has its own session: before its setsid it is
	// still in the child's group, which stopAll's group signal reaches.
	escaped := func() bool {
		for _, pid := range ps.marked() {
			if pid != p.pid() && sessionOf(pid) == pid {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ps.marked()) < 2 || !escaped() {
		if time.Now().After(deadline) {
			t.Fatalf("marked processes = %v, want the shell's two, one in a session of its own", ps.marked())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := ps.stopAll(); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("stopAll = %v, want the escaped grandchild named", err)
	}
	if p.alive() {
		t.Error("the child is alive after stopAll")
	}
	for deadline := time.Now().Add(10 * time.Second); len(ps.marked()) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the run left after stopAll: %v", ps.marked())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := ps.stopAll(); err != nil {
		t.Errorf("a second stopAll = %v", err)
	}
}

// sessionOf returns the session id of pid from /proc, or -1.
func sessionOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp session …; comm may hold spaces.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(fields[3])
	if err != nil {
		return -1
	}
	return sid
}

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"toolhost/internal/guard"
	"toolhost/internal/server"
	"toolhost/internal/testmodule"
)

// BenchmarkOverload is `make bench-http` (issue 11, finding 9): a real
// server on loopback, first driven closed-loop to find the peak throughput
// of a route, then driven open-loop — requests sent at a fixed rate
// whatever the answers, so that queueing shows — at twice that peak for a
// fixed time, with a quota table that admits half the peak. It reports the
// p99 of refusals (429 from the guard, 503 from the executor or the store)
// and of admitted runs (200), measured from when each request was due,
// for the guard in enforce mode and in report mode (where nothing is
// refused by quota and every would-be refusal is an abuse-log event), on
// the run route (hash) and on the compute route (batches of four hash
// items).
//
// It runs only with TOOLHOST_BENCH_HTTP=1 (the make target sets it), so
// that `make bench` stays short. TOOLHOST_BENCH_SECONDS sets the length of
// each overload phase (default 15).
func BenchmarkOverload(b *testing.B) {
	if os.Getenv("TOOLHOST_BENCH_HTTP") != "1" {
		b.Skip("set TOOLHOST_BENCH_HTTP=1 (make bench-http) to run the overload benchmark")
	}
	seconds := 15
	if v, err := strconv.Atoi(os.Getenv("TOOLHOST_BENCH_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	for _, route := range []string{"run", "compute"} {
		for _, mode := range []guard.Mode{guard.Enforce, guard.Report} {
			b.Run(route+"/"+mode.String(), func(b *testing.B) {
				for b.Loop() {
					overload(b, route, mode, time.Duration(seconds)*time.Second)
				}
			})
		}
	}
}

// benchServer is a server on loopback over the bundled codec and text
// modules, with a quota table whose tools-run class gives every tier the
// allowance a.
type benchServer struct {
	srv    *server.Server
	url    string
	token  string
	client *http.Client
}

func startBench(b *testing.B, mode guard.Mode, a guard.Allowance) *benchServer {
	b.Helper()
	tools := b.TempDir()
	for _, pkg := range []string{"codec", "text"} {
		wasm, err := os.ReadFile(testmodule.GoPath(b, "plugins-src/"+pkg))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, pkg+".wasm"), wasm, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	table := guard.DefaultTable()
	table.Classes[guard.ClassRun] = guard.Class{Anonymous: a, Session: a, User: a, App: a, Sandbox: a}
	srv, err := server.New(context.Background(), server.Config{
		ToolsDir: tools, DataDir: b.TempDir(), CacheDir: testmodule.CacheDir(),
		Logger: slog.New(slog.DiscardHandler),
		Guard:  server.GuardConfig{Mode: mode, Quotas: &table},
	})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	s := &benchServer{srv: srv, url: "http://" + l.Addr().String(), client: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute},
	}}
	b.Cleanup(func() {
		s.client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			b.Errorf("shutdown: %v", err)
		}
		<-served
	})
	if s.token, err = srv.Accounts().CreateToken(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	return s
}

// request is one request of a route, made afresh for each send.
type request func() (*http.Request, error)

// routeRequest returns the route's request and its cost in quota units.
func (s *benchServer) routeRequest(b *testing.B, route string) (request, int) {
	b.Helper()
	var tool struct {
		Cost int `json:"cost"`
	}
	s.getJSON(b, "/api/v1/tools/hash", &tool)
	cost := max(tool.Cost, 1)
	if route == "run" {
		return func() (*http.Request, error) {
			r, err := http.NewRequest("POST", s.url+"/api/v1/tools/hash/run", bytes.NewReader([]byte(hashRun)))
			if err == nil {
				r.Header.Set("Content-Type", "application/json")
			}
			return r, err
		}, cost
	}
	var cat struct {
		Items []map[string]any `json:"items"`
	}
	s.getJSON(b, "/api/v1/tools/catalog", &cat)
	var items []map[string]any
	for _, d := range cat.Items {
		if d["tool_code"] != "hash" {
			continue
		}
		for i := range 4 {
			items = append(items, map[string]any{
				"tool_code": "hash", "contract_version": d["contract_version"],
				"implementation_version": d["implementation_version"], "schema_fingerprint": d["schema_fingerprint"],
				"correlation_id": fmt.Sprint("c-", i),
				"parameters":     map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"},
			})
		}
	}
	if len(items) != 4 {
		b.Fatal("hash is not in the catalogue")
	}
	body, err := json.Marshal(map[string]any{"request_id": "bench", "items": items})
	if err != nil {
		b.Fatal(err)
	}
	return func() (*http.Request, error) {
		r, err := http.NewRequest("POST", s.url+"/api/v1/tools/compute", bytes.NewReader(body))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+s.token)
		}
		return r, err
	}, 4 * cost
}

func (s *benchServer) getJSON(b *testing.B, path string, v any) {
	b.Helper()
	r, _ := http.NewRequest("GET", s.url+path, nil)
	r.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
}

// send sends one request and returns its status, 0 when it had no answer.
func (s *benchServer) send(req request) int {
	r, err := req()
	if err != nil {
		return 0
	}
	resp, err := s.client.Do(r)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// unlimited is an allowance nothing exhausts in a benchmark.
var unlimited = guard.Allowance{Burst: math.MaxInt32, PerMinute: math.MaxInt32}

// peak drives the route closed-loop with 8 senders for d and returns its
// throughput of 200 answers per second, and the cost of a request.
func peak(b *testing.B, route string, d time.Duration) (float64, int) {
	s := startBench(b, guard.Enforce, unlimited)
	req, cost := s.routeRequest(b, route)
	var ok atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	began := time.Now()
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(end) {
				if s.send(req) == http.StatusOK {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(began).Seconds(), cost
}

// overload finds the route's peak and drives it at twice the peak for d.
func overload(b *testing.B, route string, mode guard.Mode, d time.Duration) {
	rate, cost := peak(b, route, 3*time.Second)
	if rate < 1 {
		b.Fatalf("the %s route answered nothing at its peak", route)
	}
	// The quota admits half the peak, a second of it at once.
	half := max(int(rate/2), 1)
	s := startBench(b, mode, guard.Allowance{Burst: half * cost, PerMinute: half * cost * 60})
	req, _ := s.routeRequest(b, route)

	const maxInFlight = 4000
	var (
		mu                  sync.Mutex
		admitted, refused   []time.Duration
		unanswered, skipped int
		statuses            = map[int]int{}
		inFlight            atomic.Int64
		wg                  sync.WaitGroup
	)
	interval := time.Duration(float64(time.Second) / (2 * rate))
	start := time.Now()
	n := int(d / interval)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if inFlight.Load() >= maxInFlight {
			skipped++
			continue
		}
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			status := s.send(req)
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			statuses[status]++
			switch {
			case status == http.StatusOK:
				admitted = append(admitted, took)
			case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
				refused = append(refused, took)
			case status == 0:
				unanswered++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	dropped := s.srv.Abuse().Stats().Dropped
	b.ReportMetric(rate, "peak_req/s")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "offered_req/s")
	b.ReportMetric(p99ms(refused), "refusal_p99_ms")
	b.ReportMetric(p99ms(admitted), "admitted_p99_ms")
	b.ReportMetric(float64(len(refused)), "refused")
	b.ReportMetric(float64(statuses[http.StatusServiceUnavailable]), "refused_503")
	b.ReportMetric(float64(len(admitted)), "admitted")
	b.ReportMetric(float64(unanswered+skipped), "unanswered")
	b.ReportMetric(float64(dropped), "abuse_dropped")
	b.Logf("%s/%s: peak %.0f/s, offered %.0f/s for %v; statuses %v; unanswered %d, not sent (over %d in flight) %d; refusal p50 %.1f ms p99 %.1f ms; admitted p50 %.1f ms p99 %.1f ms; abuse %+v",
		route, mode, rate, float64(n)/elapsed.Seconds(), d, statuses, unanswered, maxInFlight, skipped,
		pms(refused, 0.5), p99ms(refused), pms(admitted, 0.5), p99ms(admitted), s.srv.Abuse().Stats())
}

func p99ms(ds []time.Duration) float64 { return pms(ds, 0.99) }

// pms is the q-quantile of ds in milliseconds; NaN for none.
func pms(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(int(float64(len(s))*q), len(s)-1)]) / float64(time.Millisecond)
}

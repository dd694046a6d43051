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
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// BenchmarkOverload is `make bench-overload` (issue 11, finding 9): a real
// server on loopback, first driven closed-loop to find the peak throughput
// of a route, then driven open-loop — requests sent at a fixed rate
// whatever the answers, so that queueing shows — for a fixed time, with a
// quota table that admits half the peak, at one of two loads:
//
//   - 2xpeak: twice the peak, so four times what the quota admits; the
//     machine is saturated by the offered load itself.
//   - 2xquota: twice what the quota admits, so about the peak: the
//     overload of the finding 9, where refusals must stay cheap
//     while the admitted half runs.
//
// It reports the p99 of refusals (429 from the guard, 503 from the
// executor or the store) and of admitted runs (200), measured from when
// each request was due, for the guard in enforce mode and in report mode
// (where nothing is refused by quota and every would-be refusal is an
// abuse-log event), on the run route (hash) and on the compute route
// (batches of four hash items).
//
// It runs only with TOOLHOST_BENCH_HTTP=1 (the make target sets it), so
// that `make bench` stays short. TOOLHOST_BENCH_SECONDS sets the length of
// each overload phase (default 15).
func BenchmarkOverload(b *testing.B) {
	if os.Getenv("TOOLHOST_BENCH_HTTP") != "1" {
		b.Skip("set TOOLHOST_BENCH_HTTP=1 (make bench-overload) to run the overload benchmark")
	}
	seconds := 15
	if v, err := strconv.Atoi(os.Getenv("TOOLHOST_BENCH_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	loads := []struct {
		name string
		// offered is the offered rate as a multiple of the peak; the
		// quota admits half the peak in every case.
		offered float64
	}{{"2xpeak", 2}, {"2xquota", 1}}
	for _, route := range []string{"run", "compute"} {
		for _, mode := range []guard.Mode{guard.Enforce, guard.Report} {
			for _, load := range loads {
				b.Run(route+"/"+mode.String()+"/"+load.name, func(b *testing.B) {
					for b.Loop() {
						overload(b, route, mode, load.offered, time.Duration(seconds)*time.Second)
					}
				})
			}
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
	// handled is the server's own time per answer (its access log).
	handled *handlerTimes
}

// handlerTimes is a slog handler that keeps the duration of each access
// log record ("request") by status: the time from the first middleware to
// the answer, without the connection's reading and writing or the client.
type handlerTimes struct {
	mu sync.Mutex
	by map[int][]time.Duration
}

func (h *handlerTimes) Enabled(_ context.Context, l slog.Level) bool { return l == slog.LevelInfo }
func (h *handlerTimes) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *handlerTimes) WithGroup(string) slog.Handler                { return h }

func (h *handlerTimes) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	var status int
	var ms float64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "status":
			status = int(a.Value.Int64())
		case "duration_ms":
			ms = a.Value.Float64()
		}
		return true
	})
	h.mu.Lock()
	h.by[status] = append(h.by[status], time.Duration(ms*float64(time.Millisecond)))
	h.mu.Unlock()
	return nil
}

// reset forgets what was kept so far.
func (h *handlerTimes) reset() {
	h.mu.Lock()
	h.by = map[int][]time.Duration{}
	h.mu.Unlock()
}

// p99s is the p99 of each status's durations, in milliseconds.
func (h *handlerTimes) p99s() map[int]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int]string{}
	for status, ds := range h.by {
		out[status] = fmt.Sprintf("p99 %.1f ms", p99ms(ds))
	}
	return out
}

func startBench(b *testing.B, mode guard.Mode, a guard.Allowance) *benchServer {
	b.Helper()
	tools := b.TempDir()
	for _, pkg := range []string{"codec", "text"} {
		wasm, err := os.ReadFile(testkit.GoPath(b, "plugins-src/"+pkg))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, pkg+".wasm"), wasm, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	handled := &handlerTimes{by: map[int][]time.Duration{}}
	table := guard.DefaultTable()
	table.Classes[guard.ClassRun] = guard.Class{Anonymous: a, Session: a, User: a, App: a, Sandbox: a}
	srv, err := server.New(context.Background(), server.Config{
		ToolsDir: tools, DataDir: b.TempDir(), CacheDir: testkit.CacheDir(),
		Logger: slog.New(handled),
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
	s := &benchServer{srv: srv, url: "http://" + l.Addr().String(), handled: handled, client: &http.Client{
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
	// Modules are published as they become ready, not before New
	// returns: wait for hash.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, _ := http.NewRequest("GET", s.url+"/api/v1/tools/hash", nil)
		if s.send(func() (*http.Request, error) { return r, nil }) == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("hash was not published within 60 s")
		}
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
	status, _ := s.sendCode(req)
	return status
}

// sendCode is send that also returns the problem code of a refusal.
func (s *benchServer) sendCode(req request) (int, string) {
	r, err := req()
	if err != nil {
		return 0, ""
	}
	resp, err := s.client.Do(r)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, ""
	}
	var p struct {
		Code string `json:"code"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&p)
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, p.Code
}

// unlimited is an allowance nothing exhausts in a benchmark.
var unlimited = guard.Allowance{Burst: math.MaxInt32, PerMinute: math.MaxInt32}

// peak drives the route closed-loop with 8 senders for d and returns its
// throughput of 200 answers per second, and the cost of a request. The
// senders are one caller (anonymous on the run route, one token on the
// compute route). On the run route the guard alone bounds the caller
// (unlimited here), so the senders share the executor's lanes; on compute
// the seed-000 contract runs one batch of a principal at a time
// (MaxConcurrentBatchesPerPrincipal) and the other senders' requests are
// refused at once (429 queue_full), so the peak there is one caller's
// serial rate. Refusals and the CPU taken are logged beside it.
func peak(b *testing.B, route string, d time.Duration) (float64, int) {
	s := startBench(b, guard.Enforce, unlimited)
	req, cost := s.routeRequest(b, route)
	var ok, other atomic.Int64
	var wg sync.WaitGroup
	cpuBefore := cpuTime()
	end := time.Now().Add(d)
	began := time.Now()
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(end) {
				if s.send(req) == http.StatusOK {
					ok.Add(1)
				} else {
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpu := (cpuTime() - cpuBefore).Seconds() / (elapsed.Seconds() * float64(runtime.NumCPU()))
	b.Logf("%s peak: %.0f/s answered 200, %.0f/s refused, CPU %.0f %% of %d cores", route,
		float64(ok.Load())/elapsed.Seconds(), float64(other.Load())/elapsed.Seconds(), 100*cpu, runtime.NumCPU())
	return float64(ok.Load()) / elapsed.Seconds(), cost
}

// overload finds the route's peak and drives it at offered times the peak
// for d, with a quota that admits half the peak.
func overload(b *testing.B, route string, mode guard.Mode, offered float64, d time.Duration) {
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
		quota, busy         []time.Duration // the refusals: 429, 503
		unanswered, skipped int
		statuses            = map[int]int{}
		codes               = map[string][]time.Duration{} // the refusals by problem code
		inFlight            atomic.Int64
		wg                  sync.WaitGroup
	)
	interval := time.Duration(float64(time.Second) / (offered * rate))
	s.handled.reset()
	cpuBefore, machineBefore, schedBefore := cpuTime(), machineCPU(), readSched()
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
			status, code := s.sendCode(req)
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			statuses[status]++
			if code != "" {
				codes[code] = append(codes[code], took)
			}
			switch status {
			case http.StatusOK:
				admitted = append(admitted, took)
			case http.StatusTooManyRequests:
				refused, quota = append(refused, took), append(quota, took)
			case http.StatusServiceUnavailable:
				refused, busy = append(refused, took), append(busy, took)
			case 0:
				unanswered++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	byCode := map[string]string{}
	for code, ds := range codes {
		byCode[code] = fmt.Sprintf("%d, p99 %.1f ms", len(ds), p99ms(ds))
	}
	// The share of the machine's cores the process (server and generator
	// together) used during the phase.
	cpu := (cpuTime() - cpuBefore).Seconds() / (elapsed.Seconds() * float64(runtime.NumCPU()))
	// And the share all processes used: well above cpu, other work was
	// competing for the cores and the figures are not this server's.
	machine := machineCPU().since(machineBefore)
	// How long goroutines waited runnable for a core, and the GC's
	// stop-the-world pauses, during the phase (runtime/metrics).
	sched := readSched().since(schedBefore)
	dropped := s.srv.Abuse().Stats().Dropped
	b.ReportMetric(rate, "peak_req/s")
	b.ReportMetric(float64(half), "quota_req/s")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "offered_req/s")
	b.ReportMetric(p99ms(refused), "refusal_p99_ms")
	b.ReportMetric(p99ms(quota), "refusal429_p99_ms")
	b.ReportMetric(p99ms(busy), "refusal503_p99_ms")
	b.ReportMetric(p99ms(admitted), "admitted_p99_ms")
	b.ReportMetric(float64(len(refused)), "refused")
	b.ReportMetric(float64(statuses[http.StatusServiceUnavailable]), "refused_503")
	b.ReportMetric(float64(len(admitted)), "admitted")
	b.ReportMetric(float64(unanswered+skipped), "unanswered")
	b.ReportMetric(float64(dropped), "abuse_dropped")
	b.ReportMetric(100*cpu, "cpu_%")
	b.ReportMetric(100*machine, "machine_cpu_%")
	b.ReportMetric(sched.runnableP99*1000, "sched_wait_p99_ms")
	b.Logf("%s/%s: peak %.0f/s, quota %d/s, offered %.0f/s for %v, CPU %.0f %% of %d cores (all processes %.0f %%); goroutines runnable p50 %.2f ms p99 %.2f ms, GC pauses %d, p99 %.2f ms, longest %.2f ms; in the server's handlers %v; statuses %v, codes %v; unanswered %d, not sent (over %d in flight) %d; refusal p50 %.1f ms p99 %.1f ms (429 p99 %.1f ms, 503 p99 %.1f ms); admitted p50 %.1f ms p99 %.1f ms; abuse %+v",
		route, mode, rate, half, float64(n)/elapsed.Seconds(), d, 100*cpu, runtime.NumCPU(), 100*machine, sched.runnableP50*1000, sched.runnableP99*1000, sched.pauses, sched.pauseP99*1000, sched.pauseMax*1000, s.handled.p99s(), statuses, byCode, unanswered, maxInFlight, skipped,
		pms(refused, 0.5), p99ms(refused), p99ms(quota), p99ms(busy), pms(admitted, 0.5), p99ms(admitted), s.srv.Abuse().Stats())
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTicks are the busy and total ticks of all cores, from /proc/stat.
type cpuTicks struct{ busy, total uint64 }

// machineCPU reads the machine's CPU ticks; zero where /proc/stat is
// missing.
func machineCPU() cpuTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuTicks{}
	}
	var t cpuTicks
	for i, f := range fields[1:] {
		n, _ := strconv.ParseUint(f, 10, 64)
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.busy += n
		}
	}
	return t
}

// since is the busy share of the ticks between before and t; NaN when
// unknown.
func (t cpuTicks) since(before cpuTicks) float64 {
	if t.total <= before.total {
		return math.NaN()
	}
	return float64(t.busy-before.busy) / float64(t.total-before.total)
}

// schedSample is the runtime's histograms of scheduling latency (time a
// goroutine spent runnable before it ran) and of GC stop-the-world pauses.
type schedSample struct{ runnable, pauses *metrics.Float64Histogram }

func readSched() schedSample {
	ms := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(ms)
	var s schedSample
	if ms[0].Value.Kind() == metrics.KindFloat64Histogram {
		s.runnable = ms[0].Value.Float64Histogram()
	}
	if ms[1].Value.Kind() == metrics.KindFloat64Histogram {
		s.pauses = ms[1].Value.Float64Histogram()
	}
	return s
}

// schedStats are quantiles, in seconds, of what happened between two
// samples.
type schedStats struct {
	runnableP50, runnableP99 float64
	pauses                   uint64
	pauseP99, pauseMax       float64
}

func (s schedSample) since(before schedSample) schedStats {
	var st schedStats
	st.runnableP50, _ = histQuantile(s.runnable, before.runnable, 0.5)
	st.runnableP99, _ = histQuantile(s.runnable, before.runnable, 0.99)
	st.pauseP99, st.pauses = histQuantile(s.pauses, before.pauses, 0.99)
	st.pauseMax, _ = histQuantile(s.pauses, before.pauses, 1)
	return st
}

// histQuantile is the q-quantile (the upper bound of its bucket) of the
// events of h not in before, and their number; NaN when there are none.
func histQuantile(h, before *metrics.Float64Histogram, q float64) (float64, uint64) {
	if h == nil || before == nil || len(h.Counts) != len(before.Counts) {
		return math.NaN(), 0
	}
	var n uint64
	for i := range h.Counts {
		n += h.Counts[i] - before.Counts[i]
	}
	if n == 0 {
		return math.NaN(), 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i := range h.Counts {
		seen += h.Counts[i] - before.Counts[i]
		if seen >= want && h.Counts[i] > before.Counts[i] {
			upper := h.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = h.Buckets[i]
			}
			return upper, n
		}
	}
	return math.NaN(), n
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

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// BenchmarkRunPath measures the HTTP request path of a sync run (issue 13,
// "Nothing per request that does not need to be per request"): a real
// server on loopback over the bundled modules, a real SQLite file, the
// access log formatted as `serve` formats it (JSON, here into io.Discard),
// driven closed-loop from several goroutines, each over its own keep-alive
// connection, by a minimal HTTP/1.1 client that allocates nothing per
// request, so that allocs/op are the server's:
//
//   - run: POST /api/v1/tools/hash/run with an app token (ADR-027), the
//     43-byte sha256 input of the wrk run;
//   - compute: POST /api/v1/tools/compute, a batch of 4 hash items, one app
//     token per connection (the seed-000 contract runs one batch of a
//     principal at a time).
//
// An op is one request (answers/s, allocs/op, and cpu_µs/op, the
// process's CPU time per answer); compute also reports items/s. The quotas are unlimited and the executor's queue holds every
// connection's item, so every answer is a 200 (the benchmark fails
// otherwise): what is measured is the path of a run that happens, not a
// refusal. TOOLHOST_BENCH_CONNS sets the connections (default 32, as
// `wrk -c32`). Profile with
//
//	go test -run '^$' -bench RunPath -benchtime 20000x -cpuprofile cpu.out -memprofile mem.out ./internal/server
func BenchmarkRunPath(b *testing.B) {
	conns := 32
	if v, err := strconv.Atoi(os.Getenv("TOOLHOST_BENCH_CONNS")); err == nil && v > 0 {
		conns = v
	}
	s := startRunPath(b, conns)
	for _, tool := range []struct{ code, params string }{
		{"hash", runPathHash},
		{"vowels", runPathVowels},
	} {
		b.Run("run/"+tool.code, func(b *testing.B) {
			s.drive(b, s.runRequests(b, conns, tool.code, `{"input":`+tool.params+`}`), 1)
		})
		b.Run("compute/"+tool.code, func(b *testing.B) {
			s.drive(b, s.computeRequests(b, conns, tool.code, tool.params), 4)
		})
	}
}

// The parameters of the benchmark's runs: hashRun's, and a text of the
// same length for vowels, the small Extism plugin of testdata/extism,
// whose item costs a fraction of a Go guest's: its answers/s are closer to
// what the request path alone allows.
const (
	runPathHash   = `{"operation":"digest","text":"abc","algorithm":"sha256"}`
	runPathVowels = `{"operation":"count","text":"abcdefghijklmnopqrstuvwxyz0123456789"}`
)

// runPathServer is the server of BenchmarkRunPath.
type runPathServer struct {
	srv  *server.Server
	addr string
}

func startRunPath(b *testing.B, conns int) *runPathServer {
	b.Helper()
	tools := b.TempDir()
	files := map[string]string{
		"codec.wasm":       testkit.GoPath(b, "plugins-src/codec"),
		"text.wasm":        testkit.GoPath(b, "plugins-src/text"),
		"vowels.wasm":      testkit.ExtismPath(b, "vowels"),
		"vowels.tool.json": filepath.Join(testkit.Root(), "testdata/extism/vowels/vowels.tool.json"),
	}
	for name, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	p := policy.DefaultPlatform()
	// Every connection's item waits in the queue rather than being
	// refused; the lanes stay the default.
	p.MaxPendingItemsPerProcess = max(p.MaxPendingItemsPerProcess, 4*conns)
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	table := guard.DefaultTable()
	open := guard.Allowance{Burst: math.MaxInt32, PerMinute: math.MaxInt32}
	for name := range table.Classes {
		table.Classes[name] = guard.Class{Anonymous: open, Session: open, User: open, App: open, Sandbox: open}
	}
	srv, err := server.New(context.Background(), server.Config{
		ToolsDir: tools, DataDir: b.TempDir(), CacheDir: testkit.CacheDir(),
		Platform: p,
		Logger:   slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Guard:    server.GuardConfig{Mode: guard.Report, Quotas: &table},
		Loading:  server.LoadingConfig{Wait: 5 * time.Minute},
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
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			b.Errorf("shutdown: %v", err)
		}
		<-served
	})
	s := &runPathServer{srv: srv, addr: l.Addr().String()}
	// Modules are published as they become ready: wait for both tools.
	for _, code := range []string{"hash", "vowels"} {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get("http://" + s.addr + "/api/v1/tools/" + code)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s was not published within 60 s", code)
			}
		}
	}
	return s
}

// runRequests returns one run request of body per connection, each with
// the same app token.
func (s *runPathServer) runRequests(b *testing.B, conns int, code, body string) [][]byte {
	token, err := s.srv.Accounts().CreateAppToken(context.Background(), "bench-run-"+code, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	req := rawRequest("/api/v1/tools/"+code+"/run", token, []byte(body))
	reqs := make([][]byte, conns)
	for i := range reqs {
		reqs[i] = req
	}
	return reqs
}

// computeRequests returns one compute request per connection, a batch of
// 4 items of code with params, each with its own app token, pinned to the
// live definition.
func (s *runPathServer) computeRequests(b *testing.B, conns int, code, params string) [][]byte {
	token, err := s.srv.Accounts().CreateAppToken(context.Background(), "bench-catalog-"+code, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	var cat struct {
		Items []map[string]any `json:"items"`
	}
	s.getJSON(b, "/api/v1/tools/catalog", token, &cat)
	var items []map[string]any
	for _, d := range cat.Items {
		if d["tool_code"] != code {
			continue
		}
		for i := range 4 {
			items = append(items, map[string]any{
				"tool_code": code, "contract_version": d["contract_version"],
				"implementation_version": d["implementation_version"], "schema_fingerprint": d["schema_fingerprint"],
				"correlation_id": fmt.Sprint("c-", i),
				"parameters":     json.RawMessage(params),
			})
		}
	}
	if len(items) != 4 {
		b.Fatalf("%s is not in the catalogue", code)
	}
	body, err := json.Marshal(map[string]any{"request_id": "bench", "items": items})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([][]byte, conns)
	for i := range reqs {
		token, err := s.srv.Accounts().CreateAppToken(context.Background(), fmt.Sprint("bench-compute-", code, "-", i), nil, false)
		if err != nil {
			b.Fatal(err)
		}
		reqs[i] = rawRequest("/api/v1/tools/compute", token, body)
	}
	return reqs
}

func (s *runPathServer) getJSON(b *testing.B, path, token string, v any) {
	b.Helper()
	r, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
}

// drive sends b.N requests closed-loop, spread over one keep-alive
// connection per request of reqs, and reports answers/s (and items/s,
// items per answer). Every answer must be a 200.
func (s *runPathServer) drive(b *testing.B, reqs [][]byte, items int) {
	b.Helper()
	cs := make([]*rawConn, len(reqs))
	for i := range cs {
		c, err := dialRaw(s.addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		// One request on each connection first, so that dialling and
		// the server's first reads are not measured.
		if status, err := c.do(reqs[i]); err != nil || status != http.StatusOK {
			b.Fatalf("warm-up request: %d %v\n%s", status, err, c.last())
		}
		cs[i] = c
	}
	var (
		next   atomic.Int64
		failed atomic.Int64
		first  atomic.Value
		wg     sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	began, cpuBefore := time.Now(), cpuTime()
	for i, c := range cs {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				status, err := c.do(reqs[i])
				if err != nil || status != http.StatusOK {
					if failed.Add(1) == 1 {
						first.Store(fmt.Sprintf("%d %v: %s", status, err, c.last()))
					}
					if err != nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(began), cpuTime()-cpuBefore
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d answers were not 200; the first: %v", n, b.N, first.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "answers/s")
	// The process's CPU time per answer (server and the client's
	// syscalls): steadier than answers/s on a machine shared with other
	// work, which takes cores but not this process's CPU time.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_µs/op")
	if items > 1 {
		b.ReportMetric(float64(b.N*items)/elapsed.Seconds(), "items/s")
	}
}

// rawRequest is a POST of body to path with a bearer token, as bytes on
// the wire.
func rawRequest(path, token string, body []byte) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "POST %s HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, token, len(body))
	buf.Write(body)
	return buf.Bytes()
}

// rawConn is one keep-alive HTTP/1.1 connection that sends prepared
// requests and reads answers with a Content-Length, allocating nothing
// per request. It is not safe for concurrent use.
type rawConn struct {
	c    net.Conn
	r    *bufio.Reader
	body []byte // the last answer's body
}

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 16<<10), body: make([]byte, 0, 16<<10)}, nil
}

func (c *rawConn) Close() error { return c.c.Close() }

// last is the body of the last answer, for a failure's message.
func (c *rawConn) last() string { return string(c.body) }

var errBadAnswer = errors.New("not an HTTP/1.1 answer with a Content-Length")

// do sends req and reads its answer, returning the status.
func (c *rawConn) do(req []byte) (int, error) {
	if _, err := c.c.Write(req); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, errBadAnswer
	}
	status := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	length := -1
	for {
		line, err = c.r.ReadSlice('\n')
		if err != nil {
			return status, err
		}
		if len(line) <= 2 {
			break
		}
		const cl = "content-length:"
		if len(line) > len(cl) && asciiEqualFold(line[:len(cl)], cl) {
			n := 0
			for _, ch := range bytes.TrimSpace(line[len(cl):]) {
				n = n*10 + int(ch-'0')
			}
			length = n
		}
	}
	if length < 0 {
		return status, errBadAnswer
	}
	c.body = c.body[:0]
	for length > 0 {
		chunk, err := c.r.Peek(min(length, c.r.Size()))
		if err != nil {
			return status, err
		}
		if len(c.body)+len(chunk) <= cap(c.body) {
			c.body = append(c.body, chunk...)
		}
		c.r.Discard(len(chunk))
		length -= len(chunk)
	}
	return status, nil
}

func asciiEqualFold(b []byte, lower string) bool {
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != lower[i] {
			return false
		}
	}
	return true
}

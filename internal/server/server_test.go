package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
	"github.com/toolhost/toolhost/internal/wire"
)

// workerEnv makes the test binary a native worker: the servers of these
// tests start it as their supervisor's worker executable.
const workerEnv = "TOOLHOST_SERVER_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(supervisor.WorkerMain(testNatives()))
	}
	goleak.VerifyTestMain(m,
		// The HTTP client's idle connections are closed per test; its
		// transport may still be winding one down.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// rig is a real server on loopback with its tools folder and an account.
type rig struct {
	t      *testing.T
	srv    *server.Server
	url    string
	tools  string
	token  string
	client *http.Client
}

// module returns the built module of a Go package (a bundled tool or a test
// guest), by repository path.
func module(t *testing.T, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(testkit.GoPath(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drop writes a module into the tools folder the way writers should: a
// temporary name, then an atomic rename.
func (r *rig) drop(name string, wasm []byte) {
	r.t.Helper()
	tmp := filepath.Join(r.tools, "."+name+".tmp")
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.tools, name)); err != nil {
		r.t.Fatal(err)
	}
}

// start runs a server over a tools folder holding modules (file name →
// bytes) and creates the account "alice".
func start(t *testing.T, modules map[string][]byte) *rig {
	t.Helper()
	return startWith(t, modules, false)
}

// startWith is start, with the native packages when natives is set.
func startWith(t *testing.T, modules map[string][]byte, natives bool) *rig {
	t.Helper()
	return startConfigured(t, modules, natives, nil)
}

// startConfigured is startWith, with configure (when not nil) changing the
// server's configuration before it starts.
func startConfigured(t *testing.T, modules map[string][]byte, natives bool, configure func(*server.Config)) *rig {
	t.Helper()
	r := &rig{t: t, tools: t.TempDir(), client: &http.Client{Timeout: 70 * time.Second}}
	for name, wasm := range modules {
		r.drop(name, wasm)
	}
	ctx := context.Background()
	cfg := server.Config{
		ToolsDir: r.tools, DataDir: t.TempDir(), CacheDir: testkit.CacheDir(),
		Rescan: 200 * time.Millisecond, Settle: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Generation 1 holds the modules the tests start with, however
		// long they take to compile (the race detector, a cold cache);
		// the server's own default returns after a second.
		Loading: server.LoadingConfig{Wait: 5 * time.Minute},
	}
	if natives {
		cfg.Natives = engines.Packages()
		cfg.Supervisor = supervisor.Config{Executable: os.Args[0], Env: []string{workerEnv + "=1"}}
	}
	if configure != nil {
		configure(&cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		r.client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != http.ErrServerClosed {
			t.Errorf("serve: %v", err)
		}
	})
	r.srv, r.url = srv, "http://"+l.Addr().String()
	if r.token, err = srv.Accounts().CreateToken(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	return r
}

// do sends a request with token (none when empty) and returns the status,
// the headers and the body.
func (r *rig) do(method, path, token string, body []byte) (int, http.Header, []byte) {
	r.t.Helper()
	return r.doCtx(context.Background(), method, path, token, body)
}

func (r *rig) doCtx(ctx context.Context, method, path, token string, body []byte) (int, http.Header, []byte) {
	r.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, nil
		}
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// getJSON GETs path with the rig's token and decodes a 200 answer.
func (r *rig) getJSON(path string, v any) {
	r.t.Helper()
	status, _, body := r.do("GET", path, r.token, nil)
	if status != http.StatusOK {
		r.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		r.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

type descriptor struct {
	ToolCode              string         `json:"tool_code"`
	ContractVersion       string         `json:"contract_version"`
	ImplementationVersion string         `json:"implementation_version"`
	SchemaFingerprint     string         `json:"schema_fingerprint"`
	Operations            []operation    `json:"operations"`
	InputSchema           map[string]any `json:"input_schema"`
	OutputSchema          map[string]any `json:"output_schema"`
	UI                    map[string]any `json:"ui"`
	Documentation         map[string]any `json:"documentation"`
}

type operation struct {
	Name              string `json:"operation"`
	MaxParameterBytes int64  `json:"max_parameter_bytes"`
	HardTimeoutMS     int64  `json:"hard_timeout_ms"`
}

type catalogDoc struct {
	Version     string            `json:"version"`
	Policy      map[string]any    `json:"policy"`
	Items       []descriptor      `json:"items"`
	Unavailable []json.RawMessage `json:"unavailable"`
}

func (r *rig) catalog() catalogDoc {
	r.t.Helper()
	var c catalogDoc
	r.getJSON("/api/v1/tools/catalog", &c)
	return c
}

// pin returns the compute item identity of code from the catalogue.
func (r *rig) pin(code string) map[string]any {
	r.t.Helper()
	for _, d := range r.catalog().Items {
		if d.ToolCode == code {
			return map[string]any{
				"tool_code": d.ToolCode, "contract_version": d.ContractVersion,
				"implementation_version": d.ImplementationVersion, "schema_fingerprint": d.SchemaFingerprint,
			}
		}
	}
	r.t.Fatalf("%s is not in the catalogue", code)
	return nil
}

// item is a compute item: code's pins, a correlation id and parameters.
func (r *rig) item(correlation, code string, params any) map[string]any {
	it := r.pin(code)
	it["correlation_id"] = correlation
	it["parameters"] = params
	return it
}

type itemResult struct {
	CorrelationID     string          `json:"correlation_id"`
	ToolCode          string          `json:"tool_code"`
	SchemaFingerprint string          `json:"schema_fingerprint"`
	Status            string          `json:"status"`
	ExecutionID       string          `json:"execution_id"`
	Result            json.RawMessage `json:"result"`
	Error             *struct {
		Code      string `json:"code"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
	Metrics   map[string]*float64 `json:"metrics"`
	Resources struct {
		Memory *struct {
			Mode string `json:"mode"`
		} `json:"memory"`
		FuelUsed *int64 `json:"fuel_used"`
	} `json:"resources"`
}

type batchResult struct {
	RequestID          string       `json:"request_id"`
	Results            []itemResult `json:"results"`
	SuccessCount       int          `json:"success_count"`
	FailedCount        int          `json:"failed_count"`
	ServerProcessingMS *float64     `json:"server_processing_ms"`
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compute posts a batch and decodes a 200 answer.
func (r *rig) compute(items ...map[string]any) batchResult {
	r.t.Helper()
	status, _, body := r.do("POST", "/api/v1/tools/compute", r.token,
		encode(r.t, map[string]any{"request_id": "req-1", "items": items}))
	if status != http.StatusOK {
		r.t.Fatalf("compute: %d %s", status, body)
	}
	var res batchResult
	if err := json.Unmarshal(body, &res); err != nil {
		r.t.Fatalf("compute: %v in %s", err, body)
	}
	return res
}

// eventually polls cond until it holds, failing after a generous bound:
// what the test waits for is an event, not a duration.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func bundled(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"codec.wasm": module(t, "plugins-src/codec"),
		"text.wasm":  module(t, "plugins-src/text"),
	}
}

func TestCatalog(t *testing.T) {
	r := start(t, bundled(t))
	c := r.catalog()
	if c.Version != "2" || c.Policy["max_batch_items"] != float64(4) {
		t.Errorf("version %q policy %v", c.Version, c.Policy)
	}
	var codes []string
	for _, d := range c.Items {
		codes = append(codes, d.ToolCode)
		if len(d.SchemaFingerprint) != 64 || d.ContractVersion == "" || d.ImplementationVersion == "" {
			t.Errorf("%s: identity %+v", d.ToolCode, d)
		}
		if d.InputSchema["$schema"] == nil || d.OutputSchema["$schema"] == nil || d.InputSchema["additionalProperties"] == nil && d.InputSchema["$defs"] == nil && d.InputSchema["oneOf"] == nil {
			t.Errorf("%s: schemas %v %v", d.ToolCode, d.InputSchema, d.OutputSchema)
		}
		if d.UI["component_key"] == nil || d.Documentation["path"] == nil || len(d.Operations) == 0 {
			t.Errorf("%s: descriptor incomplete: %+v", d.ToolCode, d)
		}
		for _, op := range d.Operations {
			if op.MaxParameterBytes <= 0 || op.MaxParameterBytes > 128<<10 || op.HardTimeoutMS <= 0 {
				t.Errorf("%s/%s: effective limits %+v", d.ToolCode, op.Name, op)
			}
		}
	}
	if want := []string{"base64", "case", "hash", "slug", "url"}; !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	// The page-only tool is known, and listed as such: no API computes it.
	if len(c.Unavailable) != 1 || string(c.Unavailable[0]) != `{"tool_code":"yt","reason":"page_only"}` {
		t.Errorf("unavailable %s", c.Unavailable)
	}
}

func TestAuthentication(t *testing.T) {
	r := start(t, nil)
	routes := []struct{ method, path string }{
		{"GET", "/api/v1/tools/catalog"}, {"POST", "/api/v1/tools/compute"}, {"GET", "/api/v1/tools/diagnostics"},
	}
	check := func(token, why string) {
		t.Helper()
		for _, rt := range routes {
			status, h, body := r.do(rt.method, rt.path, token, nil)
			if status != http.StatusUnauthorized || !strings.Contains(h.Get("Content-Type"), "application/problem+json") || h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s %s: %d %v %s", why, rt.method, rt.path, status, h, body)
			}
		}
	}
	check("", "no token")
	check("th_not-a-real-token", "unknown token")
	if status, _, _ := r.do("GET", "/api/v1/tools/catalog", r.token, nil); status != http.StatusOK {
		t.Fatalf("a valid token: %d", status)
	}
	if err := r.srv.Accounts().DisableUser(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	check(r.token, "disabled account")
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, _, body := r.do("GET", path, "", nil); status != http.StatusOK {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}

func TestHeterogeneousBatch(t *testing.T) {
	r := start(t, bundled(t))
	res := r.compute(
		r.item("c-1", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"}),
		r.item("c-2", "case", map[string]any{"operation": "convert", "text": "hello world", "to": "constant"}),
		r.item("c-3", "base64", map[string]any{"operation": "encode", "text": "abc"}),
		r.item("c-4", "slug", map[string]any{"operation": "slugify", "text": "Héllo Wörld!"}),
	)
	want := []struct{ code, result string }{
		{"hash", `{"digest":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`},
		{"case", `{"text":"HELLO_WORLD"}`},
		{"base64", `{"text":"YWJj"}`},
		{"slug", `{"text":"hello-world"}`},
	}
	if res.RequestID != "req-1" || res.SuccessCount != 4 || res.FailedCount != 0 || len(res.Results) != 4 || res.ServerProcessingMS == nil {
		t.Fatalf("batch %+v", res)
	}
	ids := map[string]bool{}
	for i, got := range res.Results {
		if got.CorrelationID != fmt.Sprintf("c-%d", i+1) || got.ToolCode != want[i].code || got.Status != "success" {
			t.Errorf("result %d: %+v", i, got)
		}
		if string(got.Result) != want[i].result {
			t.Errorf("result %d: %s, want %s", i, got.Result, want[i].result)
		}
		if got.ExecutionID == "" || ids[got.ExecutionID] {
			t.Errorf("result %d: execution id %q not fresh", i, got.ExecutionID)
		}
		ids[got.ExecutionID] = true
		for _, m := range []string{"queue_wait_ms", "startup_ms", "compute_ms", "execution_ms", "total_ms"} {
			if got.Metrics[m] == nil {
				t.Errorf("result %d: %s unobserved", i, m)
			}
		}
		if v, ok := got.Metrics["cleanup_ms"]; !ok || v != nil {
			t.Errorf("result %d: cleanup_ms %v, want null", i, v)
		}
		if got.Resources.Memory == nil || got.Resources.Memory.Mode != "wasm_instance_hard" || got.Resources.FuelUsed == nil || *got.Resources.FuelUsed <= 0 {
			t.Errorf("result %d: resources %+v", i, got.Resources)
		}
	}
	// The compute route's items are counted in the metrics.
	status, _, metrics := r.do("GET", "/metrics", "", nil)
	// So are each item's phases, its fuel and its memory peak; a phase
	// it did not measure (cleanup) is not.
	for _, want := range []string{`toolhost_runs_total{outcome="success",tool="hash"} 1`, `toolhost_runs_total{outcome="success",tool="slug"} 1`,
		`toolhost_item_phase_seconds_count{phase="queue_wait",tool="hash"} 1`,
		`toolhost_item_phase_seconds_count{phase="compute",tool="hash"} 1`,
		`toolhost_item_phase_seconds_count{phase="startup",tool="slug"} 1`,
		`toolhost_item_fuel_used_count{tool="hash"} 1`,
		`toolhost_item_memory_peak_bytes_count{tool="slug"} 1`} {
		if status != http.StatusOK || !strings.Contains(string(metrics), want) {
			t.Errorf("metrics (%d) lack %s", status, want)
		}
	}
	if strings.Contains(string(metrics), `phase="cleanup",tool="hash"`) {
		t.Error("an unmeasured phase is in the metrics")
	}
}

func TestPerItemErrors(t *testing.T) {
	r := start(t, bundled(t))
	stale := r.item("stale", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})
	stale["schema_fingerprint"] = strings.Repeat("0", 64)
	deep := any("x") // 33 levels with the parameters object: one too many
	for range 32 {
		deep = []any{deep}
	}
	unknown := r.item("unknown", "hash", map[string]any{})
	unknown["tool_code"] = "no_such_tool"
	res := r.compute(
		stale,
		r.item("bad", "case", map[string]any{"operation": "convert", "text": "x", "to": "spongebob"}),
		r.item("deep", "hash", map[string]any{"operation": "digest", "text": deep}),
		unknown,
	)
	want := []struct {
		code      string
		retryable bool
	}{{"version_mismatch", true}, {"invalid_parameters", false}, {"input_limit_exceeded", false}, {"unknown_tool", false}}
	if res.SuccessCount != 0 || res.FailedCount != 4 {
		t.Errorf("counts %d/%d", res.SuccessCount, res.FailedCount)
	}
	for i, got := range res.Results {
		if got.Status != "error" || got.Error == nil || got.Error.Code != want[i].code || got.Error.Retryable != want[i].retryable || got.Result != nil {
			t.Errorf("result %d (%s): %+v %+v, want %s", i, got.CorrelationID, got, got.Error, want[i].code)
		}
	}
	// No engine ran for the stale pin: it has no execution id.
	if res.Results[0].ExecutionID != "" {
		t.Errorf("version_mismatch started an execution %q", res.Results[0].ExecutionID)
	}
}

func TestTransportErrors(t *testing.T) {
	r := start(t, bundled(t))
	ok := r.item("c-1", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})
	okJSON := string(encode(t, ok))
	big := `{"request_id":"r","items":[` + okJSON + `],"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	many := make([]map[string]any, 5)
	for i := range many {
		many[i] = r.item(fmt.Sprintf("c-%d", i), "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})
	}
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"malformed", `{"request_id":`, 400, "invalid_json"},
		{"duplicate key", `{"request_id":"a","request_id":"b","items":[` + okJSON + `]}`, 400, "invalid_json"},
		{"non-finite", `{"request_id":"a","items":[` + okJSON + `],"x":1e400}`, 400, "invalid_json"},
		{"too large", big, 413, "payload_too_large"},
		{"no items", `{"request_id":"a","items":[]}`, 422, "invalid_envelope"},
		{"five items", string(encode(t, map[string]any{"request_id": "a", "items": many})), 422, "invalid_envelope"},
		{"unknown field", `{"request_id":"a","items":[` + okJSON + `],"extra":1}`, 422, "invalid_envelope"},
		{"duplicate correlation", `{"request_id":"a","items":[` + okJSON + `,` + okJSON + `]}`, 422, "invalid_envelope"},
		{"bad fingerprint", strings.Replace(`{"request_id":"a","items":[`+okJSON+`]}`, ok["schema_fingerprint"].(string), "XYZ", 1), 422, "invalid_envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := r.do("POST", "/api/v1/tools/compute", r.token, []byte(tt.body))
			var p struct {
				Code     string `json:"code"`
				Status   int    `json:"status"`
				Instance string `json:"instance"` // random: may hold any three letters
				Issues   []struct {
					Code string   `json:"code"`
					Path []string `json:"path"`
				} `json:"issues"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("%d: not a problem document: %s", status, body)
			}
			if status != tt.status || p.Status != tt.status || p.Code != tt.code || !strings.Contains(h.Get("Content-Type"), "application/problem+json") {
				t.Errorf("%d %+v, want %d %s", status, p, tt.status, tt.code)
			}
			if tt.status == 422 && len(p.Issues) == 0 {
				t.Errorf("422 without issues: %s", body)
			}
			if strings.Contains(strings.ReplaceAll(string(body), p.Instance, ""), "abc") {
				t.Errorf("the problem echoes the request: %s", body)
			}
		})
	}
}

// A second concurrent batch of one principal is refused whole with 429;
// when the client of the first goes away, its batch is cancelled and its
// capacity comes back.
func TestSecondBatchRefusedAndDisconnectCancels(t *testing.T) {
	r := start(t, map[string][]byte{"counter.wasm": module(t, "testdata/guests/counter")})
	spin := r.item("slow", "counter", map[string]any{"operation": "count", "spin": 0}) // until stopped
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan int, 1)
	go func() {
		status, _, _ := r.doCtx(ctx, "POST", "/api/v1/tools/compute", r.token,
			encode(t, map[string]any{"request_id": "first", "items": []any{spin}}))
		first <- status
	}()
	eventually(t, "the first batch runs", func() bool { return r.pool().Active == 1 })

	quick := r.item("quick", "counter", map[string]any{"operation": "count"})
	status, h, body := r.do("POST", "/api/v1/tools/compute", r.token,
		encode(t, map[string]any{"request_id": "second", "items": []any{quick}}))
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(string(body), `"queue_full"`) {
		t.Errorf("second batch: %d %v %s", status, h, body)
	}

	cancel() // the client of the first batch goes away
	<-first
	eventually(t, "the cancelled batch releases its capacity", func() bool {
		p := r.pool()
		return p.Pending == 0 && p.Active == 0
	})
	if res := r.compute(quick); res.SuccessCount != 1 {
		t.Errorf("after the cancellation: %+v", res)
	}
	if p := r.pool(); p.Completed < 2 || p.Failed < 1 || p.Degraded != 0 {
		t.Errorf("pool %+v", p)
	}
}

type pool struct {
	Available bool `json:"available"`
	Active    int  `json:"active"`
	Pending   int  `json:"pending"`
	Waiting   int  `json:"waiting"`
	Degraded  int  `json:"degraded"`
	Completed int  `json:"completed"`
	Failed    int  `json:"failed"`
}

type diagnostics struct {
	Scope       string `json:"scope"`
	RuntimeID   string `json:"runtime_id"`
	Generation  int    `json:"generation"`
	Descriptors []struct {
		ToolCode string `json:"tool_code"`
		Source   string `json:"source"`
	} `json:"descriptors"`
	Failures []struct {
		File     string `json:"filename"`
		ToolCode string `json:"tool_code"`
		Reason   string `json:"reason"`
	} `json:"failures"`
	Capabilities map[string]string `json:"capabilities"`
	Pool         pool              `json:"pool"`
}

func (r *rig) diagnostics() diagnostics {
	r.t.Helper()
	var d diagnostics
	r.getJSON("/api/v1/tools/diagnostics", &d)
	return d
}

func (r *rig) pool() pool { return r.diagnostics().Pool }

// Modules dropped into the folder appear while the server runs; a
// duplicate quarantines every claimant; removing it heals the code.
func TestLiveFolder(t *testing.T) {
	codec := module(t, "plugins-src/codec")
	r := start(t, map[string][]byte{"codec.wasm": codec})
	has := func(code string) bool {
		return slices.ContainsFunc(r.catalog().Items, func(d descriptor) bool { return d.ToolCode == code })
	}
	if has("case") {
		t.Fatal("case is listed before its module is there")
	}
	r.drop("text.wasm", module(t, "plugins-src/text"))
	eventually(t, "the dropped module's services are listed", func() bool { return has("case") && has("slug") })

	r.drop("codec-copy.wasm", codec)
	eventually(t, "both claimants of hash are quarantined", func() bool { return !has("hash") })
	d := r.diagnostics()
	claimants := map[string]bool{}
	for _, f := range d.Failures {
		if f.ToolCode == "hash" && f.Reason == "duplicate_code" {
			claimants[f.File] = true
		}
		if strings.Contains(f.File, "/") && !strings.HasPrefix(f.File, "builtin/") {
			t.Errorf("failure names a path: %+v", f)
		}
	}
	if !claimants["codec.wasm"] || !claimants["codec-copy.wasm"] {
		t.Errorf("duplicate claimants %v, want both files; failures %+v", claimants, d.Failures)
	}
	var unavailable []struct {
		ToolCode string `json:"tool_code"`
		Reason   string `json:"reason"`
	}
	for _, u := range r.catalog().Unavailable {
		var x struct {
			ToolCode string `json:"tool_code"`
			Reason   string `json:"reason"`
		}
		json.Unmarshal(u, &x)
		unavailable = append(unavailable, x)
	}
	if !slices.ContainsFunc(unavailable, func(x struct {
		ToolCode string `json:"tool_code"`
		Reason   string `json:"reason"`
	}) bool {
		return x.ToolCode == "hash"
	}) {
		t.Errorf("hash is not among the unavailable summaries: %+v", unavailable)
	}
	if !has("case") {
		t.Error("an unrelated module lost its services")
	}

	if err := os.Remove(filepath.Join(r.tools, "codec-copy.wasm")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "hash is back once the duplicate is gone", func() bool { return has("hash") })
	if d := r.diagnostics(); d.Scope != "api_process" || d.RuntimeID == "" || d.Capabilities["memory"] == "" {
		t.Errorf("diagnostics %+v", d)
	}
}

// Many principals send batches at once: every answer is a result or a
// whole refusal, never a server error, and the pool ends empty.
func TestConcurrentBatches(t *testing.T) {
	r := start(t, bundled(t))
	tokens := []string{r.token}
	for i := range 3 {
		tok, err := r.srv.Accounts().CreateToken(context.Background(), fmt.Sprintf("user%d", i))
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	body := encode(t, map[string]any{"request_id": "many", "items": []any{
		r.item("a", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"}),
		r.item("b", "case", map[string]any{"operation": "convert", "text": "hello", "to": "upper"}),
	}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for _, tok := range tokens {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					status, _, _ := r.do("POST", "/api/v1/tools/compute", tok, body)
					mu.Lock()
					statuses[status]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if statuses[200] == 0 || statuses[200]+statuses[429] != 4*4*5 {
		t.Errorf("statuses %v: want only 200 and 429", statuses)
	}
	if p := r.pool(); p.Pending != 0 || p.Active != 0 || p.Degraded != 0 {
		t.Errorf("pool after the storm %+v", p)
	}
}

// The native tools run in supervised workers behind the same routes: a
// batch mixing the PAC allocator, a PDF tool and a WASM tool.
func TestNativeTools(t *testing.T) {
	r := startWith(t, map[string][]byte{"codec.wasm": module(t, "plugins-src/codec")}, true)
	pdf, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "pdf", "letter_3pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	holdings := []any{
		map[string]any{"instrument_id": "A", "quantity": "10", "price": "40", "currency": "EUR"},
		map[string]any{"instrument_id": "B", "quantity": "4", "price": "150", "currency": "EUR"},
	}
	res := r.compute(
		r.item("value", "pac_allocator", map[string]any{"operation": "value", "currency": "EUR", "holdings": holdings}),
		r.item("plan", "pac_allocator", map[string]any{"operation": "plan", "currency": "EUR", "contribution": "500",
			"holdings": holdings, "targets": []any{
				map[string]any{"instrument_id": "A", "weight": "0.5"},
				map[string]any{"instrument_id": "B", "weight": "0.5"},
			}}),
		r.item("protect", "pdf_protect", map[string]any{"operation": "protect", "file": pdf,
			"user_password": "open sesame", "owner_password": "owner secret"}),
		r.item("hash", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"}),
	)
	if res.SuccessCount != 4 {
		t.Fatalf("batch %+v", res)
	}
	mode := r.diagnostics().Capabilities["memory"]
	if mode == "" || mode == "unavailable" {
		t.Errorf("native memory capability %q", mode)
	}
	for _, got := range res.Results[:3] {
		if got.Resources.Memory == nil || got.Resources.Memory.Mode != mode || got.Resources.FuelUsed != nil {
			t.Errorf("%s: resources %+v, want mode %s and no fuel", got.CorrelationID, got.Resources, mode)
		}
		if got.Metrics["startup_ms"] == nil || got.Metrics["compute_ms"] == nil || got.Metrics["cleanup_ms"] == nil {
			t.Errorf("%s: metrics %v", got.CorrelationID, got.Metrics)
		}
	}
	var value struct {
		Status    string `json:"status"`
		Valuation struct {
			Total string `json:"total"`
		} `json:"valuation"`
	}
	if err := json.Unmarshal(res.Results[0].Result, &value); err != nil || value.Status != "ready" || value.Valuation.Total != "1000.00" {
		t.Errorf("value: %s (%v)", res.Results[0].Result, err)
	}
	var plan struct {
		Solver struct {
			Status string `json:"status"`
		} `json:"solver"`
	}
	if err := json.Unmarshal(res.Results[1].Result, &plan); err != nil || plan.Solver.Status != "optimal" {
		t.Errorf("plan: %s (%v)", res.Results[1].Result, err)
	}
}

// A native tool whose engine the host lacks is listed as unavailable with
// the reason and answered tool_unavailable, never faked.
func TestNativeEngineMissing(t *testing.T) {
	// A PATH with cbc alone: the PDF tools' engines are missing.
	cbc, err := exec.LookPath("cbc")
	if err != nil {
		t.Fatalf("cbc: %v (.ci/run installs coinor-cbc)", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(cbc, filepath.Join(bin, "cbc")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	r := startWith(t, nil, true)
	c := r.catalog()
	if slices.ContainsFunc(c.Items, func(d descriptor) bool { return strings.HasPrefix(d.ToolCode, "pdf_") }) {
		t.Errorf("a PDF tool is listed as available without its engines")
	}
	if !slices.ContainsFunc(c.Items, func(d descriptor) bool { return d.ToolCode == "pac_allocator" }) {
		t.Errorf("pac_allocator is not listed, though cbc is there")
	}
	var summaries []string
	for _, u := range c.Unavailable {
		summaries = append(summaries, string(u))
	}
	if !slices.Contains(summaries, `{"tool_code":"pdf_protect","reason":"engine_missing"}`) {
		t.Errorf("unavailable %s", summaries)
	}
	// Pinned to its live descriptor (diagnostics lists it), an item is
	// refused per item, and nothing runs.
	var diag struct {
		Descriptors []descriptor `json:"descriptors"`
	}
	r.getJSON("/api/v1/tools/diagnostics", &diag)
	i := slices.IndexFunc(diag.Descriptors, func(d descriptor) bool { return d.ToolCode == "pdf_protect" })
	if i < 0 {
		t.Fatal("pdf_protect is not among the diagnostics descriptors")
	}
	d := diag.Descriptors[i]
	res := r.compute(map[string]any{"correlation_id": "p", "tool_code": d.ToolCode, "contract_version": d.ContractVersion,
		"implementation_version": d.ImplementationVersion, "schema_fingerprint": d.SchemaFingerprint,
		"parameters": map[string]any{"operation": "protect"}})
	if got := res.Results[0]; got.Error == nil || got.Error.Code != "tool_unavailable" || got.ExecutionID != "" {
		t.Errorf("pdf_protect without its engines: %+v %+v", got, got.Error)
	}
	// Its run and its jobs are refused before any job exists.
	status, h, body := r.do("POST", "/api/v1/tools/pdf_protect/run", r.token, []byte(`{"input":{}}`))
	problemCode(t, "run of an unavailable job tool", status, h, body, http.StatusServiceUnavailable, contracts.ProblemToolUnavailable)
	status, h, body = r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"pdf","input":{"tool":"protect"}}`))
	problemCode(t, "job of an unavailable tool", status, h, body, http.StatusServiceUnavailable, contracts.ProblemToolUnavailable)
}

// The tools platform routes (ADR-027): every descriptor passes its
// contract and checkDescriptor, the list passes checkList, the $refs
// resolve, a sync tool runs anonymously, and every refusal is a problem
// document of the run-request contract.
func TestToolsPlatformRoutes(t *testing.T) {
	r := startWith(t, bundled(t), true)
	getDoc := func(path string) any {
		t.Helper()
		status, _, body := r.do("GET", path, "", nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		doc, err := wire.Decode(body, wire.Limits{MaxDepth: 128})
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return doc
	}
	list := getDoc("/api/v1/tools")
	if err := contracts.Validate(contracts.ToolListV1, list); err != nil {
		t.Fatalf("the list fails tools.tool-list@1: %v", err)
	}
	var typed contracts.ToolList
	remarshal(t, list, &typed)
	if f := contractstest.CheckList(typed); len(f) != 0 {
		t.Errorf("checkList: %+v", f)
	}
	if typed.Count == 0 || typed.Count != len(typed.Tools) {
		t.Fatalf("list count %d of %d tools", typed.Count, len(typed.Tools))
	}
	for _, lt := range typed.Tools {
		doc := getDoc("/api/v1/tools/" + lt.ID)
		if err := contracts.Validate(contracts.ToolV1, doc); err != nil {
			t.Errorf("%s fails tools.tool@1: %v", lt.ID, err)
		}
		var tool contracts.Tool
		remarshal(t, doc, &tool)
		if f := contractstest.CheckDescriptor(tool); len(f) != 0 {
			t.Errorf("%s: checkDescriptor: %+v", lt.ID, f)
		}
		// The list's $ref points at the schema route, whose $defs hold
		// the descriptor's own input schema.
		ref, _ := lt.Input.(map[string]any)["$ref"].(string)
		path, frag, _ := strings.Cut(ref, "#")
		schemaDoc := getDoc(path).(map[string]any)
		if frag != "/$defs/input" || schemaDoc["$defs"] == nil {
			t.Fatalf("%s: $ref %q against %v", lt.ID, ref, schemaDoc)
		}
		if want, got := encode(t, tool.Input), encode(t, stripID(schemaDoc["$defs"].(map[string]any)["input"])); !bytes.Equal(want, got) {
			t.Errorf("%s: the schema route's input differs from the descriptor's:\n%s\n%s", lt.ID, got, want)
		}
	}
	if raw := getDoc("/api/v1/contracts/tools.run.v1.json"); raw.(map[string]any)["$schema"] == nil {
		t.Errorf("the run contract is not served: %v", raw)
	}

	// A sync run by an anonymous caller.
	status, _, body := r.do("POST", "/api/v1/tools/hash/run", "",
		[]byte(`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`))
	var run map[string]any
	if err := json.Unmarshal(body, &run); status != http.StatusOK || err != nil {
		t.Fatalf("run: %d %s", status, body)
	}
	if doc, _ := wire.Decode(body, wire.Limits{}); contracts.Validate(contracts.RunV1, doc) != nil || run["status"] != "succeeded" ||
		run["result"].(map[string]any)["digest"] != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("run answer %s", body)
	}

	// The page-only tool is listed, and its run is refused.
	if !slices.ContainsFunc(typed.Tools, func(t contracts.Tool) bool { return t.ID == "yt" && !t.API && t.Run == nil }) {
		t.Error("the page-only yt is not listed with api false and run null")
	}

	refusals := []struct {
		name, path, token, body string
		code                    string
	}{
		{"page-only tool", "/api/v1/tools/yt/run", "", `{"input":{}}`, contracts.ProblemToolNotRunnable},
		{"unknown tool", "/api/v1/tools/nope/run", "", `{"input":{}}`, contracts.ProblemToolNotFound},
		{"bad JSON", "/api/v1/tools/hash/run", "", `{"input":`, contracts.ProblemInvalidRequest},
		{"not a run request", "/api/v1/tools/hash/run", "", `{"parameters":{}}`, contracts.ProblemInvalidRequest},
		{"invalid input", "/api/v1/tools/hash/run", "", `{"input":{"operation":"digest","text":"abc","algorithm":"crc"}}`, contracts.ProblemInvalidInput},
		{"too large", "/api/v1/tools/hash/run", "", `{"input":{"operation":"digest","text":"` + strings.Repeat("x", 1<<20) + `"}}`, contracts.ProblemPayloadTooLarge},
		{"bad token", "/api/v1/tools/hash/run", "th_nope", `{"input":{}}`, contracts.ProblemUnauthenticated},
		{"job tool refuses anonymous callers", "/api/v1/tools/pdf_protect/run", "", `{"input":{}}`, contracts.ProblemUnauthenticated},
	}
	for _, tt := range refusals {
		status, h, body := r.do("POST", tt.path, tt.token, []byte(tt.body))
		doc, err := wire.Decode(body, wire.Limits{})
		if err != nil || contracts.ValidateProblem(doc) != nil || !strings.Contains(h.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s is not a problem document", tt.name, status, body)
			continue
		}
		if got := doc.(map[string]any)["code"]; got != tt.code || status != api.ProblemStatus(tt.code) {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, got, api.ProblemStatus(tt.code), tt.code)
		}
	}
}

// remarshal decodes a generic JSON value into v.
func remarshal(t *testing.T, doc, v any) {
	t.Helper()
	if err := json.Unmarshal(encode(t, doc), v); err != nil {
		t.Fatal(err)
	}
}

// stripID returns a schema without its $id, which the schema route adds
// so that the embedded schema compiles on its own.
func stripID(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	out := map[string]any{}
	for k, v := range m {
		if k != "$id" {
			out[k] = v
		}
	}
	return out
}

// The legacy routes keep working through the descriptors' run.legacy
// mapping, and every answer carries the deprecation headers.
func TestLegacyRoutes(t *testing.T) {
	r := startWith(t, bundled(t), true)
	deprecated := func(name string, h http.Header, successor string) {
		t.Helper()
		if h.Get("Deprecation") != "true" || h.Get("Sunset") != "Thu, 31 Dec 2026 23:59:59 GMT" ||
			h.Get("Link") != "<"+successor+">; rel=\"successor-version\"" {
			t.Errorf("%s: headers Deprecation=%q Sunset=%q Link=%q", name, h.Get("Deprecation"), h.Get("Sunset"), h.Get("Link"))
		}
	}
	status, h, body := r.do("POST", "/api/dev/hash/digest", "", []byte(`{"text":"abc","algorithm":"sha256"}`))
	if status != http.StatusOK || string(body) != `{"digest":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}` {
		t.Errorf("legacy hash: %d %s", status, body)
	}
	deprecated("legacy hash", h, "/api/v1/tools/hash/run")

	status, h, body = r.do("POST", "/api/dev/case/convert", "", []byte(`{"text":"x","to":"spongebob"}`))
	// A refusal before the run is the run route's problem, whatever the
	// route (answer_legacy.go).
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"tools.run.invalid_input"`) {
		t.Errorf("legacy refusal: %d %s", status, body)
	}
	deprecated("legacy refusal", h, "/api/v1/tools/case/run")

	status, h, body = r.do("POST", "/api/dev/nothing/here", "", []byte(`{}`))
	if status != http.StatusNotFound {
		t.Errorf("unknown legacy route: %d %s", status, body)
	}
	deprecated("unknown legacy route", h, "/api/v1/tools")

	status, h, body = r.do("GET", "/api/process/info", "", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"id":"pdf_protect"`) {
		t.Errorf("process info: %d %s", status, body)
	}
	deprecated("process info", h, "/api/v1/tools")
}

package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// loadingDiag is the part of diagnostics that lists loads in progress.
type loadingDiag struct {
	Loading []struct {
		File           string    `json:"filename"`
		Phase          string    `json:"phase"`
		Since          time.Time `json:"since"`
		ElapsedMS      int64     `json:"elapsed_ms"`
		PhaseElapsedMS int64     `json:"phase_elapsed_ms"`
		PhaseTimeoutMS int64     `json:"phase_timeout_ms"`
		Abandoned      bool      `json:"abandoned"`
	} `json:"loading"`
	Failures []struct {
		File   string `json:"filename"`
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"failures"`
}

// diagnosticsBody is the raw diagnostics document and its loading part.
func (r *rig) loadingDiagnostics() (loadingDiag, string) {
	r.t.Helper()
	status, _, body := r.do("GET", "/api/v1/tools/diagnostics", r.token, nil)
	if status != http.StatusOK {
		r.t.Fatalf("diagnostics: %d %s", status, body)
	}
	var d loadingDiag
	if err := json.Unmarshal(body, &d); err != nil {
		r.t.Fatalf("diagnostics: %v in %s", err, body)
	}
	if d.Loading == nil {
		r.t.Fatalf("diagnostics without a loading list: %s", body)
	}
	return d, string(body)
}

// readyTools is /readyz's answer and its tools check.
type readyTools struct {
	Status string `json:"status"`
	Checks struct {
		Tools *struct {
			Loading   int `json:"loading"`
			Abandoned int `json:"abandoned"`
		} `json:"tools"`
	} `json:"checks"`
}

func (r *rig) readyz() readyTools {
	r.t.Helper()
	status, _, body := r.do("GET", "/readyz", "", nil)
	var rd readyTools
	if err := json.Unmarshal(body, &rd); err != nil || status != http.StatusOK || rd.Status != "ready" || rd.Checks.Tools == nil {
		r.t.Fatalf("/readyz while loads are pending: %d %s", status, body)
	}
	return rd
}

// A tool author who drops a module sees it in diagnostics' loading list
// with its phase and since when, and /readyz (200 all along) counts it,
// until it is refused: then it is in the failures and in neither.
func TestDiagnosticsListLoadsInProgress(t *testing.T) {
	const imageDeadline = 4 * time.Second
	r := startConfigured(t, map[string][]byte{"ping.wasm": testkit.WAT(t, "ping")}, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Wait: 300 * time.Millisecond, Image: imageDeadline, MaxLoads: 4}
	})
	if rd := r.readyz(); rd.Checks.Tools.Loading != 0 || rd.Checks.Tools.Abandoned != 0 {
		t.Errorf("/readyz before any load: %+v", *rd.Checks.Tools)
	}
	if d, _ := r.loadingDiagnostics(); len(d.Loading) != 0 {
		t.Errorf("loads before any was dropped: %+v", d.Loading)
	}

	dropped := time.Now()
	r.drop("loop.wasm", testkit.WAT(t, "image_loop"))
	deadline := time.Now().Add(60 * time.Second)
	for {
		d, body := r.loadingDiagnostics()
		if strings.Contains(body, r.tools) {
			t.Errorf("diagnostics hold the tools folder's path: %s", body)
		}
		i := -1
		for j, l := range d.Loading {
			if l.File == "loop.wasm" && l.Phase == "image" {
				i = j
			}
		}
		if i >= 0 {
			l := d.Loading[i]
			t.Logf("listed %v after the drop: %s", time.Since(dropped).Round(time.Millisecond), body[strings.Index(body, `"loading"`):strings.Index(body, `"capabilities"`)])
			if l.Abandoned || l.PhaseTimeoutMS != imageDeadline.Milliseconds() || l.PhaseElapsedMS > l.ElapsedMS ||
				l.Since.Before(dropped.Add(-time.Millisecond)) || l.Since.After(time.Now()) || l.Since.Location() != time.UTC {
				t.Errorf("the load in its image phase: %+v (dropped at %v)", l, dropped.UTC())
			}
			for _, f := range d.Failures {
				if f.File == "loop.wasm" {
					t.Errorf("refused while listed in its image phase: %+v", f)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loop.wasm never listed in its image phase: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Still in its image phase (it lasts until its deadline): counted.
	if rd := r.readyz(); rd.Checks.Tools.Loading < 1 {
		t.Errorf("/readyz while loop.wasm loads: %+v", *rd.Checks.Tools)
	}
	// ping answers meanwhile.
	if code, err := r.runTool("ping", r.token, pingRun); err != nil || code != "" {
		t.Errorf("ping while loop.wasm loads: %q %v", code, err)
	}

	r.awaitRefused(t, hostileCase{refused: []string{"load_timeout/image"}}, "loop.wasm", dropped, imageDeadline)
	for {
		d, body := r.loadingDiagnostics()
		rd := r.readyz()
		if len(d.Loading) == 0 && rd.Checks.Tools.Loading == 0 && rd.Checks.Tools.Abandoned == 0 {
			refused := false
			for _, f := range d.Failures {
				refused = refused || f.File == "loop.wasm" && f.Reason == "import_failed" && f.Detail == "load_timeout/image"
			}
			if !refused {
				t.Errorf("no longer loading, and not refused: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed after its refusal: %s, /readyz %+v", body, *rd.Checks.Tools)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loadingAnswer is one request's answer while the first scan loads and
// after it.
type loadingAnswer struct {
	name         string
	method, path string
	body         []byte
	// during and after are the problem codes wanted; the status is the
	// dialect's (503 during, 404 after).
	during, after string
}

// TestLoadingIsNotAbsence: while a server's first scan of the tools folder
// still loads (loop.wasm holds it until its image deadline), a tool code
// it does not know yet answers 503 with Retry-After, retryable — on the
// run, descriptor, schema, compute and job routes — and /readyz's
// "starting" body counts the modules found and those ended; once the scan
// has ended, the same code is 404, and a code of the scan that loaded
// answers.
func TestLoadingIsNotAbsence(t *testing.T) {
	r := startConfigured(t, map[string][]byte{
		"loop.wasm": testkit.WAT(t, "image_loop"),
		"ping.wasm": testkit.WAT(t, "ping"),
	}, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Background: true, Image: 3 * time.Second, MaxLoads: 1}
	})
	nope := map[string]any{"correlation_id": "c", "tool_code": "nope", "contract_version": "1.0.0",
		"implementation_version": "1.0.0", "schema_fingerprint": strings.Repeat("0", 64), "parameters": map[string]any{}}
	answers := []loadingAnswer{
		{"run", "POST", "/api/v1/tools/nope/run", []byte(`{"input":{}}`), "tools.server.unavailable", "tools.tool.not_found"},
		{"descriptor", "GET", "/api/v1/tools/nope", nil, "tools.server.unavailable", "tools.tool.not_found"},
		{"schema", "GET", "/api/v1/tools/nope/schema", nil, "tools.server.unavailable", "tools.tool.not_found"},
		{"job", "POST", "/api/v1/jobs", []byte(`{"type":"nope","input":{"tool":"x"}}`), "tools.server.unavailable", "tools.tool.not_found"},
		{"compute", "POST", "/api/v1/tools/compute", encode(t, map[string]any{"request_id": "r", "items": []any{nope}}), "service_unavailable", ""},
		{"legacy", "POST", "/api/dev/nope", []byte(`{}`), "tools.server.unavailable", "legacy_not_found"},
	}

	var ready struct {
		Status       string `json:"status"`
		ModulesTotal *int   `json:"modules_total"`
		ModulesReady *int   `json:"modules_ready"`
	}
	status, _, body := r.do("GET", "/readyz", "", nil)
	if err := json.Unmarshal(body, &ready); err != nil || status != http.StatusServiceUnavailable || ready.Status != "starting" {
		t.Fatalf("/readyz while loop.wasm loads: %d %s", status, body)
	}
	if ready.ModulesTotal == nil || ready.ModulesReady == nil || *ready.ModulesTotal != 2 || *ready.ModulesReady < 0 || *ready.ModulesReady >= 2 {
		t.Errorf("/readyz while starting: %s, want modules_total 2 and modules_ready 0 or 1", body)
	}
	for _, a := range answers {
		t.Run("during/"+a.name, func(t *testing.T) {
			status, h, body := r.do(a.method, a.path, r.token, a.body)
			problemCode(t, a.name, status, h, body, http.StatusServiceUnavailable, a.during)
			var p struct {
				Retryable bool `json:"retryable"`
			}
			if json.Unmarshal(body, &p); !p.Retryable || h.Get("Retry-After") == "" {
				t.Errorf("%s: retryable %v, Retry-After %q: %s", a.name, p.Retryable, h.Get("Retry-After"), body)
			}
		})
	}
	// ping is in the first scan: loaded (it runs), or still queued behind
	// loop.wasm (503) — never absent.
	pingStatus, _, pingBody := r.do("GET", "/api/v1/tools/ping", r.token, nil)
	if pingStatus != http.StatusOK && pingStatus != http.StatusServiceUnavailable {
		t.Errorf("ping's descriptor during the first scan: %d %s", pingStatus, pingBody)
	}
	t.Logf("ping's descriptor during the first scan: %d", pingStatus)
	if status, _, body := r.do("GET", "/readyz", "", nil); status != http.StatusServiceUnavailable {
		t.Fatalf("the first scan ended while the test asked (raise loop.wasm's image deadline): /readyz %d %s", status, body)
	}

	eventually(t, "/readyz turns 200", func() bool {
		status, _, _ := r.do("GET", "/readyz", "", nil)
		return status == http.StatusOK
	})
	for _, a := range answers {
		t.Run("after/"+a.name, func(t *testing.T) {
			status, h, body := r.do(a.method, a.path, r.token, a.body)
			if a.after == "" {
				// The compute route answers an unknown code per item.
				if status != http.StatusOK || !strings.Contains(string(body), `"unknown_tool"`) {
					t.Errorf("%s after the first scan: %d %s", a.name, status, body)
				}
				return
			}
			problemCode(t, a.name, status, h, body, http.StatusNotFound, a.after)
		})
	}
	if code, err := r.runTool("ping", r.token, pingRun); err != nil || code != "" {
		t.Errorf("ping after the first scan: %q %v", code, err)
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// HTTP hygiene on the composed server (issue 12, item 6): /readyz turns
// 503 before the listener closes, and HEAD is served on the job routes,
// an event stream and a download included.

// freshGet sends method path on a new connection of its own (no
// keep-alive), as a load balancer's probe or a new client does.
func freshGet(t *testing.T, method, url, token string) (*http.Response, []byte, error) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// During Shutdown's drain delay /readyz answers 503 on new connections,
// which are still accepted and served; keep-alive connections are told to
// close; the listener closes after the delay.
func TestReadyzDrainsBeforeTheListenerCloses(t *testing.T) {
	const delay = 5 * time.Second
	r := startConfigured(t, nil, false, func(c *server.Config) { c.DrainDelay = delay })
	if resp, body, err := freshGet(t, "GET", r.url+"/readyz", ""); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz before the shutdown: %v %v %s", err, resp, body)
	}
	// A keep-alive connection opened before the shutdown.
	if status, _, _ := r.do("GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("/healthz: %d", status)
	}

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- r.srv.Shutdown(ctx)
	}()
	// Drain is the first thing Shutdown does.
	var ready *http.Response
	var body []byte
	for end := time.Now().Add(delay / 2); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if ready, body, err = freshGet(t, "GET", r.url+"/readyz", ""); err != nil {
			t.Fatalf("/readyz during the drain: %v", err)
		}
		if ready.StatusCode == http.StatusServiceUnavailable || time.Now().After(end) {
			break
		}
	}
	var doc struct{ Status string }
	if ready.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &doc) != nil || doc.Status != "draining" ||
		ready.Header.Get(api.RequestIDHeader) == "" {
		t.Fatalf("/readyz during the drain: %d %s %v", ready.StatusCode, body, ready.Header)
	}
	// Other requests are still served, on new connections too.
	if resp, body, err := freshGet(t, "GET", r.url+"/api/v1/tools/catalog", r.token); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("catalog on a new connection during the drain: %v %v %s", err, resp, body)
	}
	if resp, _, err := freshGet(t, "HEAD", r.url+"/readyz", ""); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("HEAD /readyz during the drain: %v %v", err, resp)
	}
	// The keep-alive connection is served and told to close.
	req, _ := http.NewRequest("GET", r.url+"/healthz", nil)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("/healthz on the kept-alive connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("/healthz on the kept-alive connection: %d, Connection: close %v", resp.StatusCode, resp.Close)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned during its drain delay: %v", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, _, err := freshGet(t, "GET", r.url+"/readyz", ""); err == nil {
		t.Error("the listener still accepts after Shutdown")
	}
}

// The drain delay is bounded by the shutdown's deadline: a delay longer
// than the time Shutdown has takes at most half of the drain, and
// Shutdown still returns by its deadline.
func TestDrainDelayWithinTheShutdownDeadline(t *testing.T) {
	r := startConfigured(t, nil, false, func(c *server.Config) { c.DrainDelay = time.Hour })
	const timeout = 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	if err := r.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > timeout+2*time.Second {
		t.Errorf("Shutdown took %v with a %v deadline", took, timeout)
	}
}

// HEAD on the job routes: a job's document, its event stream while it
// runs (the stream's headers, then the end) and a download (its headers
// and length, not its bytes); legacy and /metrics too.
func TestHeadOnJobRoutes(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf is not installed")
	}
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, FileTTL: time.Hour}
	})
	compare := func(name, path, token string, status int, sameLength bool) {
		t.Helper()
		get, getBody, err := freshGet(t, "GET", r.url+path, token)
		if err != nil {
			t.Fatalf("%s: GET: %v", name, err)
		}
		head, headBody, err := freshGet(t, "HEAD", r.url+path, token)
		if err != nil {
			t.Fatalf("%s: HEAD: %v", name, err)
		}
		if get.StatusCode != status || head.StatusCode != status || len(headBody) != 0 {
			t.Fatalf("%s: GET %d, HEAD %d with %d bytes; want %d", name, get.StatusCode, head.StatusCode, len(headBody), status)
		}
		for _, k := range []string{"Content-Type", "Content-Disposition", "Cache-Control", "Deprecation", "Sunset", "Link"} {
			if get.Header.Get(k) != head.Header.Get(k) {
				t.Errorf("%s: %s: GET %q, HEAD %q", name, k, get.Header.Get(k), head.Header.Get(k))
			}
		}
		if n, err := strconv.Atoi(head.Header.Get("Content-Length")); sameLength && (err != nil || n != len(getBody)) {
			t.Errorf("%s: HEAD Content-Length %q, GET body %d bytes", name, head.Header.Get("Content-Length"), len(getBody))
		}
	}

	// A download.
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	var run struct{ ID string }
	if err := json.Unmarshal(body, &run); err != nil || (status != http.StatusOK && status != http.StatusAccepted) {
		t.Fatalf("protect run: %d %s", status, body)
	}
	if job := r.final(run.ID); job.State != "succeeded" || len(job.Files) != 1 {
		t.Fatalf("protect job %+v", job)
	}
	compare("job", "/api/v1/jobs/"+run.ID, r.token, http.StatusOK, true)
	compare("file", "/api/v1/jobs/"+run.ID+"/files/"+"file.pdf", r.token, http.StatusOK, true)
	compare("another caller's file", "/api/v1/jobs/"+run.ID+"/files/file.pdf", "", http.StatusNotFound, true)
	compare("finished job's events", "/api/v1/jobs/"+run.ID+"/events", r.token, http.StatusOK, false)

	// The event stream of a running job: HEAD gets its headers and the
	// answer ends while the job still runs, where GET would stream until
	// it ends. On a kept-alive connection the next request is served only
	// once the HEAD's handler has returned.
	sleeper := r.submitSleeper(r.token, 3000)
	status, h, headBody := r.do("HEAD", "/api/v1/jobs/"+sleeper+"/events", r.token, nil)
	if status != http.StatusOK || h.Get("Content-Type") != "text/event-stream" || len(headBody) != 0 {
		t.Fatalf("HEAD of a running job's events: %d %v", status, h)
	}
	if job := r.job(sleeper, r.token); job.State != "queued" && job.State != "running" {
		t.Errorf("the HEAD of the events ended with the job (%s), not before", job.State)
	}
	if status, _, body := r.do("POST", "/api/v1/jobs/"+sleeper+"/cancel", r.token, nil); status >= 500 {
		t.Logf("cancel: %d %s", status, body)
	}

	compare("legacy info", "/api/process/info", "", http.StatusOK, true)
	compare("metrics", "/metrics", "", http.StatusOK, false)
	resp, _, err := freshGet(t, "POST", r.url+"/metrics", "")
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics: %v %v", err, resp)
	}
}

// A server that loads its tools folder in the background (as serve does)
// answers /healthz at once and /readyz 503 "starting", naming the loads
// still running, until the first scan's modules are published or refused;
// then /readyz is 200 and the tools run.
func TestReadyAfterTheFirstScan(t *testing.T) {
	modules := bundled(t)
	// Refused at its image deadline; the deadline leaves the bundled modules
	// room to image on a loaded machine (their _initialize in the interpreter).
	modules["loop.wasm"] = testkit.WAT(t, "image_loop")
	r := startConfigured(t, modules, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Background: true, Image: 6 * time.Second}
	})
	if status, _, _ := r.do("GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("/healthz while loading: %d", status)
	}
	status, _, body := r.do("GET", "/readyz", "", nil)
	var doc struct {
		Status string `json:"status"`
		Checks struct {
			Tools struct {
				Loading int `json:"loading"`
			} `json:"tools"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || status != http.StatusServiceUnavailable || doc.Status != "starting" || doc.Checks.Tools.Loading == 0 {
		t.Fatalf("/readyz while the first scan loads: %d %s", status, body)
	}
	eventually(t, "/readyz turns 200", func() bool {
		status, _, _ := r.do("GET", "/readyz", "", nil)
		return status == http.StatusOK
	})
	status, _, body = r.send("POST", "/api/v1/tools/hash/run", cred{bearer: r.token}, []byte(hashRun))
	if d := checkRunDoc(t, "a run once ready", body); status != http.StatusOK || d.Status != "succeeded" {
		t.Errorf("a run once ready: %d %s", status, body)
	}
	refused := false
	for _, f := range r.diagnostics().Failures {
		refused = refused || strings.HasSuffix(f.File, "loop.wasm")
	}
	if !refused {
		t.Errorf("ready without the refused module in the diagnostics: %+v", r.diagnostics().Failures)
	}
}

// A start on an empty cache folder with every bundled module, as a first
// `make run` is (issue 14): /healthz answers while the modules compile,
// /readyz is 503 until the first scan is done and 200 after it, and every
// service of every bundled module is published.
func TestColdStartPublishesEveryBundledTool(t *testing.T) {
	modules := bundled(t)
	modules["markup.wasm"] = module(t, "plugins-src/markup")
	r := startConfigured(t, modules, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Background: true}
	})
	if status, _, _ := r.do("GET", "/healthz", "", nil); status != http.StatusOK {
		t.Fatalf("/healthz while compiling: %d", status)
	}
	if status, _, body := r.do("GET", "/readyz", "", nil); status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while compiling: %d %s", status, body)
	}
	eventually(t, "/readyz turns 200", func() bool {
		status, _, _ := r.do("GET", "/readyz", "", nil)
		return status == http.StatusOK
	})
	want := []string{"base64", "beautify", "case", "hash", "json", "minify", "slug", "url"}
	eventually(t, "every bundled tool is published", func() bool {
		var codes []string
		for _, d := range r.catalog().Items {
			codes = append(codes, d.ToolCode)
		}
		slices.Sort(codes)
		return slices.Equal(codes, want)
	})
	if f := r.diagnostics().Failures; len(f) != 0 {
		t.Errorf("refusals on a cold start: %+v", f)
	}
}

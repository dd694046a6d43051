package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines/pages"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/store"
)

// HTTP hygiene on every route (issue 12, item 6), on a real API over a
// real listener: HEAD mirrors GET, a wrong method is 405 with Allow, and
// every answer has a request id that problem documents, the access log and
// the abuse log carry.

// hygieneRig is a real API — the page-only tools in a real registry, a
// real executor, accounts, abuse log and metrics over a real SQLite file —
// served on loopback.
type hygieneRig struct {
	t     *testing.T
	api   *Server
	url   string
	token string
	abuse *abuse.Log
	logs  *lockedBuffer
}

// lockedBuffer is the access log's output, written by the server's
// goroutines and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the JSON log records written so far.
func (l *lockedBuffer) lines() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(l.b.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// credentials resolves tokens with the real accounts.
type credentials struct{ a *auth.Accounts }

func (c credentials) Token(ctx context.Context, token string) (guard.Identity, error) {
	pr, err := c.a.Authenticate(ctx, token)
	if err != nil {
		return guard.Identity{}, err
	}
	return guard.Identity{Tier: guard.User, Principal: pr.Key}, nil
}

func (credentials) Session(context.Context, string) (guard.Identity, error) {
	return guard.Identity{}, errors.New("no sessions here")
}

func (c credentials) Principal(ctx context.Context, token string) (string, error) {
	pr, err := c.a.Authenticate(ctx, token)
	if err != nil {
		return "", err
	}
	return pr.Key, nil
}

// startHygiene serves a real API; trusted are the guard's trusted proxies.
func startHygiene(t *testing.T, trusted ...netip.Prefix) *hygieneRig {
	t.Helper()
	ctx := context.Background()
	platform := policy.DefaultPlatform()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, err := registry.Open(ctx, registry.Config{Platform: platform, Static: true,
		Builtins: []registry.Builtin{{Name: pages.Name, Declaration: pages.Declaration(), Runner: pages.Runner{}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(ctx) })
	ex, err := executor.New(executor.Config{Platform: platform, Snapshot: reg.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Shutdown(ctx) })
	log, err := abuse.New(abuse.Config{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	g, err := guard.New(guard.Config{Trusted: trusted})
	if err != nil {
		t.Fatal(err)
	}
	accounts := auth.New(st)
	r := &hygieneRig{t: t, abuse: log, logs: &lockedBuffer{}}
	if r.token, err = accounts.CreateToken(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	app, err := run.New(run.Config{Platform: platform, Snapshot: reg.Snapshot, Executor: ex, Guard: g,
		Credentials: credentials{accounts}, Abuse: log, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	r.api = New(Config{
		Run: app, Metrics: m, Version: "test",
		Process: catalog.Process{RuntimeID: "hygiene", Pool: ex.Pool},
		Logger:  slog.New(slog.NewJSONHandler(r.logs, nil)),
	})
	srv := httptest.NewServer(r.api.Handler())
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// do sends method path (with the token when auth is set and extra
// headers) and returns the answer and its body.
func (r *hygieneRig) do(method, path string, auth bool, header ...string) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp, body
}

// generatedID is the form of a request id the API makes.
var generatedID = regexp.MustCompile(`^[a-z2-7]{26}$`)

// headerKeys are the names of h but those that differ between two answers
// of one resource (Date, the request id) or between a GET and a HEAD of it
// (the framing: a long GET body is chunked, its HEAD says its length).
func headerKeys(h http.Header) []string {
	var out []string
	for k := range h {
		switch k {
		case "Date", RequestIDHeader, "Content-Length", "Transfer-Encoding":
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Every GET route answers HEAD with the GET's status and headers and no
// body, its Content-Length the length of the GET's body; refusals too.
func TestHeadMirrorsGet(t *testing.T) {
	r := startHygiene(t)
	_, body := r.do("GET", Prefix+"/tools", false)
	var list contracts.ToolList
	if err := json.Unmarshal(body, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools list: %v %s", err, body)
	}
	id := list.Tools[0].ID
	tests := []struct {
		name, path string
		auth       bool
		status     int
		// stable is false where two GETs may differ in length (counters).
		stable bool
	}{
		{name: "healthz", path: "/healthz", status: 200, stable: true},
		{name: "readyz", path: "/readyz", status: 200, stable: true},
		{name: "metrics", path: "/metrics", status: 200},
		{name: "openapi", path: "/openapi.json", status: 200, stable: true},
		{name: "contract", path: contracts.Route + contracts.RunRequestV1 + ".json", status: 200, stable: true},
		{name: "catalog", path: Prefix + "/tools/catalog", auth: true, status: 200, stable: true},
		{name: "catalog without a token", path: Prefix + "/tools/catalog", status: 401, stable: true},
		{name: "diagnostics", path: Prefix + "/tools/diagnostics", auth: true, status: 200, stable: true},
		{name: "tools list", path: Prefix + "/tools", status: 200, stable: true},
		{name: "tool descriptor", path: Prefix + "/tools/" + id, status: 200, stable: true},
		{name: "tool schema", path: Prefix + "/tools/" + id + "/schema", status: 200, stable: true},
		{name: "unknown tool", path: Prefix + "/tools/no_such_tool", status: 404, stable: true},
		{name: "jobs without a jobs subsystem", path: Prefix + "/jobs/x", auth: true, status: 503, stable: true},
		{name: "unknown route", path: "/nowhere", status: 404, stable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get, getBody := r.do("GET", tt.path, tt.auth)
			head, headBody := r.do("HEAD", tt.path, tt.auth)
			if get.StatusCode != tt.status || head.StatusCode != tt.status {
				t.Fatalf("GET %d, HEAD %d; want %d\n%s", get.StatusCode, head.StatusCode, tt.status, getBody)
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD has a body: %q", headBody)
			}
			if g, h := headerKeys(get.Header), headerKeys(head.Header); !slices.Equal(g, h) {
				t.Errorf("headers differ:\nGET  %v\nHEAD %v", g, h)
			}
			for _, k := range headerKeys(get.Header) {
				if k == "Content-Type" || k == "Allow" || k == "Www-Authenticate" || k == "Cache-Control" {
					if get.Header.Get(k) != head.Header.Get(k) {
						t.Errorf("%s: GET %q, HEAD %q", k, get.Header.Get(k), head.Header.Get(k))
					}
				}
			}
			n, err := strconv.Atoi(head.Header.Get("Content-Length"))
			if err != nil {
				t.Fatalf("HEAD Content-Length %q", head.Header.Get("Content-Length"))
			}
			if tt.stable && n != len(getBody) {
				t.Errorf("HEAD Content-Length %d, the GET body has %d bytes", n, len(getBody))
			}
			if !generatedID.MatchString(get.Header.Get(RequestIDHeader)) || !generatedID.MatchString(head.Header.Get(RequestIDHeader)) ||
				get.Header.Get(RequestIDHeader) == head.Header.Get(RequestIDHeader) {
				t.Errorf("request ids %q and %q", get.Header.Get(RequestIDHeader), head.Header.Get(RequestIDHeader))
			}
		})
	}
	// The access log says HEAD, not the GET that served it.
	var heads int
	for _, l := range r.logs.lines() {
		if l["msg"] == "request" && l["method"] == "HEAD" {
			heads++
		}
	}
	if heads != len(tests) {
		t.Errorf("%d HEAD lines in the access log, want %d", heads, len(tests))
	}
}

// A wrong method on a known route is 405 with Allow listing its methods
// (HEAD beside GET); on an unknown route it is 404. HEAD of a route that
// has no GET is 405 too.
func TestMethodNotAllowedHasAllow(t *testing.T) {
	r := startHygiene(t)
	tests := []struct {
		method, path, allow string
	}{
		{method: "POST", path: "/healthz", allow: "GET, HEAD"},
		{method: "DELETE", path: "/readyz", allow: "GET, HEAD"},
		{method: "POST", path: "/metrics", allow: "GET, HEAD"},
		{method: "PUT", path: Prefix + "/tools/catalog", allow: "GET, HEAD"},
		{method: "GET", path: Prefix + "/tools/some_tool/run", allow: "POST"},
		{method: "HEAD", path: Prefix + "/tools/some_tool/run", allow: "POST"},
		// GET /tools/compute is the descriptor route of a tool id
		// "compute" (none: a 404 of that route), so GET is listed.
		{method: "DELETE", path: Prefix + "/tools/compute", allow: "GET, HEAD, POST"},
		{method: "PATCH", path: Prefix + "/tools/some_tool", allow: "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp, body := r.do(tt.method, tt.path, false)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tt.allow {
				t.Fatalf("%d Allow %q, want 405 Allow %q\n%s", resp.StatusCode, resp.Header.Get("Allow"), tt.allow, body)
			}
			if tt.method == "HEAD" {
				return
			}
			var p Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Code != "method_not_allowed" ||
				p.Instance != InstancePrefix+resp.Header.Get(RequestIDHeader) {
				t.Errorf("problem %s", body)
			}
		})
	}
	if resp, _ := r.do("POST", "/nowhere", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /nowhere: %d, want 404", resp.StatusCode)
	}
}

// Every answer has a request id, generated unless a trusted proxy sent a
// well-formed one; problem documents carry it as instance, access-log
// lines as request_id, and a panic's 500 has it too.
func TestRequestIDOnEveryAnswer(t *testing.T) {
	r := startHygiene(t) // no trusted proxy
	r.api.engine.GET("/panics", func(*gin.Context) { panic("a bug") })
	tests := []struct {
		name, method, path string
		status             int
		problem            bool
	}{
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "HEAD", path: "/readyz", status: 200},
		{name: "metrics", method: "GET", path: "/metrics", status: 200},
		{name: "404", method: "GET", path: "/nowhere", status: 404, problem: true},
		{name: "405", method: "POST", path: "/healthz", status: 405, problem: true},
		{name: "401", method: "GET", path: Prefix + "/tools/catalog", status: 401, problem: true},
		{name: "500", method: "GET", path: "/panics", status: 500, problem: true},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A client's own id is not believed from an untrusted peer.
			resp, body := r.do(tt.method, tt.path, false, RequestIDHeader, "client-chosen")
			id := resp.Header.Get(RequestIDHeader)
			if resp.StatusCode != tt.status || !generatedID.MatchString(id) || seen[id] {
				t.Fatalf("%d with id %q, want %d and a new generated id", resp.StatusCode, id, tt.status)
			}
			seen[id] = true
			if tt.problem {
				var p Problem
				if err := json.Unmarshal(body, &p); err != nil || p.Instance != InstancePrefix+id {
					t.Errorf("instance of %s, want %s", body, InstancePrefix+id)
				}
			}
			if !slices.ContainsFunc(r.logs.lines(), func(l map[string]any) bool {
				return l["msg"] == "request" && l["request_id"] == id && l["status"] == float64(tt.status)
			}) {
				t.Errorf("no access-log line with request_id %s and status %d", id, tt.status)
			}
		})
	}
}

// A trusted proxy's X-Request-Id is taken when it is one well-formed value;
// otherwise, or from anyone else, the id is generated.
func TestRequestIDFromTrustedProxy(t *testing.T) {
	r := startHygiene(t, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	long := strings.Repeat("a", MaxRequestIDBytes)
	tests := []struct {
		name   string
		header []string
		want   string // "" for a generated id
	}{
		{name: "a UUID", header: []string{RequestIDHeader, "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b"}, want: "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b"},
		{name: "a trace id", header: []string{RequestIDHeader, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, want: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{name: "base64 and colons", header: []string{RequestIDHeader, "edge:Zm9v+YmFy/=="}, want: "edge:Zm9v+YmFy/=="},
		{name: "the longest", header: []string{RequestIDHeader, long}, want: long},
		{name: "too long", header: []string{RequestIDHeader, long + "a"}},
		{name: "a space", header: []string{RequestIDHeader, "a b"}},
		{name: "a quote", header: []string{RequestIDHeader, `a"b`}},
		{name: "non-ASCII", header: []string{RequestIDHeader, "idé"}},
		{name: "two values", header: []string{RequestIDHeader, "one", RequestIDHeader, "two"}},
		{name: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := r.do("GET", "/nowhere", false, tt.header...)
			id := resp.Header.Get(RequestIDHeader)
			if tt.want != "" && id != tt.want || tt.want == "" && !generatedID.MatchString(id) {
				t.Fatalf("id %q, want %q (\"\" for generated)", id, tt.want)
			}
			var p Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Instance != InstancePrefix+id {
				t.Errorf("problem %s", body)
			}
		})
	}
}

// A refusal's abuse row carries the request ids of its first and last
// events, the ids their answers gave.
func TestAbuseRowCarriesRequestIDs(t *testing.T) {
	r := startHygiene(t)
	var ids []string
	for range 3 {
		resp, body := r.do("GET", Prefix+"/tools", false, "Authorization", "Bearer th_not_a_token")
		var p Problem
		if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != http.StatusUnauthorized ||
			p.Instance != InstancePrefix+resp.Header.Get(RequestIDHeader) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		ids = append(ids, resp.Header.Get(RequestIDHeader))
	}
	rows, err := r.abuse.List(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The three refusals are one row, or two when a minute turned between
	// them.
	var n int64
	for _, row := range rows {
		n += row.Count
	}
	if n != 3 || len(rows) > 2 || rows[0].FirstRequestID != ids[0] || rows[len(rows)-1].LastRequestID != ids[2] {
		t.Fatalf("rows %+v; want the ids %v", rows, ids)
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/testkit"
)

// serveChild runs `toolhost serve` on tools and data (with flags) as a
// child process and returns its address once it is ready; the test's end
// stops it.
func serveChild(t *testing.T, tools, data string, flags ...string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", addr, "--tools-dir", tools,
		"--data-dir", data, "--cache-dir", t.TempDir(), "--log-format", "json"}, flags...)...)
	cmd.Env = append(os.Environ(), "TOOLHOST_TEST_AS_MAIN=1")
	var logs bytes.Buffer
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-done
	})
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return addr
		}
	}
	_ = cmd.Process.Kill()
	<-done
	t.Fatalf("the server never became ready; log:\n%s", logs.String())
	return ""
}

// post sends body to url, with a bearer token when token is set, and
// returns the status and the decoded answer.
func post(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, doc
}

// catalogPins are the catalogue's descriptors by tool code, read with
// token: their pins make compute items that run.
func catalogPins(t *testing.T, base, token string) map[string]map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/tools/catalog", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var catalog struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&catalog); err != nil {
		t.Fatal(err)
	}
	pins := map[string]map[string]any{}
	for _, d := range catalog.Items {
		code, _ := d["tool_code"].(string)
		pins[code] = d
	}
	return pins
}

// issueCodes are the codes of a document's issues, sorted.
func issueCodes(doc map[string]any) []string {
	var codes []string
	list, _ := doc["issues"].([]any)
	for _, is := range list {
		m, _ := is.(map[string]any)
		c, _ := m["code"].(string)
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// TestRefusalsAgreeAcrossSurfaces drives each refusal of a run through
// every surface that can make it — `toolhost run`, the run route, the
// compute route's item — and checks that they give the same reason: each
// its dialect's code, and the same issue codes (issue 28). The jobs and
// legacy routes reach the same use cases (run.App.SubmitJob, Legacy) and
// their refusals are checked in internal/server.
func TestRefusalsAgreeAcrossSurfaces(t *testing.T) {
	// describe_lies.wasm declares the tool "open" with a schema outside
	// the profile: its code is quarantined (definition_invalid).
	tools := toolsDir(t, "ping", "describe_lies")
	data := t.TempDir()
	t.Setenv(dataDirEnv, "")
	token := newToken(t, "--user", "alice", "--data-dir", data)
	addr := serveChild(t, tools, data)

	// The live pins of ping, for its compute items.
	pins := catalogPins(t, "http://"+addr, token)
	if pins["ping"] == nil {
		t.Fatal("the catalogue lacks ping")
	}

	tests := []struct {
		name, tool, params string
		// The code each surface answers with: the command line's and the
		// compute item's error code, the run route's status and problem.
		cli, compute string
		status       int
		problem      string
		// issues are the issue codes every surface gives.
		issues []string
	}{
		{name: "page only", tool: "yt", params: `{"operation":"open"}`, cli: "tool_unavailable", compute: "tool_unavailable",
			status: 404, problem: "tools.tool.not_runnable", issues: []string{"page_only"}},
		{name: "quarantined", tool: "open", params: `{"operation":"open"}`, cli: "tool_unavailable", compute: "tool_unavailable",
			status: 503, problem: "tools.tool.unavailable", issues: []string{"definition_invalid"}},
		{name: "no such tool", tool: "nope", params: `{"operation":"x"}`, cli: "unknown_tool", compute: "unknown_tool",
			status: 404, problem: "tools.tool.not_found"},
		{name: "invalid input", tool: "ping", params: `{"operation":"ping","x":1}`, cli: "invalid_parameters", compute: "invalid_parameters",
			status: 422, problem: "tools.run.invalid_input", issues: []string{"additional_properties"}},
		// Over the platform's 128 KiB of parameters, within the 1 MiB body.
		{name: "input too large", tool: "ping", params: `{"operation":"ping","pad":"` + strings.Repeat("a", 140_000) + `"}`,
			cli: "input_limit_exceeded", compute: "input_limit_exceeded", status: 413, problem: "tools.run.payload_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The command line.
			var stdout, stderr bytes.Buffer
			run([]string{"run", tt.tool, "--tools-dir", tools, "--cache-dir", t.TempDir()}, strings.NewReader(tt.params), &stdout, &stderr)
			var cli map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &cli); err != nil {
				t.Fatalf("toolhost run: %q %q", stdout.String(), stderr.String())
			}
			// The run route.
			status, problem := post(t, "http://"+addr+"/api/v1/tools/"+tt.tool+"/run", "", `{"input":`+tt.params+`}`)
			// The compute route's item.
			p := pins[tt.tool]
			pin := func(k string) string {
				if v, ok := p[k].(string); ok {
					return v
				}
				return map[string]string{"contract_version": "1.0.0", "implementation_version": "1.0.0",
					"schema_fingerprint": strings.Repeat("0", 64)}[k]
			}
			batch := `{"request_id":"r1","items":[{"correlation_id":"c1","tool_code":"` + tt.tool +
				`","contract_version":"` + pin("contract_version") + `","implementation_version":"` + pin("implementation_version") +
				`","schema_fingerprint":"` + pin("schema_fingerprint") + `","parameters":` + tt.params + `}]}`
			cstatus, computed := post(t, "http://"+addr+"/api/v1/tools/compute", token, batch)
			if cstatus != http.StatusOK {
				t.Fatalf("compute: %d %v", cstatus, computed)
			}
			results, _ := computed["results"].([]any)
			if len(results) != 1 {
				t.Fatalf("compute: %v", computed)
			}
			item, _ := results[0].(map[string]any)["error"].(map[string]any)

			if cli["code"] != tt.cli {
				t.Errorf("toolhost run: %v, want %s", cli, tt.cli)
			}
			if status != tt.status || problem["code"] != tt.problem {
				t.Errorf("run route: %d %v, want %d %s", status, problem, tt.status, tt.problem)
			}
			if item["code"] != tt.compute {
				t.Errorf("compute item: %v, want %s", item, tt.compute)
			}
			if tt.name == "no such tool" {
				// A job whose type no tool runs, and a legacy route no
				// tool answers: not found either, in their codes.
				status, problem := post(t, "http://"+addr+"/api/v1/jobs", "", `{"type":"nope","input":{"tool":"x"}}`)
				if status != 404 || problem["code"] != "tools.tool.not_found" {
					t.Errorf("jobs route: %d %v, want 404 tools.tool.not_found", status, problem)
				}
				status, problem = post(t, "http://"+addr+"/api/process", token, `{"tool":"nope"}`)
				if status != 404 || problem["code"] != "legacy_not_found" {
					t.Errorf("legacy route: %d %v, want 404 legacy_not_found", status, problem)
				}
			}
			for surface, got := range map[string][]string{"toolhost run": issueCodes(cli), "run route": issueCodes(problem), "compute": issueCodes(item)} {
				if !slices.Equal(got, tt.issues) {
					t.Errorf("%s gives the issues %v, want %v", surface, got, tt.issues)
				}
			}
		})
	}
}

// TestAnonymousRefusedAlike checks that a tool which needs a signed-in
// caller (pdf_protect, a job tool) refuses an anonymous one with the same
// reason on every route that reaches it — its run route, the jobs route
// and its legacy route — before a byte of the body is read. The command
// line is not a caller of the guard, and the compute route needs a token.
func TestAnonymousRefusedAlike(t *testing.T) {
	testkit.RequireEngines(t, "pdf", pdf.Package().MissingEngines())
	tools := toolsDir(t, "ping")
	t.Setenv(dataDirEnv, "")
	addr := serveChild(t, tools, t.TempDir())
	for route, body := range map[string]string{
		"/api/v1/tools/pdf_protect/run": `{"input":{}}`,
		"/api/v1/jobs":                  `{"type":"pdf","input":{"tool":"protect"}}`,
		"/api/process":                  `{"tool":"protect"}`,
	} {
		status, problem := post(t, "http://"+addr+route, "", body)
		if status != http.StatusUnauthorized || problem["code"] != "tools.caller.unauthenticated" {
			t.Errorf("%s: %d %v, want 401 tools.caller.unauthenticated", route, status, problem)
		}
	}
}

// TestGuardRefusalsAlike checks that the guard's refusals of one caller
// give the same reason on every route that reaches the tool: a spent
// tools-run allowance on the run route and the compute route (one bucket
// for both), and a job tool whose cost exceeds the tools-job allowance on
// its run route, the jobs route and its legacy route.
func TestGuardRefusalsAlike(t *testing.T) {
	testkit.RequireEngines(t, "pdf", pdf.Package().MissingEngines())
	tools := toolsDir(t, "ping")
	data := t.TempDir()
	t.Setenv(dataDirEnv, "")
	token := newToken(t, "--user", "alice", "--data-dir", data)
	quotas := filepath.Join(t.TempDir(), "quotas.json")
	cells := func(user string) string {
		return `{"anonymous": {"burst": 5, "per_minute": 1}, "session": {"burst": 5, "per_minute": 1}, "user": ` + user +
			`, "app": {"burst": 5, "per_minute": 1}, "sandbox": {"burst": 5, "per_minute": 1}}`
	}
	table := `{"classes": {"tools-run": ` + cells(`{"burst": 1, "per_minute": 1}`) +
		`, "tools-job": ` + cells(`{"burst": 1, "per_minute": 1}`) + `}}`
	if err := os.WriteFile(quotas, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := serveChild(t, tools, data, "--guard", "enforce", "--quota-table", quotas)
	base := "http://" + addr

	// The allowance's one run, then the same refusal on both routes.
	if status, doc := post(t, base+"/api/v1/tools/ping/run", token, `{"input":{"operation":"ping"}}`); status != http.StatusOK {
		t.Fatalf("the allowed run: %d %v", status, doc)
	}
	status, doc := post(t, base+"/api/v1/tools/ping/run", token, `{"input":{"operation":"ping"}}`)
	if status != http.StatusTooManyRequests || doc["code"] != "tools.caller.quota_exceeded" {
		t.Errorf("run route: %d %v, want 429 tools.caller.quota_exceeded", status, doc)
	}
	p := catalogPins(t, base, token)["ping"]
	batch := `{"request_id":"r1","items":[{"correlation_id":"c1","tool_code":"ping","contract_version":"` + p["contract_version"].(string) +
		`","implementation_version":"` + p["implementation_version"].(string) + `","schema_fingerprint":"` + p["schema_fingerprint"].(string) +
		`","parameters":{"operation":"ping"}}]}`
	status, doc = post(t, base+"/api/v1/tools/compute", token, batch)
	if status != http.StatusTooManyRequests || doc["code"] != "quota_exceeded" ||
		doc["type"] != "https://toolhost.dev/problems/tools.caller.quota_exceeded" {
		t.Errorf("compute route: %d %v, want 429 quota_exceeded of the type tools.caller.quota_exceeded", status, doc)
	}

	// pdf_protect costs 2, over the tools-job burst of 1: refused before
	// its body is read or its input checked, on every route.
	for route, body := range map[string]string{
		"/api/v1/tools/pdf_protect/run": `{"input":{}}`,
		"/api/v1/jobs":                  `{"type":"pdf","input":{"tool":"protect"}}`,
		"/api/process":                  `{"tool":"protect-pdf"}`,
	} {
		status, doc := post(t, base+route, token, body)
		if status != http.StatusForbidden || doc["code"] != "tools.caller.forbidden" {
			t.Errorf("%s: %d %v, want 403 tools.caller.forbidden", route, status, doc)
		}
	}
}

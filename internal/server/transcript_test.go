package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// TestTranscript records one golden transcript per case (testdata/http,
// README.md there): every route's success and its refusals, on one real
// server on loopback with the bundled modules of `make wasm`, the native
// engines, the guard in enforce mode with a small tools-run allowance and
// a frozen clock. Each case makes its own callers, so that its quota
// counters (RateLimit) do not depend on the cases before it; anonymous
// callers get an address of their own through a trusted proxy.
func TestTranscript(t *testing.T) {
	r := startTranscripts(t)
	seen := map[string]bool{}
	for i, c := range transcriptCases {
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			tr := &transcript{t: t, r: r, index: i, tokens: map[string]string{}}
			tr.note("%s", c.title)
			c.run(tr)
			checkGolden(t, c.name, tr.text.String())
		})
	}
	// A golden file no case writes any more is stale.
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden")
		if seen[name] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("%s belongs to no case (-update removes it)", f)
	}
}

// transcriptClock is when the guard's clock stands still: nothing refills
// during the cases, so that RateLimit and Retry-After are the same on
// every run.
var transcriptClock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// transcriptTable is the default quota table, with tools-run cut to 8
// runs (of cost 1, the bundled tools') for users and 1 for sandbox apps,
// so that a case reaches the refusals in a few requests.
func transcriptTable() *guard.Table {
	t := guard.DefaultTable()
	c := t.Classes[guard.ClassRun]
	c.User = guard.Allowance{Burst: 8, PerMinute: 1, ConcurrentPerCaller: 16}
	c.Sandbox = guard.Allowance{Burst: 1, PerMinute: 1, ConcurrentPerCaller: 2}
	t.Classes[guard.ClassRun] = c
	return &t
}

// startTranscripts runs the server of the transcripts.
func startTranscripts(t *testing.T) *rig {
	t.Helper()
	modules := builtModules(t)
	r := startConfigured(t, modules, true, func(c *server.Config) {
		// The folder does not change during the cases: no rescan may
		// start a load that diagnostics would list.
		c.Rescan = time.Hour
		c.Natives = append(testNatives(), absentEngine())
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		c.Guard = server.GuardConfig{
			Mode: guard.Enforce, Quotas: transcriptTable(),
			Now:     func() time.Time { return transcriptClock },
			Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		}
	})
	// Every load of the folder has ended before the first case.
	deadline := time.Now().Add(5 * time.Minute)
	for len(r.srv.Registry().Loading()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("loads still running: %+v", r.srv.Registry().Loading())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

// builtModules reads the bundled modules `make wasm` built into wasm/.
// Without them the test is skipped, except under CI=true, where it fails.
func builtModules(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testkit.Root(), "wasm", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no bundled modules in wasm/: run make wasm")
		}
		t.Skip("no bundled modules in wasm/: run make wasm")
	}
	modules := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		modules[filepath.Base(p)] = b
	}
	return modules
}

// absentEngine is a native sync tool whose engine is not installed, so
// that the transcripts show a tool unavailable for engine_missing (the
// real engines are all installed where the tests run).
func absentEngine() *native.Package {
	type in struct {
		Operation string `json:"operation"`
		Text      string `json:"text"`
	}
	type out struct {
		Text string `json:"text"`
	}
	texts := map[string]guest.Text{}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		texts[lang] = guest.Text{Name: "Absent engine", Description: "Needs an engine this host lacks, for tests."}
	}
	decl, err := guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[in, out]{
			Code: "absent_engine", Name: "Absent engine", Description: "Needs an engine this host lacks, for tests.",
			Texts: texts, Category: "test", IconKey: "absent",
			UI:            guest.UI{Kind: "custom", ComponentKey: "absent", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/absent_engine", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "echo"}},
			Platform:      &guest.Platform{Execution: "sync", QuotaClass: "tools-run", Cost: 1},
			Compute:       native.InWorker[in, out],
		}}}.Declaration()
	if err != nil {
		panic(err)
	}
	return &native.Package{Name: "absent", Declaration: decl, Engines: []string{"toolhost-transcript-absent-engine"},
		Compute: func(*native.Context, native.Call) ([]byte, error) {
			return nil, toolerr.New(toolerr.ExecutionFailed)
		}}
}

// user makes a user account of its own for this case and its token,
// recorded as <token:label>.
func (tr *transcript) user(label string, capabilities ...string) {
	tr.t.Helper()
	token, err := tr.r.srv.Accounts().CreateUserToken(context.Background(), tr.t.Name()[len("TestTranscript/"):]+"."+label, capabilities)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.tokens[label] = token
}

// app makes an app of its own for this case and its token.
func (tr *transcript) app(label string, sandbox bool) {
	tr.t.Helper()
	token, err := tr.r.srv.Accounts().CreateAppToken(context.Background(), tr.t.Name()[len("TestTranscript/"):]+"."+label, nil, sandbox)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.tokens[label] = token
}

// anonymous is the X-Forwarded-For header that gives an anonymous
// caller of this case an address of its own (the proxy on 127.0.0.1 is
// trusted).
func (tr *transcript) anonymous() [2]string {
	return [2]string{"X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", 100+tr.index/250, 1+tr.index%250)}
}

// jsonBody is a JSON request of caller (a label, or "" for none).
func jsonBody(method, path, caller, body string) txRequest {
	return txRequest{method: method, path: path, token: caller,
		header: [][2]string{{"Content-Type", "application/json"}}, body: []byte(body)}
}

// item is a compute item of code pinned to the live catalogue.
func (tr *transcript) item(correlation, code string, params any) map[string]any {
	tr.t.Helper()
	return tr.r.item(correlation, code, params)
}

// batch is a compute request body.
func (tr *transcript) batch(id string, items ...map[string]any) string {
	tr.t.Helper()
	return string(encode(tr.t, map[string]any{"request_id": id, "items": items}))
}

// expect fails the case when a setup step did not get status.
func (tr *transcript) expect(a txAnswer, status int, what string) {
	tr.t.Helper()
	if a.status != status {
		tr.t.Fatalf("%s: %d %s, want %d", what, a.status, a.body, status)
	}
}

// pdf is a PDF of testdata/pdf as a file part.
func (tr *transcript) pdf(part, name string) txPart {
	return txPart{name: part, filename: name, contentType: "application/pdf",
		content: readPDF(tr.t, name), shown: "<testdata/pdf/" + name + ">"}
}

// protectInput is pdf_protect's input in the cases.
const protectInput = `{"tool":"protect","user_password":"open sesame","owner_password":"owner secret"}`

// submitProtect submits a pdf_protect job as caller (not recorded) and
// waits until it is final; it returns the job's id.
func (tr *transcript) submitProtect(caller string) string {
	tr.t.Helper()
	a := tr.send(txRequest{method: "POST", path: "/api/v1/jobs", token: caller, parts: []txPart{
		{name: "job", content: []byte(`{"type":"pdf","input":` + protectInput + `}`)},
		tr.pdf("file", "letter_3pages.pdf"),
	}})
	tr.expect(a, http.StatusAccepted, "submitting a pdf_protect job")
	id := a.field("id")
	tr.awaitFinal(caller, id)
	return id
}

// awaitFinal waits until job id of caller is final.
func (tr *transcript) awaitFinal(caller, id string) {
	tr.t.Helper()
	eventually(tr.t, "job "+id+" is final", func() bool {
		a := tr.send(txRequest{method: "GET", path: "/api/v1/jobs/" + id, token: caller})
		tr.expect(a, http.StatusOK, "polling the job")
		s := a.field("state")
		return s == "succeeded" || s == "failed" || s == "cancelled"
	})
}

// runUntilRefused runs hash as caller until a run is refused and returns
// how many were admitted; the refused run is not sent again.
func (tr *transcript) runUntilRefused(req txRequest, most int) int {
	tr.t.Helper()
	for n := range most {
		if a := tr.send(req); a.status != http.StatusOK {
			tr.t.Fatalf("run %d refused before the allowance was spent: %d %s", n+1, a.status, a.body)
		}
	}
	return most
}

const hashInput = `{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`

// hashParams are the hash tool's parameters in compute items.
var hashParams = map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"}

// transcriptCase is one golden file.
type transcriptCase struct {
	name, title string
	run         func(tr *transcript)
}

var transcriptCases = []transcriptCase{
	// Probes.
	{"healthz", "GET /healthz: the process is up.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/healthz"})
	}},
	{"healthz-head", "HEAD /healthz (RFC 9110 §9.1: HEAD wherever GET is served).", func(tr *transcript) {
		tr.do(txRequest{method: "HEAD", path: "/healthz"})
	}},
	{"readyz", "GET /readyz while serving.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/readyz"})
	}},

	// The seed-000 routes.
	{"catalog", "GET /api/v1/tools/catalog: the seed-000 catalogue.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/catalog", token: "alice"})
	}},
	{"catalog-unauthorized", "GET /api/v1/tools/catalog without a token: 401.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/catalog"})
	}},
	{"compute-success", "POST /api/v1/tools/compute: a batch of two tools, both succeed.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-42",
			tr.item("a", "hash", hashParams),
			tr.item("b", "case", map[string]any{"operation": "convert", "text": "hello world", "to": "constant"}))))
	}},
	{"compute-item-errors", "Compute items refused one by one: an unknown tool, a stale pin, invalid parameters,\n" +
		"a tool whose engine is missing; the batch is answered 200.", func(tr *transcript) {
		tr.user("alice")
		unknown := tr.item("unknown", "hash", hashParams)
		unknown["tool_code"] = "nope"
		stale := tr.item("stale", "hash", hashParams)
		stale["schema_fingerprint"] = strings.Repeat("0", 64)
		invalid := tr.item("invalid", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "md4"})
		absent := map[string]any{"correlation_id": "absent", "tool_code": "absent_engine",
			"contract_version": "1.0.0", "implementation_version": "1.0.0", "schema_fingerprint": strings.Repeat("a", 64),
			"parameters": map[string]any{"operation": "echo", "text": "x"}}
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-errors", unknown, stale, invalid, absent)))
	}},
	{"compute-tool-error", "Compute: base64 decode of \"!!!\" (the tool's own error) and a page-only tool.", func(tr *transcript) {
		tr.user("alice")
		page := tr.item("page", "hash", map[string]any{"operation": "digest"})
		page["tool_code"] = "yt"
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-tool-error",
			tr.item("decode", "base64", map[string]any{"operation": "decode", "text": "!!!"}), page)))
	}},
	{"compute-invalid-json", "Compute: a body that is not JSON: 400 invalid_json.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", `{"request_id": "req-1", "items": [`))
	}},
	{"compute-duplicate-member", "Compute: a duplicate member name is not strict JSON: 400 invalid_json.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", `{"request_id": "a", "request_id": "b", "items": []}`))
	}},
	{"compute-invalid-envelope", "Compute: duplicate correlation ids: 422 invalid_envelope.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-dup",
			tr.item("a", "hash", hashParams), tr.item("a", "hash", hashParams))))
	}},
	{"compute-empty-batch", "Compute: no items: 422 invalid_envelope.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", `{"request_id":"req-empty","items":[]}`))
	}},
	{"compute-payload-too-large", "Compute: a body over max_request_body_bytes (1 MiB): 413.", func(tr *transcript) {
		tr.user("alice")
		req := jsonBody("POST", "/api/v1/tools/compute", "alice", bigBody())
		req.shown = bigShown
		tr.do(req)
	}},
	{"compute-unauthorized", "Compute without a token: 401.", func(tr *transcript) {
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "", `{"request_id":"req-1","items":[]}`))
	}},
	{"compute-bad-token", "Compute with a token that does not resolve: 401.", func(tr *transcript) {
		req := jsonBody("POST", "/api/v1/tools/compute", "", `{"request_id":"req-1","items":[]}`)
		req.authorization = "Bearer thk_not-a-token"
		tr.do(req)
	}},
	{"compute-bearer-two-spaces", "Compute with \"Bearer  <token>\" (two spaces) of a valid token.", func(tr *transcript) {
		tr.user("alice")
		req := jsonBody("POST", "/api/v1/tools/compute", "", tr.batch("req-1", tr.item("a", "hash", hashParams)))
		req.authorization, req.authorizationShown = "Bearer  "+tr.tokens["alice"], "Bearer  <token:alice>"
		tr.do(req)
	}},
	{"compute-forbidden-capability", "Compute: a network probe for a token without tools.net.probe.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-probe",
			tr.item("probe", "dns_lookup", map[string]any{"operation": "lookup", "name": "localhost", "types": []string{"A"}}))))
	}},
	{"compute-quota-exceeded", "Compute: a batch over the user's tools-run allowance (8 runs) after 2 batches of 4: 429.", func(tr *transcript) {
		tr.user("alice")
		items := func() []map[string]any {
			var items []map[string]any
			for i := range 4 {
				items = append(items, tr.item(fmt.Sprintf("c-%d", i), "hash", hashParams))
			}
			return items
		}
		for i := range 2 {
			tr.expect(tr.send(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch(fmt.Sprintf("req-%d", i), items()...))),
				http.StatusOK, "a batch within the allowance")
		}
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "alice", tr.batch("req-over", items()[:1]...)))
	}},
	{"compute-cost-exceeds-allowance", "Compute: a batch of 2 runs for a sandbox app, whose burst is 1: it can never fit.", func(tr *transcript) {
		tr.app("sandbox", true)
		tr.do(jsonBody("POST", "/api/v1/tools/compute", "sandbox", tr.batch("req-sandbox",
			tr.item("a", "hash", hashParams), tr.item("b", "hash", hashParams))))
	}},
	{"compute-get", "GET /api/v1/tools/compute: the route takes POST only.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/compute", token: "alice"})
	}},
	{"diagnostics", "GET /api/v1/tools/diagnostics.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/diagnostics", token: "alice"})
	}},

	// The ADR-027 registry.
	{"tools-list", "GET /api/v1/tools: every descriptor.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools", header: [][2]string{tr.anonymous()}})
	}},
	{"tool-hash", "GET /api/v1/tools/hash: one descriptor with its schemas.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/hash", header: [][2]string{tr.anonymous()}})
	}},
	{"tool-hash-schema", "GET /api/v1/tools/hash/schema.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/hash/schema", header: [][2]string{tr.anonymous()}})
	}},
	{"tool-not-found", "GET /api/v1/tools/nope: 404.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/nope", header: [][2]string{tr.anonymous()}})
	}},
	{"tool-unavailable", "GET /api/v1/tools/absent_engine: a tool whose engine is missing.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/tools/absent_engine", header: [][2]string{tr.anonymous()}})
	}},
	{"openapi", "GET /openapi.json: the OpenAPI document of the live descriptors.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/openapi.json", header: [][2]string{tr.anonymous()}})
	}},
	{"contract-run", "GET /api/v1/contracts/tools.run.v1.json.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/contracts/tools.run.v1.json", header: [][2]string{tr.anonymous()}})
	}},

	// The ADR-027 run route.
	{"run-hash", "POST /api/v1/tools/hash/run as a user.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/hash/run", "alice", hashInput))
	}},
	{"run-hash-anonymous", "POST /api/v1/tools/hash/run without a credential: the anonymous caller.", func(tr *transcript) {
		req := jsonBody("POST", "/api/v1/tools/hash/run", "", hashInput)
		req.header = append(req.header, tr.anonymous())
		tr.do(req)
	}},
	{"run-base64-decode-failure", "POST /api/v1/tools/base64/run: decode of \"!!!\", valid input the tool itself refuses.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/base64/run", "alice", `{"input":{"operation":"decode","text":"!!!"}}`))
	}},
	{"run-pac-plan", "POST /api/v1/tools/pac_allocator/run: a sync native tool (cbc).", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/pac_allocator/run", "alice", `{"input":{"operation":"plan","currency":"EUR","contribution":"1000",`+
			`"holdings":[{"instrument_id":"A","quantity":"10","price":"40","currency":"EUR"},{"instrument_id":"B","quantity":"4","price":"150","currency":"EUR"},`+
			`{"instrument_id":"C","quantity":"0","price":"70","currency":"EUR"}],`+
			`"targets":[{"instrument_id":"A","weight":"0.5"},{"instrument_id":"B","weight":"0.3"},{"instrument_id":"C","weight":"0.2"}],`+
			`"fees":{"fixed":"1","proportional":"0.01","minimum":"5"}}}`))
	}},
	{"run-invalid-request", "Run: a body that is not JSON: 400.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/hash/run", "alice", `{"input":`))
	}},
	{"run-not-a-run-request", "Run: an unknown member beside input: 400.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/hash/run", "alice", `{"input":{"operation":"digest","text":"abc"},"extra":1}`))
	}},
	{"run-invalid-input", "Run: input that fails the tool's schema: 422.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/hash/run", "alice", `{"input":{"operation":"digest","text":"abc","algorithm":"md4","colour":"red"}}`))
	}},
	{"run-unsupported-media-type", "Run: a form content type (what curl -d sends): 415.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "POST", path: "/api/v1/tools/hash/run", token: "alice",
			header: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, body: []byte(hashInput)})
	}},
	{"run-payload-too-large", "Run: a body over max_request_body_bytes (1 MiB): 413.", func(tr *transcript) {
		tr.user("alice")
		req := jsonBody("POST", "/api/v1/tools/hash/run", "alice", bigBody())
		req.shown = bigShown
		tr.do(req)
	}},
	{"run-tool-not-found", "Run: no tool has this id: 404.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/nope/run", "alice", hashInput))
	}},
	{"run-not-runnable", "Run: a page-only tool (yt): 404.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/yt/run", "alice", `{"input":{}}`))
	}},
	{"run-tool-unavailable", "Run: a tool whose engine is missing: 503.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/absent_engine/run", "alice", `{"input":{"operation":"echo","text":"x"}}`))
	}},
	{"run-quota-exceeded", "Run: the 9th run of a user whose tools-run allowance is 8: 429.", func(tr *transcript) {
		tr.user("alice")
		req := jsonBody("POST", "/api/v1/tools/hash/run", "alice", hashInput)
		tr.runUntilRefused(req, 8)
		tr.do(req)
	}},
	{"run-unauthenticated", "Run with a token that does not resolve: 401, never downgraded to anonymous.", func(tr *transcript) {
		req := jsonBody("POST", "/api/v1/tools/hash/run", "", hashInput)
		req.authorization = "Bearer thk_not-a-token"
		tr.do(req)
	}},
	{"run-bearer-two-spaces", "Run with \"Bearer  <token>\" (two spaces).", func(tr *transcript) {
		tr.user("alice")
		req := jsonBody("POST", "/api/v1/tools/hash/run", "", hashInput)
		req.authorization, req.authorizationShown = "Bearer  "+tr.tokens["alice"], "Bearer  <token:alice>"
		tr.do(req)
	}},
	{"run-forbidden-capability", "Run: a network probe for a token without tools.net.probe: 403.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/dns_lookup/run", "alice", `{"input":{"operation":"lookup","name":"localhost","types":["A"]}}`))
	}},
	{"run-probe-anonymous", "Run: a network probe without a credential: 401.", func(tr *transcript) {
		req := jsonBody("POST", "/api/v1/tools/dns_lookup/run", "", `{"input":{"operation":"lookup","name":"localhost","types":["A"]}}`)
		req.header = append(req.header, tr.anonymous())
		tr.do(req)
	}},
	{"run-wrong-method", "PUT /api/v1/tools/hash/run: a known route, a wrong method.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("PUT", "/api/v1/tools/hash/run", "alice", hashInput))
	}},
	{"run-pdf-protect", "POST /api/v1/tools/pdf_protect/run: a job tool's run, multipart, waiting for the job.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "POST", path: "/api/v1/tools/pdf_protect/run", token: "alice", parts: []txPart{
			{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
			{name: "wait_ms", content: []byte("30000")},
			tr.pdf("file", "letter_3pages.pdf"),
		}})
	}},
	{"run-pdf-protect-json", "POST /api/v1/tools/pdf_protect/run as JSON without its file: the job fails or is refused.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/tools/pdf_protect/run", "alice",
			`{"input":{"user_password":"open sesame","owner_password":"owner secret"},"wait_ms":30000}`))
	}},

	// Jobs.
	{"jobs-submit", "POST /api/v1/jobs: a pdf_protect job, multipart: 202 with Location.", func(tr *transcript) {
		tr.user("alice")
		a := tr.do(txRequest{method: "POST", path: "/api/v1/jobs", token: "alice", parts: []txPart{
			{name: "job", content: []byte(`{"type":"pdf","input":` + protectInput + `}`)},
			tr.pdf("file", "letter_3pages.pdf"),
		}})
		// The job is left to finish before the next case.
		tr.awaitFinal("alice", a.field("id"))
	}},
	{"jobs-get", "GET /api/v1/jobs/:id of a finished job.", func(tr *transcript) {
		tr.user("alice")
		id := tr.submitProtect("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/jobs/" + id, token: "alice"})
	}},
	{"jobs-events", "GET /api/v1/jobs/:id/events of a finished job: its final state, then the end.", func(tr *transcript) {
		tr.user("alice")
		id := tr.submitProtect("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/jobs/" + id + "/events", token: "alice"})
	}},
	{"jobs-file", "GET a result file: by its owner, through its signed URL, with its signature altered.", func(tr *transcript) {
		tr.user("alice")
		id := tr.submitProtect("alice")
		var job struct {
			Files []struct {
				Name, URL string
			}
		}
		a := tr.send(txRequest{method: "GET", path: "/api/v1/jobs/" + id, token: "alice"})
		if err := json.Unmarshal(a.body, &job); err != nil || len(job.Files) != 1 {
			tr.t.Fatalf("the job: %s", a.body)
		}
		tr.do(txRequest{method: "GET", path: "/api/v1/jobs/" + id + "/files/" + job.Files[0].Name, token: "alice"})
		tr.do(txRequest{method: "GET", path: job.Files[0].URL})
		tr.note("The signed URL again, its signature altered (an x before it).")
		tr.do(txRequest{method: "GET", path: strings.Replace(job.Files[0].URL, "sig=", "sig=x", 1)})
	}},
	{"jobs-other-owner", "GET /api/v1/jobs/:id of another owner's job: 404, as a missing one.", func(tr *transcript) {
		tr.user("alice")
		tr.user("bob")
		id := tr.submitProtect("alice")
		tr.do(txRequest{method: "GET", path: "/api/v1/jobs/" + id, token: "bob"})
		tr.note("A job that does not exist, for comparison.")
		tr.do(txRequest{method: "GET", path: "/api/v1/jobs/job_doesnotexist", token: "bob"})
	}},
	{"jobs-retry-conflict", "POST /api/v1/jobs/:id/retry of a succeeded job: 409.", func(tr *transcript) {
		tr.user("alice")
		id := tr.submitProtect("alice")
		tr.do(txRequest{method: "POST", path: "/api/v1/jobs/" + id + "/retry", token: "alice"})
	}},
	{"jobs-cancel-conflict", "POST /api/v1/jobs/:id/cancel of a succeeded job: 409.", func(tr *transcript) {
		tr.user("alice")
		id := tr.submitProtect("alice")
		tr.do(txRequest{method: "POST", path: "/api/v1/jobs/" + id + "/cancel", token: "alice"})
	}},
	{"jobs-unknown-type", "POST /api/v1/jobs of a type no tool runs: 404.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/jobs", "alice", `{"type":"nope","input":{"tool":"protect"}}`))
	}},
	{"jobs-unsupported-media-type", "POST /api/v1/jobs as text/plain: 415.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "POST", path: "/api/v1/jobs", token: "alice",
			header: [][2]string{{"Content-Type", "text/plain"}}, body: []byte(`{"type":"pdf","input":{"tool":"protect"}}`)})
	}},
	{"jobs-invalid-request", "POST /api/v1/jobs with a body that is not a job document: 400.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/v1/jobs", "alice", `{"kind":"pdf"}`))
	}},

	// Legacy routes.
	{"legacy-dev-hash", "POST /api/dev/hash/digest: a bundled transform through its legacy route.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/dev/hash/digest", "alice", `{"text":"abc","algorithm":"sha256"}`))
	}},
	{"legacy-dev-tool-error", "POST /api/dev/base64/decode of \"!!!\": the tool's own error on a legacy route.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/dev/base64/decode", "alice", `{"text":"!!!"}`))
	}},
	{"legacy-dev-invalid-json", "POST /api/dev/hash/digest with a body that is not JSON.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/dev/hash/digest", "alice", `{"text":`))
	}},
	{"legacy-not-found", "POST /api/dev/nope/x: no tool answers this legacy route.", func(tr *transcript) {
		tr.user("alice")
		tr.do(jsonBody("POST", "/api/dev/nope/x", "alice", `{}`))
	}},
	{"legacy-wrong-method", "GET /api/dev/hash/digest: a legacy path a tool maps for POST only.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "GET", path: "/api/dev/hash/digest", token: "alice"})
	}},
	{"legacy-process-info", "GET /api/process/info: the legacy PDF tools.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "GET", path: "/api/process/info", token: "alice"})
	}},
	{"legacy-process-protect", "POST /api/process: the legacy upload form of protect-pdf.", func(tr *transcript) {
		tr.user("alice")
		tr.do(txRequest{method: "POST", path: "/api/process", token: "alice", parts: []txPart{
			{name: "tool", content: []byte("protect-pdf")},
			{name: "user_password", content: []byte("open sesame")},
			{name: "owner_password", content: []byte("owner secret")},
			tr.pdf("file", "letter_3pages.pdf"),
		}})
	}},

	// Routes that do not exist.
	{"unknown-route", "GET /api/v1/nope: no such route.", func(tr *transcript) {
		tr.do(txRequest{method: "GET", path: "/api/v1/nope"})
	}},
	{"wrong-method", "DELETE /healthz: a known route, a wrong method.", func(tr *transcript) {
		tr.do(txRequest{method: "DELETE", path: "/healthz"})
	}},
}

// bigBody is a JSON body one byte over the platform's 1 MiB cap.
func bigBody() string {
	const prefix, suffix = `{"pad":"`, `"}`
	return prefix + strings.Repeat("a", 1<<20+1-len(prefix)-len(suffix)) + suffix
}

// bigShown is how a transcript records bigBody.
const bigShown = `{"pad":"aaaa…"} (1048577 bytes, one over max_request_body_bytes)`

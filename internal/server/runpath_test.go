package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/wire"
)

// The one run path, end to end (issue 12, "Done means"): the guard alone
// decides a caller's concurrency on the run route, the executor keeps
// only its process capacity (429 with Retry-After on every route), a sync
// tool's own error is a failed run, and a success never carries a
// Retry-After.

// spinRun is a run of the counter test guest that passes checkpoints
// until its context ends: it holds its lane (or its place in the queue)
// until the client goes away.
const spinRun = `{"input":{"operation":"count","spin":0}}`

// runDoc is the part of a tools.run@1 document these tests read.
type runDoc struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkRunDoc checks that body is a tools.run@1 document and decodes it.
func checkRunDoc(t *testing.T, name string, body []byte) runDoc {
	t.Helper()
	doc, err := wire.Decode(body, wire.Limits{})
	if err != nil {
		t.Fatalf("%s: %v in %s", name, err, body)
	}
	if err := contracts.Validate(contracts.RunV1, doc); err != nil {
		t.Errorf("%s: not a tools.run@1 document: %v\n%s", name, err, body)
	}
	var d runDoc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("%s: %v in %s", name, err, body)
	}
	return d
}

// held is a run holding executor capacity until its client goes away.
type held struct {
	cancel context.CancelFunc
	// done receives the run's status once it ended (0 when the client
	// went away first or the request failed); it holds it until read,
	// and whoever reads it puts it back.
	done chan int
}

// hold starts a spinning run of the counter guest as bearer and returns
// at once. Its goroutine never touches the test (no Fatal off the test's
// goroutine): a failure is a status of 0.
func (r *rig) hold(bearer string) *held {
	ctx, cancel := context.WithCancel(context.Background())
	h := &held{cancel: cancel, done: make(chan int, 1)}
	go func() {
		status := 0
		defer func() { h.done <- status }()
		req, err := http.NewRequestWithContext(ctx, "POST", r.url+"/api/v1/tools/counter/run", strings.NewReader(spinRun))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.client.Do(req)
		if err != nil {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	}()
	return h
}

// holdAll starts a holder for each bearer and waits until the executor
// counts them all as pending, failing at once if one of them ends (is
// refused) before. It returns the holders; they are released at the end
// of the test, or earlier by release.
func (r *rig) holdAll(bearers ...string) []*held {
	r.t.Helper()
	n := len(bearers)
	hs := make([]*held, n)
	for i, b := range bearers {
		hs[i] = r.hold(b)
	}
	r.t.Cleanup(func() { release(hs) })
	deadline := time.Now().Add(60 * time.Second)
	for r.pool().Pending != n {
		for i, h := range hs {
			select {
			case status := <-h.done:
				h.done <- status
				r.t.Fatalf("holder %d ended with %d before %d were in flight (pool %+v)", i, status, n, r.pool())
			default:
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting until %d runs are in flight: pool %+v", n, r.pool())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return hs
}

// release makes the holders' clients go away and waits until their
// requests returned. It is safe to call more than once.
func release(hs []*held) {
	for _, h := range hs {
		h.cancel()
	}
	for _, h := range hs {
		status := <-h.done
		h.done <- status
	}
}

// runTable is the default quota table with an app's tools-run cell
// allowing concurrent runs at once and burst runs of cost.
func runTable(concurrent, burst, cost int) *guard.Table {
	t := guard.DefaultTable()
	c := t.Classes[guard.ClassRun]
	c.App = guard.Allowance{Burst: burst * cost, PerMinute: cost, ConcurrentPerCaller: concurrent}
	t.Classes[guard.ClassRun] = c
	return &t
}

// TestRunRouteConcurrentCaller: one app token's concurrent runs on the
// run route are admitted up to the guard's per-caller concurrency, not one
// at a time (the executor's seed-000 per-principal batch limit, 1, no
// longer applies to the run route); the guard refuses the run past it.
func TestRunRouteConcurrentCaller(t *testing.T) {
	cost := hashCost(t)
	p := policy.DefaultPlatform()
	// Room for 8 runs at once, each in a lane, and a ninth item besides.
	p.WorkerLanes, p.MaxPendingItemsPerProcess = 10, 16
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	modules := bundled(t)
	modules["counter.wasm"] = module(t, "testdata/guests/counter")
	r := startConfigured(t, modules, false, func(c *server.Config) {
		c.Platform = p
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: runTable(8, 100, cost), Now: clock.Now}
	})
	app, err := r.srv.Accounts().CreateAppToken(context.Background(), "acme", nil, false)
	if err != nil {
		t.Fatal(err)
	}

	// Eight runs of one app token, started together: all succeed.
	const n = 8
	type answer struct {
		status int
		h      http.Header
		body   []byte
	}
	answers := make([]answer, n)
	var ready, wg sync.WaitGroup
	ready.Add(n)
	barrier := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			ready.Done()
			<-barrier
			status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: app}, []byte(hashRun))
			answers[i] = answer{status, h, body}
		})
	}
	ready.Wait()
	close(barrier)
	wg.Wait()
	for i, a := range answers {
		if a.status != http.StatusOK {
			t.Errorf("concurrent run %d: %d %s", i, a.status, a.body)
			continue
		}
		d := checkRunDoc(t, fmt.Sprintf("concurrent run %d", i), a.body)
		if d.Status != "succeeded" || !strings.Contains(string(d.Result), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
			t.Errorf("concurrent run %d: %s", i, a.body)
		}
		if a.h.Get("RateLimit") == "" || a.h.Get("Retry-After") != "" {
			t.Errorf("concurrent run %d: headers %v", i, a.h)
		}
	}

	// That the runs overlapped is made certain with runs that hold their
	// lane: eight of one app token are in flight at once, every one
	// admitted by the guard and the executor.
	hs := r.holdAll(slices.Repeat([]string{app}, n)...)
	// The ninth is refused by the guard — the caller's concurrency — not
	// by the executor, which still has room: another caller's run
	// succeeds meanwhile.
	status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: app}, []byte(hashRun))
	problemCode(t, "a ninth run of the app", status, h, body, http.StatusTooManyRequests, contracts.ProblemConcurrencyExceeded)
	if !strings.Contains(h.Get("RateLimit"), `"concurrency";r=0;t=1`) {
		t.Errorf("a ninth run of the app: RateLimit %q names no concurrency bound", h.Get("RateLimit"))
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("a ninth run of the app: Retry-After %q", h.Get("Retry-After"))
	}
	status, _, body = r.send("POST", "/api/v1/tools/hash/run", cred{bearer: r.token}, []byte(hashRun))
	if d := checkRunDoc(t, "another caller's run", body); status != http.StatusOK || d.Status != "succeeded" {
		t.Errorf("another caller's run while the app holds 8: %d %s", status, body)
	}
	release(hs)
	eventually(t, "the held runs release their capacity", func() bool {
		p := r.pool()
		return p.Pending == 0 && p.Active == 0
	})
	status, _, body = r.send("POST", "/api/v1/tools/hash/run", cred{bearer: app}, []byte(hashRun))
	if d := checkRunDoc(t, "after the release", body); status != http.StatusOK || d.Status != "succeeded" {
		t.Errorf("the app's run after the release: %d %s", status, body)
	}
}

// TestRunRouteProcessCapacity: the executor's process capacity still
// refuses what it cannot hold — every admitted, unfinished item counts
// against max_pending_items_per_process, the running ones (one per lane)
// and the queued ones; a run beyond them waits for their end, up to the
// bound of waiting runs — past which it is refused with 429 and a
// Retry-After, on the run route as tools.run.overloaded, whoever the
// caller; the compute route refuses at once, as queue_full. The waiting
// run is served when the capacity comes back.
func TestRunRouteProcessCapacity(t *testing.T) {
	p := policy.DefaultPlatform()
	p.WorkerLanes, p.MaxPendingItemsPerProcess = 1, 2
	p.MaxBatchItems, p.MaxPendingItemsPerPrincipal = 2, 2
	// The queued holder waits for the lane far longer than the test
	// needs: its queue deadline must not end it (and free its place)
	// while the refusals are checked.
	p.QueueTimeoutMS, p.EngineTimeoutMS, p.SoftTimeoutMS, p.HardTimeoutMS = 20_000, 28_000, 29_000, 30_000
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	modules := bundled(t)
	modules["counter.wasm"] = module(t, "testdata/guests/counter")
	// The guard enforces the default table, whose concurrency and
	// allowances are far above what this test runs: only the executor
	// refuses here.
	r := startConfigured(t, modules, false, func(c *server.Config) {
		c.Platform = p
		c.Guard = server.GuardConfig{Mode: guard.Enforce}
		c.AdmissionWaiters = 1
	})
	ctx := context.Background()
	app, err := r.srv.Accounts().CreateAppToken(ctx, "acme", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// Two callers hold the capacity, one item each: what refuses the
	// next run is the process's capacity, not a caller's.
	bob, err := r.srv.Accounts().CreateToken(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	hs := r.holdAll(app, bob)
	if pl := r.pool(); pl.Active != p.WorkerLanes {
		t.Errorf("pool %+v, want %d active", pl, p.WorkerLanes)
	}
	type answer struct {
		status int
		body   []byte
	}
	waiter := make(chan answer, 1)
	go func() {
		status, _, body := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: app}, []byte(hashRun))
		waiter <- answer{status, body}
	}()
	eventually(t, "a run waits for the capacity", func() bool { return r.pool().Waiting == 1 })

	// The run route, for the same caller and for others.
	for _, c := range []struct {
		name string
		cred cred
	}{{"the holders' app", cred{bearer: app}}, {"a user", cred{bearer: r.token}}, {"an anonymous caller", cred{}}} {
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", c.cred, []byte(hashRun))
		problemCode(t, "run by "+c.name+" over the capacity", status, h, body, http.StatusTooManyRequests, contracts.ProblemOverloaded)
		if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("run by %s over the capacity: Retry-After %q", c.name, h.Get("Retry-After"))
		}
		var doc struct {
			Retryable bool `json:"retryable"`
		}
		if json.Unmarshal(body, &doc) != nil || !doc.Retryable {
			t.Errorf("run by %s over the capacity is not retryable: %s", c.name, body)
		}
	}
	// The compute route, for a principal that has nothing in flight.
	item := r.item("c-1", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})
	status, h, body := r.do("POST", "/api/v1/tools/compute", r.token, encode(t, map[string]any{"request_id": "over", "items": []any{item}}))
	var batch struct {
		Code    string          `json:"code"`
		Results json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(body, &batch); status != http.StatusTooManyRequests || err != nil || batch.Code != "queue_full" || batch.Results != nil {
		t.Errorf("compute over the capacity: %d %s", status, body)
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("compute over the capacity: Retry-After %q", h.Get("Retry-After"))
	}
	// Nothing of the refusals ran or was queued.
	if pl := r.pool(); pl.Pending != p.MaxPendingItemsPerProcess {
		t.Errorf("pool after the refusals %+v", pl)
	}
	for i, h := range hs {
		select {
		case status := <-h.done:
			t.Errorf("holder %d ended with %d while the refusals were checked", i, status)
			h.done <- status
		default:
		}
	}

	if pl := r.pool(); pl.Waiting != 1 {
		t.Errorf("pool after the refusals %+v, want the one run waiting", pl)
	}

	release(hs)
	select {
	case a := <-waiter:
		if d := checkRunDoc(t, "the run that waited", a.body); a.status != http.StatusOK || d.Status != "succeeded" {
			t.Errorf("the run that waited: %d %s", a.status, a.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting run was not served once the capacity came back")
	}
	eventually(t, "the held runs release their capacity", func() bool {
		p := r.pool()
		return p.Pending == 0 && p.Active == 0 && p.Waiting == 0
	})
	status, _, body = r.send("POST", "/api/v1/tools/hash/run", cred{bearer: app}, []byte(hashRun))
	if d := checkRunDoc(t, "run after the release", body); status != http.StatusOK || d.Status != "succeeded" {
		t.Errorf("run after the release: %d %s", status, body)
	}
	if res := r.compute(item); res.SuccessCount != 1 {
		t.Errorf("compute after the release: %+v", res)
	}
}

// TestSyncToolErrorIsAFailedRun: a valid input the tool itself refuses is
// a run that happened and failed — 200, tools.run@1 status failed, the
// tool's own code and message — not a schema mismatch; the same item
// through compute fails with the same code; an input the schema refuses
// is still 422 tools.run.invalid_input.
func TestSyncToolErrorIsAFailedRun(t *testing.T) {
	r := start(t, bundled(t))
	bad := map[string]any{"operation": "decode", "text": "!!!"}
	status, h, body := r.do("POST", "/api/v1/tools/base64/run", "", encode(t, map[string]any{"input": bad}))
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("decode of !!!: %d %v %s", status, h, body)
	}
	d := checkRunDoc(t, "decode of !!!", body)
	if d.Status != "failed" || d.Tool != "base64" || d.ID == "" || d.Result != nil || d.Error == nil {
		t.Fatalf("decode of !!!: %s", body)
	}
	// The base64 tool's own words: its code, its message.
	if d.Error.Code != "invalid_parameters" || !strings.Contains(d.Error.Message, "not valid standard base64") {
		t.Errorf("decode of !!!: error %+v", *d.Error)
	}
	if h.Get("Retry-After") != "" {
		t.Errorf("a failed run carries Retry-After %q", h.Get("Retry-After"))
	}

	res := r.compute(r.item("bad", "base64", bad))
	if got := res.Results[0]; got.Status != "error" || got.Error == nil || got.Error.Code != d.Error.Code || got.ExecutionID == "" {
		t.Errorf("the same item through compute: %+v %+v, want code %s", got, got.Error, d.Error.Code)
	}

	// A mismatch with the input schema is refused before anything runs.
	status, h, body = r.do("POST", "/api/v1/tools/base64/run", "", []byte(`{"input":{"operation":"rot13","text":"!!!"}}`))
	problemCode(t, "an unknown operation", status, h, body, http.StatusUnprocessableEntity, contracts.ProblemInvalidInput)
	var p struct {
		Issues []struct {
			Code string   `json:"code"`
			Path []string `json:"path"`
		} `json:"issues"`
	}
	if err := json.Unmarshal(body, &p); err != nil || len(p.Issues) != 1 || p.Issues[0].Code != "enum" || !slices.Equal(p.Issues[0].Path, []string{"operation"}) {
		t.Errorf("an unknown operation: issues of %s", body)
	}
}

// TestRetryAfterNeverOnSuccess: in report mode a run past the quota is
// let through and answered as the success it is — with the spent
// rate-limit fields, never a Retry-After — on the run, compute and legacy
// routes.
func TestRetryAfterNeverOnSuccess(t *testing.T) {
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Report, Quotas: smallTable(cost), Now: clock.Now}
	})
	// The anonymous caller's allowance is 2 runs: the next 3 are past it.
	for i := range 5 {
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{}, []byte(hashRun))
		if status != http.StatusOK {
			t.Fatalf("run %d in report mode: %d %s", i, status, body)
		}
		if d := checkRunDoc(t, fmt.Sprintf("run %d", i), body); d.Status != "succeeded" {
			t.Errorf("run %d: %s", i, body)
		}
		if h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" || h.Get("Retry-After") != "" {
			t.Errorf("run %d (allowance 2): want RateLimit fields and no Retry-After: %v", i, h)
		}
	}
	// The legacy route of the same tool, for the same anonymous caller.
	status, h, body := r.do("POST", "/api/dev/hash/digest", "", []byte(`{"text":"abc","algorithm":"sha256"}`))
	if status != http.StatusOK || h.Get("RateLimit") == "" || h.Get("Retry-After") != "" {
		t.Errorf("legacy run past the quota: %d %v %s", status, h, body)
	}
	// The user's allowance is 4 runs; each batch costs one.
	item := r.item("c-1", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})
	for i := range 6 {
		status, h, body := r.do("POST", "/api/v1/tools/compute", r.token, encode(t, map[string]any{"request_id": fmt.Sprintf("b-%d", i), "items": []any{item}}))
		var res batchResult
		if err := json.Unmarshal(body, &res); status != http.StatusOK || err != nil || res.SuccessCount != 1 {
			t.Fatalf("batch %d in report mode: %d %s", i, status, body)
		}
		if h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" || h.Get("Retry-After") != "" {
			t.Errorf("batch %d (allowance 4): want RateLimit fields and no Retry-After: %v", i, h)
		}
	}
	// The runs past the allowance were reported, not refused.
	if m := r.metricsText(); !strings.Contains(m, `decision="reported"`) {
		t.Errorf("/metrics counts no reported decision")
	}
}

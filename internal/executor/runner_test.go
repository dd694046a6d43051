package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// No test leaves an item goroutine or a timer behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// params are what the test runner reads from an item's parameters.
type params struct {
	Operation string `json:"operation"`
	// Tag names the item in the runner's started/returned reports and its
	// gate. Items without a tag are not reported.
	Tag string `json:"tag,omitempty"`
	// Wait is "" (run at once), "ctx" (wait for the gate or the context,
	// which ends the job with execution_limit, as an engine would) or
	// "stubborn" (wait for the gate, ignoring the context).
	Wait string `json:"wait,omitempty"`
	// Mode picks the outcome; "" is an echo success.
	Mode  string `json:"mode,omitempty"`
	Value any    `json:"value,omitempty"`
	// Batch names a contention test's batch, whose items pause a little
	// so that they overlap.
	Batch string `json:"batch,omitempty"`
	Pad   string `json:"pad,omitempty"`
}

// toolError is the tool's own error the "fail" mode raises.
var toolError = &toolerr.Error{Code: toolerr.ExecutionFailed, Retryable: true, Message: "no feasible plan",
	Issues: []toolerr.Issue{toolerr.NewIssue("budget", "holdings", "0")}, IssueCount: 1}

// runner is a real engine.Runner whose behaviour each item's parameters
// control. It records every job and checks the executor's promises as
// jobs run.
type runner struct {
	lanes    int
	started  chan string
	returned chan string
	pool     func() executor.PoolSnapshot // sampled in every Run when set

	mu         sync.Mutex
	calls      int
	running    int
	maxRunning int
	jobs       []engine.Job
	deadlines  []time.Time
	gates      map[string]chan struct{}
	released   map[string]bool
	violations []string
	// inline and onGoroutine count a promptRunner's jobs by where they
	// ran.
	inline, onGoroutine int
}

func newRunner(lanes int) *runner {
	return &runner{
		lanes:    lanes,
		started:  make(chan string, 64),
		returned: make(chan string, 64),
		gates:    map[string]chan struct{}{},
		released: map[string]bool{},
	}
}

func (r *runner) gate(tag string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.gates[tag]
	if !ok {
		g = make(chan struct{})
		r.gates[tag] = g
	}
	return g
}

// release opens the gate of tag. It is safe to call more than once.
func (r *runner) release(tags ...string) {
	for _, tag := range tags {
		g := r.gate(tag)
		r.mu.Lock()
		if !r.released[tag] {
			r.released[tag] = true
			close(g)
		}
		r.mu.Unlock()
	}
}

// releaseAll opens every gate, including those not yet asked for.
func (r *runner) releaseAll() {
	r.mu.Lock()
	tags := make([]string, 0, len(r.gates))
	for tag := range r.gates {
		tags = append(tags, tag)
	}
	r.mu.Unlock()
	r.release(tags...)
}

func (r *runner) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func (r *runner) Jobs() ([]engine.Job, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.Job(nil), r.jobs...), append([]time.Time(nil), r.deadlines...)
}

func (r *runner) violate(format string, args ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

func (r *runner) enter(ctx context.Context, job engine.Job, p params) {
	deadline, _ := ctx.Deadline()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.running++
	r.maxRunning = max(r.maxRunning, r.running)
	if r.running > r.lanes {
		r.violate("%d jobs run at once on %d lanes", r.running, r.lanes)
	}
	r.jobs = append(r.jobs, job)
	r.deadlines = append(r.deadlines, deadline)
}

func (r *runner) leave(p params) {
	r.mu.Lock()
	r.running--
	r.mu.Unlock()
	if p.Tag != "" {
		r.returned <- p.Tag
	}
}

func (r *runner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	var p params
	if err := json.Unmarshal(job.Parameters, &p); err != nil {
		return nil, fmt.Errorf("test runner: %w", err)
	}
	r.enter(ctx, job, p)
	defer r.leave(p)
	if r.pool != nil {
		s := r.pool()
		r.mu.Lock()
		if s.Pending > 8 || s.Active > r.lanes || s.Queued > 8 {
			r.violate("pool over its limits: %+v", s)
		}
		r.mu.Unlock()
	}
	if p.Tag != "" {
		r.started <- p.Tag
	}
	memory := &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: job.Operation.MemoryLimitBytes, PeakBytes: new(int64(1 << 20))}
	switch p.Wait {
	case "ctx":
		select {
		case <-r.gate(p.Tag):
		case <-ctx.Done():
			return &engine.Outcome{Phases: engine.Phases{Startup: engine.Duration(time.Millisecond)}, Memory: memory},
				toolerr.New(toolerr.ExecutionLimit)
		}
	case "stubborn":
		<-r.gate(p.Tag)
	}
	if p.Batch != "" {
		time.Sleep(50 * time.Microsecond) // let other items overlap; never asserted
	}
	echo, _ := json.Marshal(map[string]any{"echo": p.Value, "operation": p.Operation})
	ok := &engine.Outcome{
		Result: echo,
		Phases: engine.Phases{Compute: engine.Duration(2 * time.Millisecond), Serialization: engine.Duration(time.Microsecond),
			Cleanup: engine.Duration(time.Nanosecond)},
		Memory: memory,
	}
	switch p.Mode {
	case "":
		return ok, nil
	case "fail":
		return &engine.Outcome{Phases: ok.Phases, Memory: memory}, toolError
	case "timeout":
		return &engine.Outcome{Phases: engine.Phases{Startup: engine.Duration(time.Millisecond)}, Memory: memory},
			toolerr.New(toolerr.ExecutionTimeout)
	case "fuel":
		ok.FuelUsed = new(int64(12345))
		return ok, nil
	case "leak":
		return &engine.Outcome{Memory: memory}, toolerr.New(toolerr.CleanupFailed)
	case "plain":
		return nil, errors.New("engine exploded")
	case "nothing":
		return nil, nil
	case "badjson":
		return &engine.Outcome{Result: []byte(`{"echo":`)}, nil
	case "huge":
		return &engine.Outcome{Result: []byte(`"` + strings.Repeat("x", int(job.Operation.MaxResultBytes)) + `"`)}, nil
	case "panic":
		panic("engine bug")
	}
	return nil, fmt.Errorf("test runner: unknown mode %q", p.Mode)
}

var _ engine.Runner = (*runner)(nil)

// promptEngines makes newFixture's services run on a promptRunner: every
// one-item batch then runs inline, on Compute's goroutine. TestInline
// sets it while it runs the suite again; no test runs in parallel.
var promptEngines bool

// promptRunner is the test runner declared executor.Prompt. It records,
// for each job, whether Run was called on a goroutine that is inside
// Compute (an inline run) or on an item goroutine.
type promptRunner struct{ *runner }

func (p promptRunner) ReturnsAtContextEnd() {}

func (p promptRunner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	inline := false
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "executor.(*Executor).Compute") {
			inline = true
		}
		if !more {
			break
		}
	}
	p.mu.Lock()
	if inline {
		p.inline++
	} else {
		p.onGoroutine++
	}
	p.mu.Unlock()
	return p.runner.Run(ctx, job)
}

var _ executor.Prompt = promptRunner{}

// The test services: alpha (sum, echo, plan with the platform's long
// budgets), beta (upper), small (tiny: 64 parameter bytes; quick: a 1 ms
// queue budget) and broken (an unusable policy).
const (
	contractVersion       = "1.0.0"
	implementationVersion = "1.4.2"
)

func fingerprint(code string) string { return "sha256:" + strings.Repeat(code[:1], 64) }

func service(t *testing.T, code string, r engine.Runner, ops ...policy.Operation) *registry.Service {
	t.Helper()
	def := &tooldef.Definition{
		ToolCode: code, Name: code, Description: code,
		ContractVersion: contractVersion, ImplementationVersion: implementationVersion,
		Fingerprint: fingerprint(code),
	}
	eff := map[string]policy.Effective{}
	for _, op := range ops {
		def.Operations = append(def.Operations, tooldef.Operation{Policy: op})
		e, err := policy.Clamp(policy.DefaultPlatform(), op)
		if err != nil {
			t.Fatalf("clamping %s/%s: %v", code, op.Name, err)
		}
		eff[op.Name] = e
	}
	return &registry.Service{Definition: def, Effective: eff, Runner: r, Source: "builtin/" + code}
}

func operation(name string, edit func(*policy.Operation)) policy.Operation {
	op := policy.DefaultOperation(name)
	if edit != nil {
		edit(&op)
	}
	return op
}

func snapshot(t *testing.T, r engine.Runner) *registry.Snapshot {
	plan := operation("plan", func(op *policy.Operation) {
		op.EngineTimeoutMS, op.SoftTimeoutMS, op.HardTimeoutMS = 30_000, 44_000, 45_000
		op.CleanupTimeoutMS, op.RequestTimeoutMS, op.ClientTimeoutMS = 5_000, 59_000, 65_000
	})
	broken := service(t, "broken", r, operation("value", nil))
	broken.Effective = nil
	broken.Unavailable = toolerr.New(toolerr.InvalidOperationPolicy, toolerr.NewIssue(string(policy.RuleServerBound), "request_timeout_ms"))
	return registry.NewSnapshot(1, []*registry.Service{
		service(t, "alpha", r, operation("sum", nil), operation("echo", nil), plan),
		service(t, "beta", r, operation("upper", nil)),
		service(t, "small", r,
			operation("tiny", func(op *policy.Operation) { op.MaxParameterBytes = 64 }),
			operation("quick", func(op *policy.Operation) { op.QueueTimeoutMS = 1 })),
		broken,
	}, nil)
}

// fixture is an executor over the test snapshot and its runner.
type fixture struct {
	t *testing.T
	e *executor.Executor
	r *runner
}

// newFixture returns an executor with lanes lanes over the default
// platform, or over platform when given. Its cleanup opens every gate and
// shuts the executor down.
func newFixture(t *testing.T, lanes int, platform ...policy.Platform) *fixture {
	t.Helper()
	cfg := executor.Config{Lanes: lanes}
	if len(platform) > 0 {
		cfg.Platform = platform[0]
	}
	return newFixtureConfig(t, cfg)
}

// newFixtureConfig is newFixture for an executor configured by cfg, whose
// Snapshot it sets.
func newFixtureConfig(t *testing.T, cfg executor.Config) *fixture {
	t.Helper()
	r := newRunner(cfg.Lanes)
	var eng engine.Runner = r
	if promptEngines {
		eng = promptRunner{r}
	}
	snap := snapshot(t, eng)
	cfg.Snapshot = func() *registry.Snapshot { return snap }
	e, err := executor.New(cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	t.Cleanup(func() {
		r.releaseAll()
		if err := e.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown() = %v", err)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, v := range r.violations {
			t.Errorf("runner: %s", v)
		}
	})
	return &fixture{t: t, e: e, r: r}
}

// item returns an item of code pinned to the live definition.
func item(corr, code string, p params) executor.Item {
	raw, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return executor.Item{
		CorrelationID: corr, ToolCode: code,
		ContractVersion: contractVersion, ImplementationVersion: implementationVersion,
		SchemaFingerprint: fingerprint(code),
		Parameters:        raw,
	}
}

func batch(items ...executor.Item) executor.Batch {
	return executor.Batch{Items: items}
}

// succeeded and failed count the items of res that succeeded and failed.
func succeeded(res *executor.BatchResult) int {
	n := 0
	for _, r := range res.Results {
		if r.Succeeded {
			n++
		}
	}
	return n
}

func failed(res *executor.BatchResult) int { return len(res.Results) - succeeded(res) }

// counted is b with a count of its Settled calls, which checks that they
// come one at a time and that the last one says so.
func counted(t *testing.T, b executor.Batch) (executor.Batch, *atomic.Int32) {
	n := new(atomic.Int32)
	var mu sync.Mutex
	b.Settled = func(last bool) {
		if !mu.TryLock() {
			t.Errorf("two Settled calls at once")
			return
		}
		defer mu.Unlock()
		if got := int(n.Add(1)); last != (got == len(b.Items)) {
			t.Errorf("Settled call %d of %d says last %v", got, len(b.Items), last)
		}
	}
	return b, n
}

type answer struct {
	res *executor.BatchResult
	err error
}

// computeAsync runs Compute in a goroutine and returns where its answer
// arrives.
func (f *fixture) computeAsync(ctx context.Context, b executor.Batch) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		res, err := f.e.Compute(ctx, b)
		ch <- answer{res, err}
	}()
	return ch
}

func (f *fixture) compute(b executor.Batch) *executor.BatchResult {
	f.t.Helper()
	res, err := f.e.Compute(context.Background(), b)
	if err != nil {
		f.t.Fatalf("Compute() = %v", err)
	}
	if len(res.Results) != len(b.Items) {
		f.t.Fatalf("Compute() gave %d results for %d items", len(res.Results), len(b.Items))
	}
	return res
}

// await returns the answer of a Compute started with computeAsync.
func await(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("Compute did not return")
	}
	return answer{}
}

// started waits until the runner reports that the jobs tagged tags have
// begun, in any order.
func (f *fixture) started(tags ...string) {
	f.t.Helper()
	f.receive(f.r.started, "start", tags...)
}

func (f *fixture) returned(tags ...string) {
	f.t.Helper()
	f.receive(f.r.returned, "return", tags...)
}

func (f *fixture) receive(ch <-chan string, what string, tags ...string) {
	f.t.Helper()
	want := map[string]bool{}
	for _, tag := range tags {
		want[tag] = true
	}
	for len(want) > 0 {
		select {
		case tag := <-ch:
			if !want[tag] {
				f.t.Fatalf("unexpected %s of job %q", what, tag)
			}
			delete(want, tag)
		case <-time.After(10 * time.Second):
			f.t.Fatalf("no %s of jobs %v", what, want)
		}
	}
}

// waitPool waits until the pool satisfies cond. It polls: it measures no
// time, it only waits for the background items to settle.
func (f *fixture) waitPool(what string, cond func(executor.PoolSnapshot) bool) executor.PoolSnapshot {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := f.e.Pool()
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("pool never became %s: %+v", what, p)
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fixture) waitIdle() executor.PoolSnapshot {
	f.t.Helper()
	return f.waitPool("idle", func(p executor.PoolSnapshot) bool {
		return p.Pending == 0 && p.Active == 0 && p.Queued == 0
	})
}

// fullBatch checks that the executor can again run a full batch of four.
func (f *fixture) fullBatch() {
	f.t.Helper()
	items := make([]executor.Item, 4)
	for i := range items {
		items[i] = item(fmt.Sprintf("full-%d", i), "alpha", params{Operation: "echo", Value: i})
	}
	res := f.compute(batch(items...))
	if succeeded(res) != 4 {
		f.t.Fatalf("full batch: %d successes, want 4: %+v", succeeded(res), res.Results)
	}
	if p := f.e.Pool(); p.Pending != 0 || p.Active != 0 {
		f.t.Fatalf("pool after a full batch: %+v", p)
	}
}

// wantCode checks a platform error's code and retryable flag.
func wantCode(t *testing.T, err error, code toolerr.Code) {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("error = %v, want a *toolerr.Error %s", err, code)
	}
	if te.Code != code || te.Retryable != code.Retryable() {
		t.Fatalf("error = %s retryable=%v, want %s retryable=%v", te.Code, te.Retryable, code, code.Retryable())
	}
}

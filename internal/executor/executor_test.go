package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

var executionID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// A heterogeneous batch is answered in submission order, whatever order
// its items finish in, each with a fresh execution id.
func TestHeterogeneousBatchInOrder(t *testing.T) {
	f := newFixture(t, 4)
	items := []executor.Item{
		item("c1", "alpha", params{Operation: "sum", Tag: "t1", Wait: "ctx", Value: 1}),
		item("c2", "beta", params{Operation: "upper", Tag: "t2", Wait: "ctx", Value: "b"}),
		item("c3", "alpha", params{Operation: "echo", Tag: "t3", Wait: "ctx", Mode: "fail"}),
		item("c4", "small", params{Operation: "tiny", Tag: "t4", Wait: "ctx"}),
	}
	items[1].ImplementationVersion = implementationVersion // same pins, different tool
	ch := f.computeAsync(context.Background(), batch(items...))
	f.started("t1", "t2", "t3", "t4")
	for _, tag := range []string{"t4", "t3", "t2", "t1"} { // finish in reverse order
		f.r.release(tag)
		f.returned(tag)
	}
	a := await(t, ch)
	if a.err != nil {
		t.Fatalf("Compute() = %v", a.err)
	}
	res := a.res
	if len(res.Results) != len(items) || succeeded(res) != 3 || failed(res) != 1 {
		t.Fatalf("batch = %+v", res)
	}
	ids := map[string]bool{}
	for i, r := range res.Results {
		if !executionID.MatchString(r.ExecutionID) || ids[r.ExecutionID] {
			t.Errorf("result %d execution_id = %q, want a fresh 32-digit hex id", i, r.ExecutionID)
		}
		ids[r.ExecutionID] = true
	}
	for _, i := range []int{0, 1, 3} {
		if r := res.Results[i]; !r.Succeeded || r.Error != nil || r.Result == nil {
			t.Errorf("result %d = %+v, want success", i, r)
		}
	}
	var echo map[string]any
	if err := json.Unmarshal(res.Results[1].Result, &echo); err != nil || echo["echo"] != "b" || echo["operation"] != "upper" {
		t.Errorf("result 1 = %s, want the echo of b by upper", res.Results[1].Result)
	}
	// The tool's own error is copied as it is: code, flag, message, issues.
	if r := res.Results[2]; r.Succeeded || r.Result != nil || !reflect.DeepEqual(r.Error, toolError) {
		t.Errorf("result 2 = %+v error %+v, want the tool's error %+v", r, r.Error, toolError)
	}
	if n := f.r.Calls(); n != 4 {
		t.Errorf("runner calls = %d, want 4", n)
	}
}

// Every check before the queue answers on its own, without a job.
func TestItemRefusals(t *testing.T) {
	deep := `{"operation":"sum","v":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`
	raw := func(code, text string) executor.Item {
		it := item("c", code, params{})
		it.Parameters = []byte(text)
		return it
	}
	tests := []struct {
		name  string
		item  executor.Item
		code  toolerr.Code
		issue *toolerr.Issue
	}{
		{name: "unknown tool", item: item("c", "gamma", params{Operation: "sum"}), code: toolerr.UnknownTool},
		{name: "tool unavailable", item: item("c", "broken", params{Operation: "value"}), code: toolerr.ToolUnavailable},
		{
			name: "stale contract version",
			item: func() executor.Item {
				it := item("c", "alpha", params{Operation: "sum"})
				it.ContractVersion = "0.9.0"
				return it
			}(),
			code: toolerr.VersionMismatch, issue: &toolerr.Issue{Code: "mismatch", Path: []string{"contract_version"}},
		},
		{
			name: "stale implementation version",
			item: func() executor.Item {
				it := item("c", "alpha", params{Operation: "sum"})
				it.ImplementationVersion = "1.4.1"
				return it
			}(),
			code: toolerr.VersionMismatch, issue: &toolerr.Issue{Code: "mismatch", Path: []string{"implementation_version"}},
		},
		{
			name: "stale fingerprint",
			item: func() executor.Item {
				it := item("c", "alpha", params{Operation: "sum"})
				it.SchemaFingerprint = fingerprint("beta")
				return it
			}(),
			code: toolerr.VersionMismatch, issue: &toolerr.Issue{Code: "mismatch", Path: []string{"schema_fingerprint"}},
		},
		{
			name: "stale pin of a bad operation", // pins are checked first
			item: func() executor.Item { it := raw("alpha", `[]`); it.ContractVersion = "2.0.0"; return it }(),
			code: toolerr.VersionMismatch, issue: &toolerr.Issue{Code: "mismatch", Path: []string{"contract_version"}},
		},
		{name: "parameters not an object", item: raw("alpha", `[1]`), code: toolerr.InvalidParameters, issue: &toolerr.Issue{Code: "type", Path: []string{}}},
		{name: "parameters not JSON", item: raw("alpha", `{"operation":`), code: toolerr.InvalidParameters, issue: &toolerr.Issue{Code: "invalid", Path: []string{}}},
		{name: "no operation", item: raw("alpha", `{"value":1}`), code: toolerr.InvalidParameters, issue: &toolerr.Issue{Code: "required", Path: []string{"operation"}}},
		{name: "operation not a string", item: raw("alpha", `{"operation":3}`), code: toolerr.InvalidParameters, issue: &toolerr.Issue{Code: "type", Path: []string{"operation"}}},
		{name: "undeclared operation", item: item("c", "alpha", params{Operation: "upper"}), code: toolerr.InvalidParameters, issue: &toolerr.Issue{Code: "enum", Path: []string{"operation"}}},
		{name: "over the operation's bytes", item: item("c", "small", params{Operation: "tiny", Pad: strings.Repeat("x", 64)}), code: toolerr.InputLimitExceeded},
		{name: "over the platform's bytes", item: item("c", "alpha", params{Operation: "plan", Pad: strings.Repeat("x", 128<<10)}), code: toolerr.InputLimitExceeded},
		{name: "too deep", item: raw("alpha", deep), code: toolerr.InputLimitExceeded},
	}
	f := newFixture(t, 2)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.compute(batch(tt.item))
			r := res.Results[0]
			if r.Succeeded || r.Result != nil || r.ExecutionID != "" {
				t.Fatalf("result = %+v, want an error without execution", r)
			}
			wantCode(t, r.Error, tt.code)
			if tt.issue != nil && (r.Error.IssueCount != 1 || !reflect.DeepEqual(r.Error.Issues[0], *tt.issue)) {
				t.Errorf("issues = %+v, want [%+v]", r.Error.Issues, *tt.issue)
			}
			if r.Metrics.Total == nil || r.Metrics.QueueWait != nil || r.Metrics.Execution != nil || r.Resources.Memory != nil {
				t.Errorf("metrics = %+v, resources = %+v, want total_ms only", r.Metrics, r.Resources)
			}
			if succeeded(res) != 0 || failed(res) != 1 {
				t.Errorf("counts = %d/%d, want 0/1", succeeded(res), failed(res))
			}
		})
	}
	if n := f.r.Calls(); n != 0 {
		t.Errorf("runner calls = %d, want 0", n)
	}
	if p := f.e.Pool(); p.Completed != uint64(len(tests)) || p.Failed != uint64(len(tests)) || p.Pending != 0 {
		t.Errorf("pool = %+v, want %d completed and failed", p, len(tests))
	}
}

// An engine's outcome becomes the item's without turning a failure into
// an answer; an unconfirmed cleanup quarantines the lane.
func TestEngineOutcomes(t *testing.T) {
	tests := []struct {
		mode       string
		code       toolerr.Code // "" for success
		quarantine bool
	}{
		{mode: ""},
		{mode: "fuel"},
		{mode: "fail", code: toolerr.ExecutionFailed},
		{mode: "timeout", code: toolerr.ExecutionTimeout},
		{mode: "plain", code: toolerr.ExecutionFailed},
		{mode: "nothing", code: toolerr.ExecutionFailed},
		{mode: "badjson", code: toolerr.InvalidOutput},
		{mode: "huge", code: toolerr.OutputLimitExceeded},
		{mode: "leak", code: toolerr.CleanupFailed, quarantine: true},
		{mode: "panic", code: toolerr.ExecutionFailed, quarantine: true},
	}
	for _, tt := range tests {
		t.Run("mode="+tt.mode, func(t *testing.T) {
			f := newFixture(t, 2)
			r := f.compute(batch(item("c", "alpha", params{Operation: "sum", Mode: tt.mode}))).Results[0]
			if !executionID.MatchString(r.ExecutionID) {
				t.Errorf("execution_id = %q, want one: the job started", r.ExecutionID)
			}
			if tt.code == "" {
				if !r.Succeeded || r.Error != nil || !json.Valid(r.Result) {
					t.Fatalf("result = %+v, want success", r)
				}
			} else {
				if r.Succeeded || r.Result != nil {
					t.Fatalf("result = %+v, want error %s", r, tt.code)
				}
				if tt.mode == "fail" {
					if !reflect.DeepEqual(r.Error, toolError) {
						t.Errorf("error = %+v, want the tool's own %+v", r.Error, toolError)
					}
				} else {
					wantCode(t, r.Error, tt.code)
				}
			}
			if fuel := r.Resources.FuelUsed; (tt.mode == "fuel") != (fuel != nil) || (fuel != nil && *fuel != 12345) {
				t.Errorf("fuel_used = %v", fuel)
			}
			p := f.e.Pool()
			wantDegraded, wantReserved := 0, int64(0)
			if tt.quarantine {
				wantDegraded, wantReserved = 1, policy.GiB
			}
			if p.Degraded != wantDegraded || p.Resources.MemoryReservedBytes != wantReserved || !p.Available ||
				p.Pending != 0 || p.Active != 0 || p.Completed != 1 || p.Failed != map[bool]uint64{true: 1, false: 0}[tt.code != ""] {
				t.Errorf("pool = %+v", p)
			}
		})
	}
}

// Deadlines are absolute, counted from lane acquisition: the runner's
// context ends at the hard deadline, soft comes output reserve or more
// before it, and the job carries the item's operation and parameters.
func TestJob(t *testing.T) {
	f := newFixture(t, 2)
	it := item("c", "alpha", params{Operation: "plan", Value: "x"})
	res := f.compute(batch(it))
	jobs, deadlines := f.r.Jobs()
	if len(jobs) != 1 {
		t.Fatalf("runner saw %d jobs, want 1", len(jobs))
	}
	job := jobs[0]
	if job.ExecutionID != res.Results[0].ExecutionID || job.ToolCode != "alpha" || job.Operation.Name != "plan" ||
		string(job.Parameters) != string(it.Parameters) {
		t.Errorf("job = %+v", job)
	}
	if got, want := job.Hard.Sub(job.Soft), 1*time.Second; got != want {
		t.Errorf("hard − soft = %v, want %v (45 s − 44 s)", got, want)
	}
	if !deadlines[0].Equal(job.Hard) {
		t.Errorf("run context deadline = %v, want the hard deadline %v", deadlines[0], job.Hard)
	}
}

// Admission is decided once per batch: whole refusals, no item of a
// refused batch runs, and the process's pending items hold.
func TestAdmission(t *testing.T) {
	f := newFixture(t, 1)
	echo := func(corr string) executor.Item { return item(corr, "alpha", params{Operation: "echo"}) }
	many := func(prefix string, n int) []executor.Item {
		items := make([]executor.Item, n)
		for i := range items {
			items[i] = echo(fmt.Sprintf("%s%d", prefix, i))
		}
		return items
	}

	a := f.computeAsync(context.Background(), batch(item("a0", "alpha", params{Operation: "sum", Tag: "a", Wait: "ctx"})))
	f.started("a")

	refused := []struct {
		name string
		b    executor.Batch
	}{
		{"empty batch", batch()},
		{"batch over the process's pending items", batch(many("e", 9)...)},
	}
	for _, tt := range refused {
		_, err := f.e.Compute(context.Background(), tt.b)
		wantCode(t, err, toolerr.QueueFull)
	}
	b := f.computeAsync(context.Background(), batch(many("b", 4)...)) // 5 pending
	f.waitPool("5 pending", func(p executor.PoolSnapshot) bool { return p.Pending == 5 })
	_, err := f.e.Compute(context.Background(), batch(many("c", 4)...)) // would make 9
	wantCode(t, err, toolerr.QueueFull)
	c := f.computeAsync(context.Background(), batch(many("c", 3)...)) // 8
	p := f.waitPool("8 pending, 7 queued", func(p executor.PoolSnapshot) bool { return p.Pending == 8 && p.Queued == 7 })
	if p.Active != 1 || !p.Available || p.Resources.MemoryCapacityBytes != policy.GiB || p.Resources.MemoryReservedBytes != policy.GiB {
		t.Errorf("pool = %+v", p)
	}
	_, err = f.e.Compute(context.Background(), batch(echo("d0")))
	wantCode(t, err, toolerr.QueueFull)
	if n := f.r.Calls(); n != 1 {
		t.Fatalf("runner calls = %d, want 1: a refused batch ran", n)
	}

	f.r.release("a")
	for _, ch := range []<-chan answer{a, b, c} {
		ans := await(t, ch)
		if ans.err != nil || failed(ans.res) != 0 {
			t.Fatalf("admitted batch = %+v, %v", ans.res, ans.err)
		}
	}
	p = f.e.Pool()
	if p.Pending != 0 || p.Completed != 8 || p.Failed != 0 || p.Resources.MemoryReservedBytes != 0 {
		t.Errorf("pool = %+v", p)
	}
	f.fullBatch()
}

// Settled is called once per item whatever happens, and before Compute
// returns when no item outlives it: for a batch whose items all ended, a
// one-item batch, a batch refused whole and a batch whose context ended
// before it was admitted.
func TestSettled(t *testing.T) {
	f := newFixture(t, 1)
	ran, n := counted(t, batch(item("a", "alpha", params{Operation: "echo"}), item("b", "alpha", params{Operation: "echo", Mode: "fail"})))
	f.compute(ran)
	if got := n.Load(); got != 2 {
		t.Errorf("a batch that ran: %d items settled, want 2", got)
	}
	one, n := counted(t, batch(item("a", "alpha", params{Operation: "echo"})))
	f.compute(one)
	if got := n.Load(); got != 1 {
		t.Errorf("a one-item batch: %d items settled, want 1", got)
	}
	many := make([]executor.Item, 9)
	for i := range many {
		many[i] = item(fmt.Sprint("m", i), "alpha", params{Operation: "echo"})
	}
	refused, n := counted(t, batch(many...))
	_, err := f.e.Compute(context.Background(), refused)
	wantCode(t, err, toolerr.QueueFull)
	if got := n.Load(); got != 9 {
		t.Errorf("a refused batch: %d items settled, want 9", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	late, n := counted(t, batch(item("a", "alpha", params{Operation: "echo"})))
	if _, err := f.e.Compute(ctx, late); !errors.Is(err, context.Canceled) {
		t.Errorf("Compute() = %v, want context.Canceled", err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("a batch whose context had ended: %d items settled, want 1", got)
	}
}

// Many callers hammering Compute never get more admitted than the
// process allows: at most two jobs at once, at most eight items pending.
func TestAdmissionUnderContention(t *testing.T) {
	const lanes, callers, submitters, rounds = 2, 8, 3, 15
	f := newFixture(t, lanes)
	f.r.pool = f.e.Pool

	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		accepted, refuse int
		items            int
	)
	for pi := range callers {
		for si := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range rounds {
					id := fmt.Sprintf("%d-%d-%d", pi, si, k)
					n := (pi+si+k)%4 + 1
					b := batch()
					for i := range n {
						b.Items = append(b.Items, item(fmt.Sprintf("%s/%d", id, i), "alpha",
							params{Operation: "echo", Batch: id, Value: i}))
					}
					res, err := f.e.Compute(context.Background(), b)
					mu.Lock()
					switch code, _ := toolerr.CodeOf(err); {
					case err == nil:
						accepted++
						items += n
						for i, r := range res.Results {
							if !r.Succeeded || string(r.Result) != fmt.Sprintf(`{"echo":%d,"operation":"echo"}`, i) {
								t.Errorf("batch %s item %d = %+v", id, i, r)
							}
						}
					case code == toolerr.QueueFull:
						refuse++
						time.Sleep(50 * time.Microsecond) // back off a little; never asserted
					default:
						t.Errorf("Compute() = %v", err)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if accepted == 0 {
		t.Fatal("no batch was admitted")
	}
	p := f.e.Pool()
	if p.Pending != 0 || p.Active != 0 || p.Queued != 0 || p.Completed != uint64(items) || p.Failed != 0 {
		t.Errorf("pool after %d admitted batches (%d items), %d refused: %+v", accepted, items, refuse, p)
	}
	if f.r.maxRunning > lanes {
		t.Errorf("%d jobs ran at once on %d lanes", f.r.maxRunning, lanes)
	}
	t.Logf("%d batches admitted, %d refused", accepted, refuse)
}

// Credit returns exactly once whenever the batch is cancelled: before its
// item queues, while it waits for a lane, while its job runs and after
// the engine confirms the end. The pool then admits a full batch again.
func TestCancellation(t *testing.T) {
	t.Run("before queueing", func(t *testing.T) {
		f := newFixture(t, 2)
		reached, proceed := make(chan struct{}), make(chan struct{})
		executor.SetBeforeQueue(f.e, func(it executor.Item) {
			if it.CorrelationID == "hooked" {
				close(reached)
				<-proceed
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := f.computeAsync(ctx, batch(item("hooked", "alpha", params{Operation: "echo"})))
		<-reached
		cancel()
		if promptEngines {
			// An inline run is on Compute's goroutine, held by the hook:
			// it answers once the hook returns, and its credit is back.
			close(proceed)
		}
		if ans := await(t, ch); !errors.Is(ans.err, context.Canceled) {
			t.Fatalf("Compute() = %+v, %v, want context.Canceled", ans.res, ans.err)
		}
		if promptEngines {
			if p := f.e.Pool(); p.Pending != 0 {
				t.Errorf("pool = %+v, want the inline item's credit returned", p)
			}
		} else {
			if p := f.e.Pool(); p.Pending != 1 {
				t.Errorf("pool = %+v, want the item's credit still held", p)
			}
			close(proceed)
		}
		p := f.waitIdle()
		if p.Completed != 1 || p.Failed != 1 || f.r.Calls() != 0 {
			t.Errorf("pool = %+v, runner calls = %d, want one failed item and no job", p, f.r.Calls())
		}
		f.fullBatch()
	})
	t.Run("while queued and running", func(t *testing.T) {
		f := newFixture(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		running := f.computeAsync(ctx, batch(item("run", "alpha", params{Operation: "sum", Tag: "run", Wait: "ctx"})))
		f.started("run")
		queued := f.computeAsync(ctx, batch(item("queued", "alpha", params{Operation: "sum", Tag: "queued", Wait: "ctx"})))
		f.waitPool("one queued", func(p executor.PoolSnapshot) bool { return p.Queued == 1 })
		cancel()
		for _, ch := range []<-chan answer{running, queued} {
			// Compute answers the context's error, or the items' failures
			// when they all ended before it looked.
			if ans := await(t, ch); !errors.Is(ans.err, context.Canceled) && (ans.err != nil || failed(ans.res) != 1) {
				t.Fatalf("Compute() = %+v, %v, want context.Canceled", ans.res, ans.err)
			}
		}
		p := f.waitIdle()
		if p.Completed != 2 || p.Failed != 2 || f.r.Calls() != 1 || p.Degraded != 0 || p.Resources.MemoryReservedBytes != 0 {
			t.Errorf("pool = %+v, runner calls = %d", p, f.r.Calls())
		}
		f.fullBatch()
		f.fullBatch()
	})
	t.Run("running job ending late", func(t *testing.T) {
		f := newFixture(t, 2)
		ctx, cancel := context.WithCancel(context.Background())
		b, settled := counted(t, batch(
			item("s1", "alpha", params{Operation: "sum", Tag: "s1", Wait: "stubborn"}),
			item("s2", "alpha", params{Operation: "sum", Tag: "s2", Wait: "stubborn"})))
		ch := f.computeAsync(ctx, b)
		f.started("s1", "s2")
		cancel()
		if ans := await(t, ch); !errors.Is(ans.err, context.Canceled) {
			t.Fatalf("Compute() = %+v, %v, want context.Canceled", ans.res, ans.err)
		}
		// The jobs have not ended: their credit and lanes stay taken, and
		// the caller is not told they are settled.
		if p := f.e.Pool(); p.Pending != 2 || p.Active != 2 || p.Resources.MemoryReservedBytes != 2*policy.GiB {
			t.Errorf("pool = %+v, want both jobs' credit and lanes held", p)
		}
		if n := settled.Load(); n != 0 {
			t.Errorf("%d items settled while their jobs run", n)
		}
		f.r.release("s1")
		f.waitPool("one pending", func(p executor.PoolSnapshot) bool { return p.Pending == 1 && p.Active == 1 })
		if n := settled.Load(); n != 1 {
			t.Errorf("%d items settled after one job ended, want 1", n)
		}
		f.r.release("s2")
		p := f.waitIdle()
		if p.Completed != 2 || p.Failed != 0 { // both jobs ended with a success nobody reads
			t.Errorf("pool = %+v", p)
		}
		if n := settled.Load(); n != 2 {
			t.Errorf("%d items settled after both jobs ended, want 2", n)
		}
		f.fullBatch()
	})
}

// An item that cannot get a lane within its queue budget times out
// without a job.
func TestQueueTimeout(t *testing.T) {
	f := newFixture(t, 1)
	slow := f.computeAsync(context.Background(), batch(item("slow", "alpha", params{Operation: "sum", Tag: "slow", Wait: "ctx"})))
	f.started("slow")
	res := f.compute(batch(item("quick", "small", params{Operation: "quick"})))
	r := res.Results[0]
	wantCode(t, r.Error, toolerr.QueueTimeout)
	if r.ExecutionID != "" || r.Metrics.QueueWait != nil || r.Metrics.Execution != nil || r.Metrics.Total == nil {
		t.Errorf("result = %+v, want no execution", r)
	}
	if n := f.r.Calls(); n != 1 {
		t.Errorf("runner calls = %d, want 1", n)
	}
	f.r.release("slow")
	if ans := await(t, slow); ans.err != nil || succeeded(ans.res) != 1 {
		t.Fatalf("slow batch = %+v, %v", ans.res, ans.err)
	}
	f.fullBatch()
}

// A lane whose job's cleanup is not confirmed is quarantined; when every
// lane is, the pool refuses batches and tells queued items at once.
func TestQuarantine(t *testing.T) {
	t.Run("pool", func(t *testing.T) {
		f := newFixture(t, 2)
		for i := range 2 {
			r := f.compute(batch(item("leak", "alpha", params{Operation: "sum", Mode: "leak"}))).Results[0]
			wantCode(t, r.Error, toolerr.CleanupFailed)
			if r.ExecutionID == "" || r.Resources.Memory == nil {
				t.Errorf("result = %+v, want the started job's id and memory", r)
			}
			p := f.e.Pool()
			if p.Degraded != i+1 || p.Available != (i == 0) || p.Pending != 0 || p.Resources.MemoryReservedBytes != int64(i+1)*policy.GiB {
				t.Errorf("after %d leaks, pool = %+v", i+1, p)
			}
		}
		_, err := f.e.Compute(context.Background(), batch(item("c", "alpha", params{Operation: "echo"})))
		wantCode(t, err, toolerr.ServiceUnavailable)
		if n := f.r.Calls(); n != 2 {
			t.Errorf("runner calls = %d, want 2", n)
		}
	})
	t.Run("queued items", func(t *testing.T) {
		f := newFixture(t, 1)
		leak := f.computeAsync(context.Background(), batch(
			item("leak", "alpha", params{Operation: "sum", Tag: "leak", Wait: "ctx", Mode: "leak"})))
		f.started("leak")
		next := f.computeAsync(context.Background(), batch(item("next", "alpha", params{Operation: "echo"})))
		f.waitPool("one queued", func(p executor.PoolSnapshot) bool { return p.Queued == 1 })
		f.r.release("leak")
		for ch, code := range map[<-chan answer]toolerr.Code{leak: toolerr.CleanupFailed, next: toolerr.ServiceUnavailable} {
			ans := await(t, ch)
			if ans.err != nil {
				t.Fatalf("Compute() = %v", ans.err)
			}
			wantCode(t, ans.res.Results[0].Error, code)
		}
		if p := f.e.Pool(); p.Available || p.Degraded != 1 || p.Pending != 0 || p.Queued != 0 {
			t.Errorf("pool = %+v", p)
		}
	})
}

// Shutdown closes admission, cancels queued and running items and waits
// for their engines.
func TestShutdown(t *testing.T) {
	t.Run("cancels and waits", func(t *testing.T) {
		f := newFixture(t, 1)
		running := f.computeAsync(context.Background(), batch(item("run", "alpha", params{Operation: "sum", Tag: "run", Wait: "ctx"})))
		f.started("run")
		queued := f.computeAsync(context.Background(), batch(item("queued", "alpha", params{Operation: "sum", Tag: "queued", Wait: "ctx"})))
		f.waitPool("one queued", func(p executor.PoolSnapshot) bool { return p.Queued == 1 })
		if err := f.e.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown() = %v", err)
		}
		if p := f.e.Pool(); p.Available || p.Pending != 0 || p.Active != 0 || p.Completed != 2 || p.Failed != 2 {
			t.Errorf("pool after Shutdown = %+v", p)
		}
		for ch, code := range map[<-chan answer]toolerr.Code{
			running: toolerr.ExecutionLimit, // what the engine said
			queued:  toolerr.ServiceUnavailable,
		} {
			ans := await(t, ch)
			if ans.err != nil {
				t.Fatalf("Compute() = %v", ans.err)
			}
			wantCode(t, ans.res.Results[0].Error, code)
		}
		_, err := f.e.Compute(context.Background(), batch(item("c", "alpha", params{Operation: "echo"})))
		wantCode(t, err, toolerr.ServiceUnavailable)
	})
	t.Run("engine that does not return", func(t *testing.T) {
		f := newFixture(t, 1)
		ch := f.computeAsync(context.Background(), batch(item("s", "alpha", params{Operation: "sum", Tag: "s", Wait: "stubborn"})))
		f.started("s")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := f.e.Shutdown(ctx); !errors.Is(err, executor.ErrShutdownIncomplete) {
			t.Fatalf("Shutdown() = %v, want ErrShutdownIncomplete", err)
		}
		if p := f.e.Pool(); p.Available || p.Pending != 1 || p.Active != 1 {
			t.Errorf("pool = %+v, want the running job's lane and credit held", p)
		}
		f.r.release("s")
		if err := f.e.Shutdown(context.Background()); err != nil {
			t.Fatalf("second Shutdown() = %v", err)
		}
		if ans := await(t, ch); ans.err != nil || !ans.res.Results[0].Succeeded {
			t.Errorf("Compute() = %+v, %v, want the engine's late success", ans.res, ans.err)
		}
	})
}

// Metrics are measured or nil, never invented, and an outcome is a
// success or an error, never both.
func TestMetrics(t *testing.T) {
	f := newFixture(t, 2)
	res := f.compute(batch(
		item("ok", "alpha", params{Operation: "sum", Mode: "fuel"}),
		item("unknown", "gamma", params{Operation: "sum"}),
		item("late", "alpha", params{Operation: "sum", Mode: "timeout"})))
	ok, unknown, late := res.Results[0].Metrics, res.Results[1].Metrics, res.Results[2].Metrics

	observed := func(name string, v *time.Duration, want bool) {
		t.Helper()
		if (v != nil) != want || (v != nil && *v < 0) {
			t.Errorf("%s = %v, want observed %v", name, v, want)
		}
	}
	for _, c := range []struct {
		name string
		m    executor.Metrics
		want [9]bool // queue, startup, input, compute, output, serialization, execution, cleanup, total
	}{
		{"success", ok, [9]bool{true, false, false, true, false, true, true, true, true}},
		{"refusal", unknown, [9]bool{false, false, false, false, false, false, false, false, true}},
		{"engine failure", late, [9]bool{true, true, false, false, false, false, true, false, true}},
	} {
		m := c.m
		for i, v := range []*time.Duration{m.QueueWait, m.Startup, m.InputValidation, m.Compute, m.OutputValidation,
			m.Serialization, m.Execution, m.Cleanup, m.Total} {
			observed(fmt.Sprintf("%s metric %d", c.name, i), v, c.want[i])
		}
	}
	if *ok.Total < *ok.Execution || *ok.Total < *ok.QueueWait {
		t.Errorf("total %v is shorter than execution %v or queue wait %v", *ok.Total, *ok.Execution, *ok.QueueWait)
	}
	if *ok.Compute != 2*time.Millisecond || *ok.Cleanup != time.Nanosecond {
		t.Errorf("engine phases %v, %v, want the engine's 2ms and 1ns", *ok.Compute, *ok.Cleanup)
	}

	for i, c := range []struct {
		name                     string
		success, execution, fuel bool
		memory                   bool
		code                     toolerr.Code
	}{
		{name: "success", success: true, execution: true, fuel: true, memory: true},
		{name: "refusal", code: toolerr.UnknownTool},
		{name: "engine failure", execution: true, memory: true, code: toolerr.ExecutionTimeout},
	} {
		r := res.Results[i]
		if r.Succeeded != c.success || (r.Result != nil) != c.success || (r.Error == nil) != c.success ||
			(r.ExecutionID != "") != c.execution || (r.Resources.FuelUsed != nil) != c.fuel || (r.Resources.Memory != nil) != c.memory {
			t.Errorf("%s = %+v", c.name, r)
		}
		if c.code != "" {
			wantCode(t, r.Error, c.code)
		}
	}
	if fuel := res.Results[0].Resources.FuelUsed; *fuel != 12345 {
		t.Errorf("fuel used = %d, want the engine's 12345", *fuel)
	}
}

func TestBatchRequestTimeout(t *testing.T) {
	f := newFixture(t, 2)
	bad := item("x", "alpha", params{})
	bad.Parameters = []byte(`not json`)
	tests := []struct {
		name  string
		items []executor.Item
		want  time.Duration
	}{
		{"none", nil, 20 * time.Second},
		{"default operation", []executor.Item{item("a", "alpha", params{Operation: "sum"})}, 20 * time.Second},
		{"largest wins", []executor.Item{item("a", "alpha", params{Operation: "sum"}), item("b", "alpha", params{Operation: "plan"})}, 59 * time.Second},
		{"unresolvable items ignored", []executor.Item{item("a", "gamma", params{Operation: "plan"}), item("b", "broken", params{Operation: "value"}), item("c", "alpha", params{Operation: "nope"}), bad}, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.e.BatchRequestTimeout(tt.items); got != tt.want {
				t.Errorf("BatchRequestTimeout() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	snap := func() *registry.Snapshot { return registry.NewSnapshot(1, nil, nil) }
	incoherent := policy.DefaultPlatform()
	incoherent.RequestTimeoutMS = 1
	for _, tt := range []struct {
		name string
		cfg  executor.Config
	}{
		{"incoherent platform", executor.Config{Platform: incoherent, Snapshot: snap}},
		{"negative lanes", executor.Config{Lanes: -1, Snapshot: snap}},
		{"no snapshot", executor.Config{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := executor.New(tt.cfg); !errors.Is(err, executor.ErrConfig) {
				t.Errorf("New() = %v, want ErrConfig", err)
			}
		})
	}

	e, err := executor.New(executor.Config{Snapshot: func() *registry.Snapshot { return nil }})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer e.Shutdown(context.Background())
	if p := e.Pool(); p.Lanes != 2 || !p.Available || p.Resources.MemoryCapacityBytes != 2*policy.GiB {
		t.Errorf("default pool = %+v", p)
	}
	_, err = e.Compute(context.Background(), batch(item("c", "alpha", params{Operation: "sum"})))
	wantCode(t, err, toolerr.ServiceUnavailable) // no snapshot published yet
}

package executor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The whole suite again with every service on a Prompt engine: a one-item
// batch then runs inline, on Compute's goroutine, and must keep every
// admission, queue, lane, deadline, cancellation, shutdown and outcome
// rule the goroutine path keeps (TestCancellation's "before queueing"
// states the one difference: a test hook that holds the item holds
// Compute too).
func TestInline(t *testing.T) {
	promptEngines = true
	defer func() { promptEngines = false }()
	for _, tt := range []struct {
		name string
		test func(*testing.T)
	}{
		{"HeterogeneousBatchInOrder", TestHeterogeneousBatchInOrder},
		{"ItemRefusals", TestItemRefusals},
		{"EngineOutcomes", TestEngineOutcomes},
		{"Job", TestJob},
		{"Admission", TestAdmission},
		{"Settled", TestSettled},
		{"AdmissionUnderContention", TestAdmissionUnderContention},
		{"AdmissionWait", TestAdmissionWait},
		{"AdmissionWaitEnds", TestAdmissionWaitEnds},
		{"Cancellation", TestCancellation},
		{"QueueTimeout", TestQueueTimeout},
		{"Quarantine", TestQuarantine},
		{"Shutdown", TestShutdown},
		{"Metrics", TestMetrics},
		{"BatchRequestTimeout", TestBatchRequestTimeout},
		{"RequestDeadline", TestRequestDeadline},
	} {
		t.Run(tt.name, tt.test)
	}
}

// A one-item batch of a Prompt engine runs on Compute's goroutine; a
// larger batch, and any batch of an engine that is not Prompt, runs its
// items on goroutines.
func TestInlineRunsOnTheCallersGoroutine(t *testing.T) {
	promptEngines = true
	f := newFixture(t, 2)
	promptEngines = false
	f.compute(batch(item("one", "alpha", params{Operation: "echo"})))
	f.compute(batch(item("two-0", "alpha", params{Operation: "echo"}), item("two-1", "alpha", params{Operation: "echo"})))
	f.r.mu.Lock()
	inline, onGoroutine := f.r.inline, f.r.onGoroutine
	f.r.mu.Unlock()
	if inline != 1 || onGoroutine != 2 {
		t.Errorf("jobs inline = %d, on goroutines = %d, want 1 and 2", inline, onGoroutine)
	}
	if p := f.e.Pool(); p.Pending != 0 || p.Active != 0 || p.Completed != 3 {
		t.Errorf("pool = %+v", p)
	}
}

// Batch.Deadline is the request deadline: it ends the job's context, and
// a batch that has no outcome by then is answered with an error wrapping
// context.DeadlineExceeded, its credit kept until its engine returns; an
// item that waits for a lane past it ends without a job.
func TestRequestDeadline(t *testing.T) {
	t.Run("while running", func(t *testing.T) {
		f := newFixture(t, 1)
		b := batch(item("slow", "alpha", params{Operation: "sum", Tag: "slow", Wait: "ctx"}))
		b.Deadline = time.Now().Add(50 * time.Millisecond)
		deadlineOrFailure(t, f, b, toolerr.ExecutionLimit)
		f.returned("slow")
		_, deadlines := f.r.Jobs()
		if len(deadlines) != 1 || !deadlines[0].Equal(b.Deadline) {
			t.Errorf("job context deadlines = %v, want the request deadline %v", deadlines, b.Deadline)
		}
		p := f.waitIdle()
		if p.Completed != 1 || p.Failed != 1 || p.Degraded != 0 || p.Resources.MemoryReservedBytes != 0 {
			t.Errorf("pool = %+v", p)
		}
		f.fullBatch()
	})
	t.Run("while queued", func(t *testing.T) {
		f := newFixture(t, 1)
		running := f.computeAsync(context.Background(), batch(item("run", "alpha", params{Operation: "sum", Tag: "run", Wait: "ctx"})))
		f.started("run")
		b := batch(item("queued", "alpha", params{Operation: "echo"}))
		b.Deadline = time.Now().Add(50 * time.Millisecond)
		deadlineOrFailure(t, f, b, toolerr.QueueTimeout)
		f.r.release("run")
		if ans := await(t, running); ans.err != nil || succeeded(ans.res) != 1 {
			t.Fatalf("running batch = %+v, %v", ans.res, ans.err)
		}
		p := f.waitIdle()
		if p.Completed != 2 || p.Failed != 1 || f.r.Calls() != 1 {
			t.Errorf("pool = %+v, runner calls = %d, want the queued item failed without a job", p, f.r.Calls())
		}
		f.fullBatch()
	})
	t.Run("met", func(t *testing.T) {
		f := newFixture(t, 1)
		b := batch(item("quick", "alpha", params{Operation: "echo"}))
		b.Deadline = time.Now().Add(time.Minute)
		res := f.compute(b)
		if succeeded(res) != 1 {
			t.Fatalf("batch = %+v", res)
		}
		_, deadlines := f.r.Jobs()
		if jobs, _ := f.r.Jobs(); !deadlines[0].Equal(jobs[0].Hard) {
			t.Errorf("job context deadline = %v, want the hard deadline %v (before the request's)", deadlines[0], jobs[0].Hard)
		}
	})
	t.Run("shutdown of an inline job", func(t *testing.T) {
		f := newFixture(t, 1)
		ch := f.computeAsync(context.Background(), batch(item("run", "alpha", params{Operation: "sum", Tag: "run", Wait: "ctx"})))
		f.started("run")
		if err := f.e.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown() = %v", err)
		}
		ans := await(t, ch)
		if ans.err != nil {
			t.Fatalf("Compute() = %v", ans.err)
		}
		wantCode(t, ans.res.Results[0].Error, toolerr.ExecutionLimit) // what the engine said once cancelled
		if p := f.e.Pool(); p.Pending != 0 || p.Active != 0 || p.Available {
			t.Errorf("pool = %+v", p)
		}
	})
}

// deadlineOrFailure runs b, whose deadline passes before its one item
// can succeed: Compute answers context.DeadlineExceeded or, on
// goroutines, the item's failure with code when the item ended before
// Compute looked (the batch's context ends both at once). An inline run
// always answers the deadline.
func deadlineOrFailure(t *testing.T, f *fixture, b executor.Batch, code toolerr.Code) {
	t.Helper()
	res, err := f.e.Compute(context.Background(), b)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
	case err == nil && !promptEngines && failed(res) == 1:
		wantCode(t, res.Results[0].Error, code)
	default:
		t.Fatalf("Compute() = %+v, %v, want context.DeadlineExceeded", res, err)
	}
}

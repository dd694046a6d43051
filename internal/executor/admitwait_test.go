package executor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// smallPlatform has four pending items per process, so that one batch of
// four blocked items fills it.
func smallPlatform() policy.Platform {
	p := policy.DefaultPlatform()
	p.MaxPendingItemsPerProcess = 4
	return p
}

// fill admits a batch of four items that block until
// released (tags w0..w3) and returns where its answer arrives.
func (f *fixture) fill() <-chan answer {
	f.t.Helper()
	items := make([]executor.Item, 4)
	for i := range items {
		items[i] = item(fmt.Sprintf("w%d", i), "alpha", params{Operation: "sum", Tag: fmt.Sprintf("w%d", i), Wait: "ctx"})
	}
	ch := f.computeAsync(context.Background(), batch(items...))
	f.waitPool("4 pending", func(p executor.PoolSnapshot) bool { return p.Pending == 4 })
	return ch
}

// waiting returns a one-item batch that waits for credit.
func waiting(it executor.Item) executor.Batch {
	b := batch(it)
	b.Wait = true
	return b
}

func (f *fixture) waitAdmitting(n int) {
	f.t.Helper()
	f.waitPool(fmt.Sprintf("%d batches waiting", n), func(executor.PoolSnapshot) bool { return executor.Admitting(f.e) == n })
}

// A batch with Wait that finds the process's pending items full waits for
// them and is admitted in arrival order, instead of being refused; past
// the bound of waiters, and without Wait, it is refused at once.
func TestAdmissionWait(t *testing.T) {
	f := newFixtureConfig(t, executor.Config{Lanes: 4, Platform: smallPlatform(), AdmissionWaiters: 2})
	full := f.fill()
	f.started("w0", "w1", "w2", "w3")

	x1 := f.computeAsync(context.Background(), waiting(item("x1", "alpha", params{Operation: "sum", Tag: "x1", Wait: "ctx"})))
	f.waitAdmitting(1)
	x2 := f.computeAsync(context.Background(), waiting(item("x2", "alpha", params{Operation: "echo", Value: 2})))
	f.waitAdmitting(2)

	_, err := f.e.Compute(context.Background(), waiting(item("x3", "alpha", params{Operation: "echo"})))
	wantCode(t, err, toolerr.QueueFull) // past the two waiters
	_, err = f.e.Compute(context.Background(), batch(item("y", "alpha", params{Operation: "echo"})))
	wantCode(t, err, toolerr.QueueFull) // no Wait (seed-000 compute)

	f.r.release("w0")
	f.started("x1") // x1, the first to come, took the freed item
	if n := executor.Admitting(f.e); n != 1 {
		t.Fatalf("%d batches waiting once x1 started, want x2", n)
	}
	if p := f.e.Pool(); p.Pending != 4 {
		t.Fatalf("pool after one item ended: %+v, want 4 pending", p)
	}
	f.r.release("w1", "w2", "w3")
	if ans := await(t, x2); ans.err != nil || succeeded(ans.res) != 1 {
		t.Fatalf("x2 = %+v, %v", ans.res, ans.err)
	}
	f.r.release("x1")
	for name, ch := range map[string]<-chan answer{"fill": full, "x1": x1} {
		if ans := await(t, ch); ans.err != nil || failed(ans.res) != 0 {
			t.Fatalf("%s = %+v, %v", name, ans.res, ans.err)
		}
	}
	if p := f.waitIdle(); p.Completed != 6 || p.Failed != 0 {
		t.Errorf("pool = %+v, want 6 completed", p)
	}
}

// A waiting batch ends without credit, and without running, when the
// platform's queue budget passes (queue_timeout), when its context ends,
// when its request deadline passes, or at Shutdown (service_unavailable);
// the batches behind it keep waiting, and none of it leaks credit.
func TestAdmissionWaitEnds(t *testing.T) {
	t.Run("queue budget", func(t *testing.T) {
		p := smallPlatform()
		p.QueueTimeoutMS = 20
		f := newFixtureConfig(t, executor.Config{Lanes: 4, Platform: p})
		full := f.fill()
		f.started("w0", "w1", "w2", "w3")
		_, err := f.e.Compute(context.Background(), waiting(item("x", "alpha", params{Operation: "echo"})))
		wantCode(t, err, toolerr.QueueTimeout)
		f.r.release("w0", "w1", "w2", "w3")
		if ans := await(t, full); ans.err != nil || succeeded(ans.res) != 4 {
			t.Fatalf("fill = %+v, %v", ans.res, ans.err)
		}
		f.waitIdle()
		if n := f.r.Calls(); n != 4 {
			t.Errorf("runner calls = %d, want 4: the refused batch ran", n)
		}
	})
	t.Run("context and deadline", func(t *testing.T) {
		f := newFixtureConfig(t, executor.Config{Lanes: 4, Platform: smallPlatform()})
		full := f.fill()
		f.started("w0", "w1", "w2", "w3")
		ctx, cancel := context.WithCancel(context.Background())
		gone := f.computeAsync(ctx, waiting(item("gone", "alpha", params{Operation: "echo"})))
		f.waitAdmitting(1)
		stays := f.computeAsync(context.Background(), waiting(item("stays", "alpha", params{Operation: "echo"})))
		f.waitAdmitting(2)
		late := waiting(item("late", "alpha", params{Operation: "echo"}))
		late.Deadline = time.Now().Add(20 * time.Millisecond)
		_, err := f.e.Compute(context.Background(), late)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiter past its deadline: %v; want context.DeadlineExceeded", err)
		}
		cancel()
		if ans := await(t, gone); !errors.Is(ans.err, context.Canceled) {
			t.Errorf("cancelled waiter = %+v, %v; want context.Canceled", ans.res, ans.err)
		}
		f.waitAdmitting(1)
		f.r.release("w0", "w1", "w2", "w3")
		await(t, full)
		if ans := await(t, stays); ans.err != nil || succeeded(ans.res) != 1 {
			t.Fatalf("the waiter that stayed = %+v, %v", ans.res, ans.err)
		}
		if p := f.waitIdle(); p.Completed != 5 {
			t.Errorf("pool = %+v, want the 4 filling items and the one that stayed", p)
		}
		f.fullBatch()
	})
	t.Run("shutdown", func(t *testing.T) {
		f := newFixtureConfig(t, executor.Config{Lanes: 4, Platform: smallPlatform()})
		full := f.fill()
		f.started("w0", "w1", "w2", "w3")
		w := f.computeAsync(context.Background(), waiting(item("x", "alpha", params{Operation: "echo"})))
		f.waitAdmitting(1)
		if err := f.e.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown() = %v", err)
		}
		wantCode(t, await(t, w).err, toolerr.ServiceUnavailable)
		await(t, full)
		if n := f.r.Calls(); n != 4 {
			t.Errorf("runner calls = %d, want 4", n)
		}
	})
}

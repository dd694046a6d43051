package executor

import (
	"context"
	"time"

	"toolhost/internal/toolerr"
)

// waiter is an item queued for a lane. A lane released while items wait
// is handed to the first waiter directly (granted, ready closed), so
// lanes go out in queue order and are never counted free in between.
type waiter struct {
	ready   chan struct{}
	granted bool // guarded by Executor.mu
}

// acquire takes a lane for an item, waiting in first-come order until
// deadline (the batch's admission plus the operation's queue budget).
// It refuses with queue_timeout when the deadline passes,
// service_unavailable when every lane is quarantined, and the outcome of
// [Executor.cancelled] when ctx ends. A lane handed over as the wait ended is kept:
// the caller checks ctx before starting a job.
func (e *Executor) acquire(ctx context.Context, deadline time.Time) *toolerr.Error {
	e.mu.Lock()
	switch {
	case e.degraded >= e.lanes:
		e.mu.Unlock()
		return toolerr.New(toolerr.ServiceUnavailable)
	case !time.Now().Before(deadline):
		e.mu.Unlock()
		return toolerr.New(toolerr.QueueTimeout)
	case e.free > 0 && e.waiters.Len() == 0:
		e.free--
		e.active++
		e.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	el := e.waiters.PushBack(w)
	e.mu.Unlock()

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var refusal *toolerr.Error
	select {
	case <-w.ready:
		return nil
	case <-timer.C:
		refusal = toolerr.New(toolerr.QueueTimeout)
	case <-ctx.Done():
		refusal = e.cancelled(ctx)
	case <-e.lost:
		refusal = toolerr.New(toolerr.ServiceUnavailable)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if w.granted {
		return nil
	}
	e.waiters.Remove(el)
	return refusal
}

// releaseLane returns a lane whose job's cleanup is confirmed, or that
// started no job, with the memory the job reserved: to the first waiter,
// or to the free lanes.
func (e *Executor) releaseLane(memory int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reserved -= memory
	if front := e.waiters.Front(); front != nil {
		w := e.waiters.Remove(front).(*waiter)
		w.granted = true
		close(w.ready)
		return
	}
	e.active--
	e.free++
}

// quarantine retires the lane of a job whose cleanup is not confirmed. Its
// memory stays reserved: the job may still hold it. When the last lane is
// retired, waiting items are told at once.
func (e *Executor) quarantine() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.active--
	e.degraded++
	if e.degraded == e.lanes {
		close(e.lost)
	}
}

// reserve records the memory limit of a job about to start.
func (e *Executor) reserve(memory int64) {
	e.mu.Lock()
	e.reserved += memory
	e.mu.Unlock()
}

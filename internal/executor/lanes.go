package executor

import (
	"time"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// waiter is an item queued for a lane. A lane released while items wait
// is handed to the first waiter directly (granted, ready closed), so
// lanes go out in queue order and are never counted free in between.
type waiter struct {
	ready   chan struct{}
	granted bool // guarded by Executor.mu
}

// acquire takes a lane for an item of r, waiting in first-come order
// until deadline (the batch's admission plus the operation's queue
// budget, or an inline run's earlier request deadline). It refuses with
// queue_timeout when the deadline passes, service_unavailable when every
// lane is quarantined, and the outcome of [Executor.cancelled] when the
// batch's context ends or Shutdown begins. A lane handed over as the wait
// ended is kept: the caller checks the context before starting a job.
func (e *Executor) acquire(r *run, deadline time.Time) *toolerr.Error {
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
	case <-r.ctx.Done():
		refusal = e.cancelled(r)
	case <-e.stop.Done():
		refusal = e.cancelled(r)
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

// releaseLane returns a lane that started no job.
func (e *Executor) releaseLane(memory int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseLaneLocked(memory)
}

// endJob ends the job of an item of r whose Run has returned: its lane
// goes back with the memory it reserved when its cleanup is confirmed,
// and is quarantined otherwise; an inline run's job is no longer
// Shutdown's to cancel.
func (e *Executor) endJob(r *run, confirmed bool, memory int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.inline {
		delete(e.inline, r)
	}
	if confirmed {
		e.releaseLaneLocked(memory)
	} else {
		e.quarantineLocked()
	}
}

// releaseLaneLocked returns a lane whose job's cleanup is confirmed, or
// that started no job, with the memory the job reserved: to the first
// waiter, or to the free lanes. e.mu is held.
func (e *Executor) releaseLaneLocked(memory int64) {
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

// quarantineLocked retires the lane of a job whose cleanup is not
// confirmed. Its memory stays reserved: the job may still hold it. When
// the last lane is retired, waiting items are told at once. e.mu is held.
func (e *Executor) quarantineLocked() {
	e.active--
	e.degraded++
	if e.degraded == e.lanes {
		close(e.lost)
	}
}

package wasmtool

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// phaseClock follows the phase a load's goroutine is in and the deadline
// of that phase, and settles who owns the load's outcome: the waiting
// caller, or — once the caller has abandoned the work — the goroutine,
// which then discards it.
type phaseClock struct {
	mu        sync.Mutex
	phase     string
	deadline  time.Time
	changed   chan struct{} // signalled when the phase changes
	finished  bool          // the work returned
	abandoned bool          // the caller gave up on it
	obs       *Observer     // told of each phase and of the abandon
}

// enter starts phase with its deadline.
func (c *phaseClock) enter(phase string, timeout time.Duration) {
	c.mu.Lock()
	again := c.phase == phase // runPhases enters the first phase, then host does
	c.phase, c.deadline = phase, time.Now().Add(timeout)
	c.mu.Unlock()
	if !again {
		c.obs.phase(phase, timeout)
	}
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// current is the phase and its deadline.
func (c *phaseClock) current() (string, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase, c.deadline
}

// abandon gives up on the work unless it has finished or, when phase is
// set, moved past phase or got a later deadline. It reports whether the
// work is now abandoned, and tells the observer under c.mu, so that its
// Abandoned is called before the goroutine's finish can report Released.
func (c *phaseClock) abandon(phase string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return false
	}
	if phase != "" && (c.phase != phase || time.Now().Before(c.deadline)) {
		return false
	}
	c.abandoned = true
	c.obs.abandoned(c.phase)
	return true
}

// finish records that the work returned and reports whether it was
// abandoned (its outcome is then the goroutine's to discard).
func (c *phaseClock) finish() (abandoned bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	return c.abandoned
}

// runPhases runs work on its own goroutine in a load slot, starting in
// phase first; work calls enter as it moves to each next phase. It
// returns work's outcome, or abandons the work when its current phase
// outlasts the phase's timeout (a LoadTimeout naming the phase) or when
// ctx ends (ctx's error). Abandoned work has its context cancelled, keeps
// its slot until it returns, and its outcome is passed to discard when
// work reports no error. The context's [Observer], if any, is told of
// the wait for a slot, of each phase, and of the abandon and the release.
func runPhases[T any](l *Loader, ctx context.Context, first string,
	work func(ctx context.Context, enter func(phase string)) (T, error), discard func(T)) (T, error) {
	return runPhasesIn(l.slots, l.timeout, ctx, first, work, discard)
}

// runPhasesIn is runPhases in one of slots (the loader's load slots, or
// its promotion slots), each phase under timeout(phase).
func runPhasesIn[T any](slots chan struct{}, timeout func(phase string) time.Duration, ctx context.Context, first string,
	work func(ctx context.Context, enter func(phase string)) (T, error), discard func(T)) (T, error) {
	var zero T
	obs := observerOf(ctx)
	obs.phase(PhaseQueued, 0)
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for a load slot: %w", ctx.Err())
	}
	wctx, cancel := context.WithCancel(ctx)
	clock := &phaseClock{changed: make(chan struct{}, 1), obs: obs}
	clock.enter(first, timeout(first))
	<-clock.changed
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		abandoned := false
		defer func() {
			// Told once the slot is back: abandoned work is bounded by
			// MaxLoads until then.
			if abandoned {
				obs.released()
			}
		}()
		defer func() { <-slots }()
		defer cancel()
		v, err := work(wctx, func(phase string) { clock.enter(phase, timeout(phase)) })
		if abandoned = clock.finish(); abandoned {
			if err == nil {
				discard(v)
			}
			return
		}
		done <- outcome{v, err}
	}()
	for {
		phase, deadline := clock.current()
		timer := time.NewTimer(time.Until(deadline))
		select {
		case o := <-done:
			timer.Stop()
			return o.v, o.err
		case <-clock.changed:
			timer.Stop()
		case <-timer.C:
			if clock.abandon(phase) {
				cancel()
				return zero, &LoadError{Reason: LoadTimeout, Detail: phase,
					Err: fmt.Errorf("the %s phase did not end within %v", phase, timeout(phase))}
			}
		case <-ctx.Done():
			timer.Stop()
			if clock.abandon("") {
				cancel()
				return zero, fmt.Errorf("loading: %w", ctx.Err())
			}
		}
	}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Serve serves HTTP on l until Shutdown; it returns http.ErrServerClosed
// after a shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.log.Info("serving", "addr", l.Addr().String(), "tools_dir", s.cfg.ToolsDir,
		"services", len(s.registry.Snapshot().Services()))
	s.serving.Store(true)
	return s.http.Serve(l)
}

// ErrShutdownDeadline is returned by Shutdown when its context's deadline
// came before the teardown ended; what is left of it goes on in the
// background, told to stop.
var ErrShutdownDeadline = errors.New("server: the shutdown's deadline passed before the teardown ended")

// Shutdown drains and stops the process: /readyz turns 503 and, after
// Config.DrainDelay (at most half the drain) during which requests are
// still served and new connections accepted, the listener closes;
// requests in flight get until ctx's deadline less a cleanup
// reserve to finish (then their connections are closed), the jobs stop,
// the executor and the supervisor cancel and reap what is left within the
// reserve, the abuse log writes its pending rows, then the registry
// (abandoning the loads still running), the runtime and the store close.
//
// With a deadline, Shutdown returns by it whatever a load, an item or a
// request is doing: the reserve is the platform's cleanup budget, or half
// the time left when that is shorter, and a teardown still running at the
// deadline is left to end in the background, its contexts ended, and
// ErrShutdownDeadline returned. Without a deadline, requests get as long
// as they take and the teardown the cleanup budget after them. It is safe
// to call more than once: later calls wait for the first one's teardown.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.api.Drain()
		s.shutDone = make(chan struct{})
		drain, cleanup, cancel := s.shutdownBudgets(ctx)
		go func() {
			defer close(s.shutDone)
			defer cancel()
			s.drainDelay(drain)
			err := s.http.Shutdown(drain)
			// Requests still running past the drain have their items
			// cancelled by the teardown, get a moment to answer, and
			// then their connections close.
			s.shutErr = errors.Join(err, s.teardown(drain, cleanup, err != nil))
		}()
	})
	var deadline <-chan time.Time
	if d, ok := ctx.Deadline(); ok {
		t := time.NewTimer(time.Until(d))
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-s.shutDone:
		return s.shutErr
	case <-deadline:
		return ErrShutdownDeadline
	}
}

// drainDelay waits Config.DrainDelay, or half of what is left of drain
// when that is shorter, or until drain ends, with the listener open:
// /readyz already answers 503, other requests are served, and keep-alive
// connections close after their next answer (idle ones at once), so that
// their clients reconnect through a load balancer that has seen the 503.
// It returns at once for a process that never served.
func (s *Server) drainDelay(drain context.Context) {
	d := s.cfg.DrainDelay
	if d <= 0 || !s.serving.Load() {
		return
	}
	if deadline, ok := drain.Deadline(); ok {
		d = min(d, time.Until(deadline)/2)
	}
	s.http.SetKeepAlivesEnabled(false)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-drain.Done():
	}
}

// shutdownBudgets splits ctx's time between draining requests and tearing
// down: drain ends a cleanup reserve before ctx's deadline, cleanup at it
// (and not earlier when ctx is cancelled before it); without a deadline,
// drain is ctx and cleanup has the cleanup budget from when it is first
// used. cancel releases both.
func (s *Server) shutdownBudgets(ctx context.Context) (drain, cleanup context.Context, cancel context.CancelFunc) {
	budget := time.Duration(s.cfg.Platform.CleanupTimeoutMS) * time.Millisecond
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, nil, func() {}
	}
	reserve := min(budget, time.Until(deadline)/2)
	drain, cancelDrain := context.WithDeadline(ctx, deadline.Add(-reserve))
	cleanup, cancelCleanup := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	return drain, cleanup, func() { cancelDrain(); cancelCleanup() }
}

// close releases everything New opened, in reverse order, after a failed
// New.
func (s *Server) close(ctx context.Context) error { return s.teardown(ctx, nil, false) }

// lateAnswerWait is how long requests that outlived the drain get to
// answer once their items are cancelled, before their connections close.
const lateAnswerWait = 500 * time.Millisecond

// teardown releases everything New opened, in reverse order: what waits
// for requests and jobs gets until drain ends, what cancels and reaps
// gets until cleanup ends (nil: the platform's cleanup budget from the
// moment the jobs have stopped). With late, requests are still running:
// once the executor has cancelled their items they get lateAnswerWait to
// answer, then their connections are closed.
func (s *Server) teardown(drain, cleanup context.Context, late bool) error {
	ctx := drain
	var errs []error
	if s.jobs != nil {
		// First the jobs stop taking work: running handlers get until
		// drain ends to finish, then their contexts end, which cancels
		// their items in the executor, and the subsystem waits for them
		// within its StopGrace (the cleanup budget). Only then does the
		// executor close, with what is left for it.
		errs = append(errs, s.jobs.Close(ctx))
	}
	// Past the drain (requests that outlived it), the executor and the
	// supervisor still get the cleanup reserve to cancel and reap items.
	cctx := cleanup
	if cctx == nil {
		budget := time.Duration(s.cfg.Platform.CleanupTimeoutMS) * time.Millisecond
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), budget)
		defer cancel()
	}
	if s.executor != nil {
		errs = append(errs, s.executor.Shutdown(cctx))
	}
	if s.supervisor != nil {
		// Whatever the executor could not reap in its budget is killed
		// here, its subtree confirmed gone.
		errs = append(errs, s.supervisor.Close(cctx))
	}
	if late && s.http != nil {
		actx, cancel := context.WithTimeout(cctx, lateAnswerWait)
		if err := s.http.Shutdown(actx); err != nil {
			errs = append(errs, s.http.Close())
		}
		cancel()
	}
	if s.abuse != nil {
		// What the abuse log's writer has not stored yet is written
		// within the cleanup budget, before abandoned loads can take
		// what is left of it. No request records anything any more.
		errs = append(errs, s.abuse.Shutdown(cctx))
	}
	// Semaphore slots still held lapse with their leases.
	errs = append(errs, s.shared.close())
	if s.registry != nil {
		// Loads still running are abandoned: Close returns promptly
		// whatever they do, and waits for running items within cctx.
		errs = append(errs, s.registry.Close(cctx))
	}
	if s.loader != nil {
		// Abandoned work (a compile wazero cannot interrupt) gets the
		// rest of the reserve to end before the runtime closes under it.
		if err := s.loader.Wait(cctx); err != nil {
			errs = append(errs, fmt.Errorf("closing the loader: %w", err))
		}
	}
	if s.runtime != nil {
		errs = append(errs, s.runtime.Close(cctx))
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

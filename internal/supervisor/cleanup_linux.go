// Cleanup of a job's whole process subtree after every outcome: SIGTERM,
// a grace period, SIGKILL to everything (the cgroup frozen first where it
// can be), the wait until nothing of the job is left, the reaping of the
// worker and the release of what the supervisor held of it.

package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sys/unix"
)

// cleanupBudget is the job's cleanup budget.
func (w *worker) cleanupBudget() time.Duration {
	if ms := w.job.Operation.CleanupTimeoutMS; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return DefaultCleanupTimeout
}

// cleanup ends the worker's whole process tree and confirms it: SIGTERM to
// the process group and every process of the job, a grace period, then
// SIGKILL to everything (the cgroup frozen first where possible); then it
// waits until nothing of the job is left, reaps the worker, reads the
// cgroup's memory counters and, once the cgroup is confirmed empty, has
// it removed in the background (Supervisor.removeEmpty). It runs after
// every outcome. It reports whether memory was breached and the peak.
func (w *worker) cleanup() (breached bool, peak *int64, err error) {
	defer w.release()
	budget := w.cleanupBudget()
	deadline := time.Now().Add(budget)
	w.stopMonitor()
	if w.cg == nil {
		w.observe() // the latest descendants, before anything dies
	}
	grace := min(w.s.cfg.TermGrace, budget/2)
	w.signalAll(unix.SIGTERM)
	if !w.waitGone(time.Now().Add(grace)) {
		w.escalated = true
		w.log.Info("supervisor: the job did not end on SIGTERM; killing it")
		w.killAll(deadline)
		if !w.waitGone(deadline) {
			if w.isExited() {
				w.reap() // no zombie left behind, at least
			}
			return false, nil, errors.New("processes of the job are still running at the cleanup deadline")
		}
	}
	w.reap()
	breached = w.observed
	if w.cg != nil {
		if n, ok := w.cg.oomKills(); ok {
			breached = n > 0
		} else {
			// No OOM-kill counter: a worker killed by SIGKILL that the
			// supervisor did not send, in a cgroup that hit its limit.
			breached = w.status.Signaled() && w.status.Signal() == unix.SIGKILL && !w.escalated && w.cg.failures()
		}
		if n, ok := w.cg.peak(); ok {
			peak = &n
		}
		if pids, err := w.cg.procs(); err != nil || len(pids) > 0 {
			return breached, peak, fmt.Errorf("the job cgroup is not confirmed empty: %d processes, %v", len(pids), err)
		}
		w.s.removeEmpty(w.cg, w.cleanupBudget())
	} else if w.sampled {
		n := w.peakSampled
		peak = &n
	}
	return breached, peak, nil
}

// signalAll sends sig to the worker's process group and to every process
// of the job: the cgroup's, or the observed tree's. Every signal but the
// group's goes through a pidfd checked against the job.
func (w *worker) signalAll(sig unix.Signal) {
	var failed signalFailures
	defer failed.log(w.log, sig)
	w.signalGroup(sig, &failed)
	if w.cg != nil {
		pids, _ := w.cg.procs()
		for _, pid := range pids {
			if pid == w.pid && !w.reaped {
				// The group's signal reached it: a session leader
				// cannot leave its process group.
				continue
			}
			failed.add(signalOwned(pid, sig, w.cg.contains))
		}
		return
	}
	for _, p := range w.observe() {
		failed.add(signalOwned(p.PID, sig, w.tree.owns))
	}
}

// signalGroup sends sig to the worker's process group while the worker
// is unreaped: it pins its pid, which is its group's id, and that group
// is never the supervisor's own.
func (w *worker) signalGroup(sig unix.Signal, failed *signalFailures) {
	if w.reaped || w.pid == unix.Getpgrp() {
		return
	}
	if err := unix.Kill(-w.pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		failed.add(fmt.Errorf("signalling process group %d: %w", w.pid, err))
	}
}

// signalFailures counts the signals of one round that did not reach a
// process of the job, for one line of the log: such a process outlives
// its signal until the next round, or the cleanup deadline. A process
// gone (ESRCH) or no longer the job's (errNotOwned) is not a failure.
type signalFailures struct {
	n     int
	first error
}

func (f *signalFailures) add(err error) {
	if err == nil || errors.Is(err, errNotOwned) {
		return
	}
	if f.first == nil {
		f.first = err
	}
	f.n++
}

func (f *signalFailures) log(log *slog.Logger, sig unix.Signal) {
	if f.n > 0 {
		log.Warn("supervisor: signalling the job's processes", "signal", sig.String(), "failures", f.n, "error", f.first)
	}
}

// killAll kills every process of the job. A cgroup is frozen, killed and
// thawed (or killed at once through cgroup.kill). An observed tree is
// stopped member by member until a scan finds none running, so that
// nothing forks or detaches in between, then killed.
func (w *worker) killAll(deadline time.Time) {
	var failed signalFailures
	defer failed.log(w.log, unix.SIGKILL)
	w.signalGroup(unix.SIGKILL, &failed)
	if w.cg != nil {
		if err := w.cg.kill(deadline); err != nil {
			w.log.Warn("supervisor: killing the job cgroup", "error", err)
		}
		return
	}
	for time.Now().Before(deadline) {
		live := w.observe()
		running := 0
		for _, p := range live {
			if p.State != 'T' && p.State != 't' {
				running++
				failed.add(signalOwned(p.PID, unix.SIGSTOP, w.tree.owns))
			}
		}
		if running == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, p := range w.observe() {
		failed.add(signalOwned(p.PID, unix.SIGKILL, w.tree.owns))
	}
}

// waitGone waits until nothing of the job runs, or until. It polls, from
// every millisecond up to every 20, and wakes at once when the worker
// exits.
func (w *worker) waitGone(until time.Time) bool {
	delay := time.Millisecond
	for {
		if w.gone() {
			return true
		}
		left := time.Until(until)
		if left <= 0 {
			return false
		}
		exited := w.exited
		if w.isExited() {
			exited = nil // already seen: only the timer wakes
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-exited:
		case <-t.C:
		}
		t.Stop()
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// isExited reports whether the worker has exited.
func (w *worker) isExited() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// gone reports whether nothing of the job runs: the worker has exited and
// the cgroup is empty, or no member of the observed tree is alive.
func (w *worker) gone() bool {
	if !w.isExited() {
		return false
	}
	if w.cg != nil {
		pids, err := w.cg.procs()
		return err == nil && len(pids) == 0
	}
	for _, p := range w.observe() {
		if p.PID != w.pid {
			return false
		}
	}
	return true
}

// reap collects the exited worker's status.
func (w *worker) reap() {
	if w.reaped {
		return
	}
	for {
		_, err := unix.Wait4(w.pid, &w.status, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	w.reaped = true
}

// release closes the supervisor's ends of the pipes and the pidfd, which
// ends the helper goroutines, and waits for them. Closing them loses
// nothing (a pipe holds no buffer of ours): a failure is a double close,
// a bug, and is logged.
func (w *worker) release() {
	w.stopMonitor()
	close(w.stopRead)
	close(w.stopWatch)
	errs := []error{w.resultR.Close(), w.jobW.Close(), w.stderrR.Close()}
	if w.pidfd != nil {
		errs = append(errs, w.pidfd.Close())
	}
	w.helpers.Wait()
	errs = append(errs, w.proc.Release())
	if err := errors.Join(errs...); err != nil {
		w.log.Warn("supervisor: releasing the worker's pipes", "error", err)
	}
}

// exitText describes how the worker ended, for the log.
func (w *worker) exitText() string {
	switch {
	case !w.reaped:
		return "not reaped"
	case w.status.Signaled():
		return "signal " + w.status.Signal().String()
	default:
		return fmt.Sprintf("exit status %d", w.status.ExitStatus())
	}
}

// removeEmpty removes the directories of a job cgroup that cleanup
// confirmed empty, in the background: removing it in every hierarchy
// takes ≈ 0.35 ms on cgroup v1 here, which the item need not wait for —
// its process tree is confirmed gone, and nothing of the job is left in
// the cgroup to charge or kill. Close waits for every removal before it
// removes this process's cgroups; a removal that fails is logged and
// counted (Stats.CgroupRemovalsFailed), and the directory is left to
// Close or to the next start's reaping.
func (s *Supervisor) removeEmpty(cg jobGroup, budget time.Duration) {
	s.removing.Go(func() {
		if err := cg.remove(time.Now().Add(budget)); err != nil {
			s.removeFailures.Add(1)
			s.log.Warn("supervisor: removing an emptied job cgroup", "error", err)
		}
	})
}

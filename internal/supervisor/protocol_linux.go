// The protocol with one worker: the ready frame checked against the
// kernel; then, at hand-off (at once for a fresh worker, when an item
// takes it for a spare), the job cgroup, the ACK, the job frame, and the
// wait for the result frame under the hard deadline, a memory breach or
// the context's end; and how each way the wait can fail is classified.

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// errSpareGone is returned by handOff when a spare turns out to have died
// before its Taken byte, or its cgroup refused the job's limit: it never
// began the job, which gets a fresh worker.
var errSpareGone = errors.New("the spare worker is gone")

// awaitReady waits for the worker's ready frame until deadline (the item's
// hard deadline: the hard budget includes startup) or ctx's end, and
// checks it against the kernel. It returns the job's error.
func (w *worker) awaitReady(ctx context.Context, deadline time.Time) error {
	hard := time.NewTimer(time.Until(deadline))
	defer hard.Stop()
	var f frameRead
	select {
	case f = <-w.frames:
	case <-w.exited:
		return w.crashed("the worker exited before its ready frame", nil)
	case <-hard.C:
		w.log.Warn("supervisor: no ready frame before the hard deadline")
		return toolerr.New(toolerr.ExecutionTimeout)
	case <-ctx.Done():
		return w.ended(ctx)
	}
	if errors.Is(f.err, io.EOF) {
		return w.crashed("the worker closed its pipe before its ready frame", nil)
	}
	if f.err != nil {
		return w.crashed("reading the ready frame", f.err)
	}
	if err := w.verify(f.payload); err != nil {
		return w.crashed("refusing the ready frame", err)
	}
	return nil
}

// handOff gives the verified worker its job: in the cgroup modes it makes
// the job's cgroup with the job's memory limit and places the worker in
// it, or, for a spare, which waits in a job cgroup of its own, sets the
// job's limit there; then it starts the memory monitor,
// writes the ACK and the job frame, and waits for the result frame under
// the hard deadline, a memory breach or the context's end. It returns the
// job's error (nil with out.Result set on success), or errSpareGone for a
// spare that ended before its Taken byte.
func (w *worker) handOff(ctx context.Context, out *engine.Outcome) error {
	hard := time.NewTimer(time.Until(w.job.Hard))
	defer hard.Stop()
	if ctx.Err() != nil {
		return w.ended(ctx)
	}
	switch {
	case w.s.sys.cg == nil:
	case w.cg != nil:
		// A spare waits in its job cgroup already, under the spare limit:
		// the job's limit replaces it.
		if err := w.cg.setLimit(w.job.Operation.MemoryLimitBytes); err != nil {
			w.log.Warn("supervisor: the spare's job cgroup refused the job's limit", "error", err)
			return errSpareGone
		}
	default:
		cg, err := w.s.sys.cg.newJob(w.s.sys.jobName(w.job.ExecutionID), w.job.Operation.MemoryLimitBytes)
		if err != nil {
			w.log.Error("supervisor: making the job cgroup", "error", err)
			return toolerr.New(toolerr.ServiceUnavailable)
		}
		w.cg = cg
		if err := w.cg.add(w.pid); err != nil {
			w.log.Error("supervisor: placing the worker in its job cgroup", "error", err)
			return toolerr.New(toolerr.ServiceUnavailable)
		}
	}
	if w.spare && w.hasExited() {
		return errSpareGone
	}
	w.startMonitor()

	// The ACK and the job frame go in one write: the worker wakes once.
	mono := monotonicNS()
	msg, err := appendFrame([]byte{ACK}, jobFrame{
		Frame:                 kindJob,
		ExecutionID:           w.job.ExecutionID,
		Package:               w.pkgName,
		ToolCode:              w.job.ToolCode,
		ContractVersion:       w.svc.def.ContractVersion,
		ImplementationVersion: w.svc.def.ImplementationVersion,
		SchemaFingerprint:     w.svc.def.Fingerprint,
		Operation:             w.job.Operation.Name,
		Policy:                w.job.Operation,
		SoftDeadlineNS:        mono + int64(time.Until(w.job.Soft)),
		HardDeadlineNS:        mono + int64(time.Until(w.job.Hard)),
		Parameters:            w.job.Parameters,
		Files:                 w.job.Files,
		OutDir:                w.job.OutDir,
		ScratchDir:            w.scratch,
	})
	if err != nil {
		w.log.Error("supervisor: encoding the job frame", "error", err)
		return toolerr.New(toolerr.ExecutionFailed)
	}
	// The job pipe (os.Pipe: non-blocking, polled) takes deadlines; without
	// one a worker that never reads would hold the item past its deadline.
	if err := w.jobW.SetWriteDeadline(w.job.Hard); err != nil {
		w.log.Error("supervisor: setting the job pipe's deadline", "error", err)
		return toolerr.New(toolerr.ExecutionFailed)
	}
	stop := context.AfterFunc(ctx, func() {
		if err := w.jobW.SetWriteDeadline(time.Now()); err != nil {
			w.log.Warn("supervisor: cutting the job pipe's write short", "error", err)
		}
	})
	defer stop()
	out.Phases.Startup = engine.Duration(time.Since(w.began))
	n, err := w.jobW.Write(msg)
	if n > 0 {
		close(w.acked)
	}
	if err != nil {
		if n == 0 && w.spare && errors.Is(err, syscall.EPIPE) && ctx.Err() == nil {
			return errSpareGone // it never saw the ACK
		}
		return w.writeFailed(ctx, err)
	}

	var f frameRead
	select {
	case f = <-w.frames:
	case <-w.exited:
		// A frame written just before the exit is in the pipe already.
		linger := time.NewTimer(resultLinger)
		defer linger.Stop()
		select {
		case f = <-w.frames:
		case <-linger.C:
			if w.goneBeforeTaken(ctx) {
				return errSpareGone
			}
			return w.crashed("the worker exited without a result frame", nil)
		}
	case <-w.breach:
		return toolerr.New(toolerr.MemoryLimit)
	case <-hard.C:
		return toolerr.New(toolerr.ExecutionTimeout)
	case <-ctx.Done():
		return w.ended(ctx)
	}
	if errors.Is(f.err, io.EOF) {
		if w.goneBeforeTaken(ctx) {
			return errSpareGone
		}
		return w.crashed("the worker closed its pipe without a result frame", nil)
	}
	if f.err != nil {
		return w.crashed("reading the result frame", f.err)
	}
	if !time.Now().Before(w.job.Hard) {
		return toolerr.New(toolerr.ExecutionTimeout)
	}
	return w.accept(f.payload, out)
}

// goneBeforeTaken reports whether a spare ended before its Taken byte,
// while the item still stood: a signal from outside landed while it
// idled, after take's last look, so it never began the job.
func (w *worker) goneBeforeTaken(ctx context.Context) bool {
	select {
	case <-w.taken:
		return false
	default:
	}
	return w.spare && ctx.Err() == nil && time.Now().Before(w.job.Hard)
}

// ended is the error of a job whose context ended: its deadline is the
// hard deadline (execution_timeout); a cancellation (the client left, the
// executor or the supervisor shut down) is service_unavailable.
func (w *worker) ended(ctx context.Context) error { return endedError(ctx, w.job) }

// endedError is the error of job when ctx ended.
func endedError(ctx context.Context, job engine.Job) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || !time.Now().Before(job.Hard) {
		return toolerr.New(toolerr.ExecutionTimeout)
	}
	return toolerr.New(toolerr.ServiceUnavailable)
}

// writeFailed classifies a failed write to the worker.
func (w *worker) writeFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil || !time.Now().Before(w.job.Hard) {
		return w.ended(ctx)
	}
	return w.crashed("writing to the worker", err)
}

// crashed logs a platform failure of the worker and returns worker_crashed.
func (w *worker) crashed(what string, err error) error {
	w.log.Warn("supervisor: "+what, "error", err)
	return toolerr.New(toolerr.WorkerCrashed)
}

// verify checks the ready frame against the kernel: the worker id, the
// pid of the supervisor's own child, a process group and session of its
// own, and its start time, so that no other process (a reused pid) is
// ever taken for the worker.
func (w *worker) verify(payload []byte) error {
	var r readyFrame
	if err := decodeFrame(payload, kindReady, &r); err != nil {
		return err
	}
	st, err := readStat(w.pid)
	switch {
	case r.Protocol != Protocol:
		return fmt.Errorf("protocol %d, want %d", r.Protocol, Protocol)
	case r.WorkerID != w.id:
		return errors.New("the ready frame is for another worker")
	case r.PID != w.pid:
		return fmt.Errorf("the ready frame names pid %d, the worker is %d", r.PID, w.pid)
	case r.PGID != r.PID:
		return fmt.Errorf("the ready frame names process group %d, not the worker's own", r.PGID)
	case err != nil:
		return fmt.Errorf("reading the worker's /proc stat: %w", err)
	case st.PPID != os.Getpid() || st.PGID != w.pid || st.SID != w.pid:
		return fmt.Errorf("the kernel shows ppid %d, process group %d, session %d", st.PPID, st.PGID, st.SID)
	case st.StartTime != r.StartTime || st.StartTime != w.self.StartTime:
		return fmt.Errorf("start time %d, the kernel shows %d", r.StartTime, st.StartTime)
	}
	return nil
}

// One job from start to outcome: the worker and what the supervisor holds
// of it, and run, which takes a spare worker or starts a fresh one, runs
// the protocol (the job's cgroup is made at hand-off), cleans up, and
// settles the job's verdict (a memory breach or a failed cleanup overrides
// what the worker said).

package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Timing constants of one job. None of them is a test expectation.
const (
	// sampleInterval is how often a running job's memory is checked: the
	// observed mode sums the tree's resident memory at most this far apart
	// (the contract asks for at most 50 ms).
	sampleInterval = 20 * time.Millisecond
	// resultLinger is how long the supervisor still reads a result frame
	// after the worker exited: a frame already in the pipe takes
	// microseconds; a truncated one never completes.
	resultLinger = 250 * time.Millisecond
	// maxStderrBytes bounds the worker's stderr kept for the log.
	maxStderrBytes = 16 << 10
	// maxMessageBytes bounds a tool error's message, as the guest ABI does.
	maxMessageBytes = 512
)

// frameRead is one frame read by the reader goroutine.
type frameRead struct {
	payload []byte
	err     error
}

// worker is one worker process and everything the supervisor holds of it,
// from spawn to confirmed cleanup. A spare is a worker without a job yet:
// the job's fields are set at hand-off (assign), before the ACK.
type worker struct {
	s   *Supervisor
	log *slog.Logger
	// id is the worker's id, in its environment and its ready frame.
	id string

	// The job, set by assign.
	job     engine.Job
	scratch string // the item's scratch folder (Config.ScratchDir)
	pkgName string
	svc     *service
	cg      jobGroup // nil in observed mode, and until the hand-off
	// began is when the item began waiting for this worker: the spawn of
	// a fresh worker, the hand-off of a spare. Its startup phase runs from
	// there to the ACK.
	began time.Time
	spare bool
	// ahead marks a worker started as a spare, before any item: its
	// environment says so (EnvSpare).
	ahead bool

	spawned time.Time
	proc    *os.Process
	pid     int
	// self is the worker's identity, read by the supervisor from /proc
	// while the worker is its unreaped child.
	self  identity
	pidfd *os.File // nil when the kernel has no pidfd

	jobW, resultR, stderrR *os.File
	stderr                 tail

	frames chan frameRead
	acked  chan struct{}
	// taken is closed when the worker's Taken byte arrives: it began the
	// job.
	taken     chan struct{}
	stopRead  chan struct{}
	exited    chan struct{}
	stopWatch chan struct{}
	helpers   sync.WaitGroup
	// claimed is closed when a spare leaves the pool, which ends its idle
	// watch; discarded, set before, says it leaves to be reaped, not for
	// an item.
	claimed   chan struct{}
	discarded bool

	breach      chan struct{}
	breachOnce  sync.Once
	monitorStop chan struct{}
	monitorDone chan struct{}
	tree        *tree
	peakSampled int64
	sampled     bool
	observed    bool // process_tree_observed: a sampled breach

	escalated bool
	reaped    bool
	status    unix.WaitStatus
}

// newWorker returns a worker not yet spawned, with a fresh id.
func (s *Supervisor) newWorker() *worker {
	id := newWorkerID()
	return &worker{
		s: s, id: id, log: s.log.With("worker_id", id),
		frames: make(chan frameRead, 2), acked: make(chan struct{}), taken: make(chan struct{}), stopRead: make(chan struct{}),
		exited: make(chan struct{}), stopWatch: make(chan struct{}), breach: make(chan struct{}),
		claimed: make(chan struct{}),
	}
}

// newWorkerID returns a random worker id.
func newWorkerID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// assign gives the worker its job; it happens before the ACK, and before
// any goroutine of the worker reads the job's fields.
func (w *worker) assign(pkgName string, svc *service, job engine.Job, scratch string, began time.Time) {
	w.job, w.pkgName, w.svc, w.began, w.scratch = job, pkgName, svc, began, scratch
	w.log = w.s.log.With("execution_id", job.ExecutionID, "tool_code", job.ToolCode, "worker_id", w.id)
}

// run runs one job in a worker — a spare when one is ready, else a fresh
// one — and cleans up after it. scratch is the item's scratch folder,
// which the caller removes once run returns.
func (s *Supervisor) run(ctx context.Context, pkgName string, svc *service, job engine.Job, scratch string) (*engine.Outcome, error) {
	if ctx.Err() != nil {
		return nil, endedError(ctx, job) // nothing started
	}
	began := time.Now()
	out := &engine.Outcome{Memory: &engine.Memory{Mode: s.mode, LimitBytes: job.Operation.MemoryLimitBytes}}
	var verdict error
	w := s.spares.take()
	if w != nil {
		w.assign(pkgName, svc, job, scratch, began)
		verdict = w.handOff(ctx, out)
		if errors.Is(verdict, errSpareGone) {
			// The spare died between its last check and its Taken byte:
			// it never began the job. It is cleaned up, and the item gets
			// a fresh worker.
			w.log.Warn("supervisor: the spare worker could not take the item; a fresh worker runs it")
			if _, _, err := w.cleanup(); err != nil {
				s.quarantined()
				w.log.Error("supervisor: job cleanup not confirmed; the lane is quarantined", "error", err)
				return out, toolerr.New(toolerr.CleanupFailed)
			}
			s.spares.lostAtHandOff()
			w = nil
		}
	}
	if w == nil {
		s.freshWorkers.Add(1)
		w = s.newWorker()
		w.assign(pkgName, svc, job, scratch, began)
		if err := w.spawn(); err != nil {
			w.log.Error("supervisor: starting the worker", "error", err)
			return nil, toolerr.New(toolerr.ServiceUnavailable)
		}
		if verdict = w.awaitReady(ctx, job.Hard); verdict == nil {
			verdict = w.handOff(ctx, out)
		}
	}
	cleanupStart := time.Now()
	breached, peak, err := w.cleanup()
	if w.spare {
		s.spares.signal() // its replacement starts after the item, beside the next one
	}
	if err == nil {
		out.Phases.Cleanup = engine.Duration(time.Since(cleanupStart))
	}
	if peak != nil {
		out.Memory.PeakBytes = peak
	}
	if err != nil {
		s.quarantined()
		w.log.Error("supervisor: job cleanup not confirmed; the lane is quarantined", "error", err)
		out.Result = nil
		return out, toolerr.New(toolerr.CleanupFailed)
	}
	if breached {
		if code, _ := toolerr.CodeOf(verdict); code != toolerr.ServiceUnavailable {
			out.Result = nil
			verdict = toolerr.New(toolerr.MemoryLimit)
		}
	}
	if code, _ := toolerr.CodeOf(verdict); code == toolerr.MemoryLimit {
		var peakBytes any // null when unobserved
		if peak != nil {
			peakBytes = *peak
		}
		w.log.Info("supervisor: the job breached its memory limit", "memory_mode", s.mode,
			"limit_bytes", job.Operation.MemoryLimitBytes, "peak_bytes", peakBytes)
	}
	if code, _ := toolerr.CodeOf(verdict); code == toolerr.WorkerCrashed {
		w.log.Warn("supervisor: worker crashed", "exit", w.exitText(), "stderr", w.stderr.String())
	} else if w.stderr.Len() > 0 {
		w.log.Debug("supervisor: worker stderr", "stderr", w.stderr.String())
	}
	if verdict != nil {
		out.Result = nil
		return out, verdict
	}
	return out, nil
}

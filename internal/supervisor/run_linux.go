// One job from start to outcome: the worker and what the supervisor holds
// of it, and run, which makes the job's cgroup, starts the worker, runs the
// protocol, cleans up, and settles the job's verdict (a memory breach or a
// failed cleanup overrides what the worker said).

package supervisor

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"toolhost/internal/engine"
	"toolhost/internal/toolerr"
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

// worker is one job's worker process and everything the supervisor holds
// of it, from spawn to confirmed cleanup.
type worker struct {
	s       *Supervisor
	log     *slog.Logger
	job     engine.Job
	pkgName string
	svc     *service
	cg      jobGroup // nil in observed mode

	spawned time.Time
	proc    *os.Process
	pid     int
	// self is the worker's identity, read by the supervisor from /proc
	// while the worker is its unreaped child.
	self  identity
	pidfd *os.File // nil when the kernel has no pidfd

	jobW, resultR, stderrR *os.File
	stderr                 tail

	frames    chan frameRead
	acked     chan struct{}
	stopRead  chan struct{}
	exited    chan struct{}
	stopWatch chan struct{}
	helpers   sync.WaitGroup

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

// run runs one job in a fresh worker and cleans up after it.
func (s *Supervisor) run(ctx context.Context, pkgName string, svc *service, job engine.Job) (*engine.Outcome, error) {
	w := &worker{
		s: s, job: job, pkgName: pkgName, svc: svc,
		log:    s.log.With("execution_id", job.ExecutionID, "tool_code", job.ToolCode),
		frames: make(chan frameRead, 2), acked: make(chan struct{}), stopRead: make(chan struct{}),
		exited: make(chan struct{}), stopWatch: make(chan struct{}), breach: make(chan struct{}),
	}
	if ctx.Err() != nil {
		return nil, w.ended(ctx) // nothing started
	}
	w.spawned = time.Now()
	if s.sys.cg != nil {
		cg, err := s.sys.cg.newJob(s.sys.jobName(job.ExecutionID), job.Operation.MemoryLimitBytes)
		if err != nil {
			w.log.Error("supervisor: making the job cgroup", "error", err)
			return nil, toolerr.New(toolerr.ServiceUnavailable)
		}
		w.cg = cg
	}
	if err := w.spawn(); err != nil {
		w.log.Error("supervisor: starting the worker", "error", err)
		if w.cg != nil {
			if err := w.cg.remove(time.Now().Add(w.cleanupBudget())); err != nil {
				s.quarantined()
				w.log.Error("supervisor: removing the unused job cgroup", "error", err)
				return nil, toolerr.New(toolerr.CleanupFailed)
			}
		}
		return nil, toolerr.New(toolerr.ServiceUnavailable)
	}
	out := &engine.Outcome{Memory: &engine.Memory{Mode: s.mode, LimitBytes: job.Operation.MemoryLimitBytes}}
	verdict := w.supervise(ctx, out)
	cleanupStart := time.Now()
	breached, peak, err := w.cleanup()
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

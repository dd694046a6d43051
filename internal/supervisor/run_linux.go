package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"

	"toolhost/internal/engine"
	"toolhost/internal/toolerr"
	"toolhost/internal/wire"
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

// workerEnv lists the server's environment variables a worker inherits.
var workerEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"}

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

// env returns the worker's environment.
func (s *Supervisor) env(executionID string) []string {
	var env []string
	for _, k := range workerEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, s.cfg.Env...)
	return append(env, EnvExecutionID+"="+executionID)
}

// spawn starts the worker in a new session with the protocol pipes on
// fds 3 and 4, and starts the goroutines that read its frames and stderr
// and watch for its exit.
func (w *worker) spawn() (err error) {
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		return r, w
	}
	jobR, jobW := pipe()
	resultR, resultW := pipe()
	stderrR, stderrW := pipe()
	if err != nil {
		for _, f := range []*os.File{jobR, jobW, resultR, resultW, stderrR, stderrW} {
			if f != nil {
				f.Close()
			}
		}
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	closers = append(closers, jobR, resultW, stderrW)
	if err != nil {
		closers = append(closers, jobW, resultR, stderrR)
		return err
	}
	closers = append(closers, devnull)

	exe := w.s.cfg.Executable
	if exe == "" {
		exe = "/proc/self/exe"
	}
	pidfd := -1
	argv := append([]string{os.Args[0]}, w.s.cfg.Args...)
	p, err := os.StartProcess(exe, argv, &os.ProcAttr{
		Env:   w.s.env(w.job.ExecutionID),
		Files: []*os.File{devnull, devnull, stderrW, jobR, resultW},
		Sys: &syscall.SysProcAttr{
			Setsid: true,
			// The worker dies with the supervisor; its descendants are
			// reaped with the stale cgroups at the next start.
			Pdeathsig: syscall.SIGKILL,
			PidFD:     &pidfd,
		},
	})
	if err != nil {
		closers = append(closers, jobW, resultR, stderrR)
		return fmt.Errorf("starting %s: %w", exe, err)
	}
	w.proc, w.pid = p, p.Pid
	w.jobW, w.resultR, w.stderrR = jobW, resultR, stderrR
	w.self = identity{PID: w.pid}
	if st, err := readStat(w.pid); err == nil {
		// An unreaped child keeps its pid: this is the worker.
		w.self = st.identity()
	}
	if pidfd >= 0 {
		if err := unix.SetNonblock(pidfd, true); err == nil {
			w.pidfd = os.NewFile(uintptr(pidfd), "pidfd")
		} else {
			unix.Close(pidfd)
		}
	}
	w.helpers.Add(3)
	go w.readFrames()
	go w.readStderr()
	go w.watchExit()
	return nil
}

// readFrames reads the ready frame, then, once the ACK is sent, the result
// frame: each by its length, never waiting for the pipe's end.
func (w *worker) readFrames() {
	defer w.helpers.Done()
	payload, err := readFrame(w.resultR, MaxReadyFrameBytes)
	w.frames <- frameRead{payload, err}
	if err != nil {
		return
	}
	select {
	case <-w.acked:
	case <-w.stopRead:
		return
	}
	payload, err = readFrame(w.resultR, int(w.job.Operation.MaxResultBytes)+FrameReserveBytes)
	w.frames <- frameRead{payload, err}
}

// readStderr keeps the head of the worker's stderr for the log.
func (w *worker) readStderr() {
	defer w.helpers.Done()
	io.Copy(&w.stderr, w.stderrR)
}

// watchExit closes w.exited when the worker has exited, without reaping
// it: until it is reaped its pid, and so its process group's id, cannot
// be reused, which keeps signals to the group safe.
func (w *worker) watchExit() {
	defer w.helpers.Done()
	if w.pidfd == nil {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if exitedPID(w.pid) {
				close(w.exited)
				return
			}
			select {
			case <-t.C:
			case <-w.stopWatch:
				return
			}
		}
	}
	rc, err := w.pidfd.SyscallConn()
	if err != nil {
		return
	}
	done := false
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		switch {
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			return false
		case err != nil:
			done = true // ECHILD: nothing left to wait for
		default:
			done = siginfoPID(&info) != 0
		}
		return done
	})
	if err == nil && done {
		close(w.exited)
	}
}

// exitedPID reports whether the child pid has exited, without reaping it.
func exitedPID(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || siginfoPID(&info) != 0
}

// siginfoPID returns si_pid of a SIGCHLD siginfo: the first member of the
// union that follows three ints, aligned to the pointer size.
func siginfoPID(info *unix.Siginfo) int32 {
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}

// supervise runs the protocol and waits for the job's end. It returns the
// job's error (nil with out.Result set on success).
func (w *worker) supervise(ctx context.Context, out *engine.Outcome) error {
	hard := time.NewTimer(time.Until(w.job.Hard))
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
	if w.cg != nil {
		if err := w.cg.add(w.pid); err != nil {
			w.log.Error("supervisor: placing the worker in its job cgroup", "error", err)
			return toolerr.New(toolerr.ServiceUnavailable)
		}
	}
	w.startMonitor()

	w.jobW.SetWriteDeadline(w.job.Hard)
	stop := context.AfterFunc(ctx, func() { w.jobW.SetWriteDeadline(time.Now()) })
	defer stop()
	if _, err := w.jobW.Write([]byte{ACK}); err != nil {
		return w.writeFailed(ctx, err)
	}
	out.Phases.Startup = engine.Duration(time.Since(w.spawned))
	close(w.acked)
	mono := monotonicNS()
	err := writeFrame(w.jobW, jobFrame{
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
	})
	if err != nil {
		return w.writeFailed(ctx, err)
	}

	select {
	case f = <-w.frames:
	case <-w.exited:
		// A frame written just before the exit is in the pipe already.
		linger := time.NewTimer(resultLinger)
		defer linger.Stop()
		select {
		case f = <-w.frames:
		case <-linger.C:
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

// ended is the error of a job whose context ended: its deadline is the
// hard deadline (execution_timeout); a cancellation (the client left, the
// executor or the supervisor shut down) is service_unavailable.
func (w *worker) ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || !time.Now().Before(w.job.Hard) {
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

// verify checks the ready frame against the kernel: the execution, the
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
	case r.ExecutionID != w.job.ExecutionID:
		return errors.New("the ready frame is for another execution")
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

// accept turns the result frame into the outcome. The supervisor does not
// trust the frame more than the worker: the result is decoded strictly,
// validated against the output schema and re-encoded canonically; an error
// is kept to the codes a worker may send, with sanitised issues.
func (w *worker) accept(payload []byte, out *engine.Outcome) error {
	var rf resultFrame
	if err := decodeFrame(payload, kindResult, &rf); err != nil {
		return w.crashed("refusing the result frame", err)
	}
	if rf.ExecutionID != w.job.ExecutionID {
		return w.crashed("refusing the result frame", errors.New("it is for another execution"))
	}
	out.Phases.InputValidation = phase(rf.Phases.InputValidation)
	out.Phases.Compute = phase(rf.Phases.Compute)
	out.Phases.OutputValidation = phase(rf.Phases.OutputValidation)
	out.Phases.Serialization = phase(rf.Phases.Serialization)
	switch {
	case rf.Error != nil && rf.Result == nil:
		e, ok := w.sanitize(rf.Error)
		if !ok {
			return w.crashed("refusing the result frame", fmt.Errorf("unknown error code %q", rf.Error.Code))
		}
		return e
	case rf.Error == nil && rf.Result != nil:
	default:
		return w.crashed("refusing the result frame", errors.New("it holds neither or both of result and error"))
	}
	limit := int(w.job.Operation.MaxResultBytes)
	doc, err := wire.Decode(rf.Result, wire.Limits{MaxBytes: limit, MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooLarge) {
			return toolerr.New(toolerr.OutputLimitExceeded)
		}
		return toolerr.New(toolerr.InvalidOutput, toolerr.NewIssue("invalid_json"))
	}
	if err := w.svc.output.Validate(doc, toolerr.InvalidOutput); err != nil {
		return err
	}
	if out.Result, err = wire.Encode(doc, wire.Limits{MaxBytes: limit}); err != nil {
		return toolerr.New(toolerr.OutputLimitExceeded)
	}
	return nil
}

// phase converts a phase of the result frame; nil stays unobserved, and a
// negative value is not a measurement.
func phase(ns *int64) *time.Duration {
	if ns == nil || *ns < 0 {
		return nil
	}
	return engine.Duration(time.Duration(*ns))
}

// sanitize rebuilds an error the worker sent. A code the platform alone
// decides (worker_crashed, memory_limit, cleanup_failed, admission and
// lookup codes) becomes execution_failed; an unknown code is a protocol
// violation (false). Issues are sanitised again and bounded; a message is
// cut to 512 bytes of valid UTF-8; the retryable flag is the worker's for a
// tool's own error (one with a message) and the platform rule otherwise.
func (w *worker) sanitize(e *toolerr.Error) (*toolerr.Error, bool) {
	if !e.Code.Known() {
		return nil, false
	}
	switch e.Code {
	case toolerr.CleanupFailed, toolerr.WorkerCrashed, toolerr.MemoryLimit, toolerr.QueueFull, toolerr.QueueTimeout,
		toolerr.ServiceUnavailable, toolerr.UnknownTool, toolerr.ToolUnavailable, toolerr.InvalidOperationPolicy:
		w.log.Warn("supervisor: the worker sent a code only the platform decides", "code", e.Code)
		return toolerr.New(toolerr.ExecutionFailed), true
	}
	issues := make([]toolerr.Issue, 0, min(len(e.Issues), toolerr.MaxIssues))
	for _, is := range e.Issues[:min(len(e.Issues), toolerr.MaxIssues)] {
		code := is.Code
		if len(code) > 64 || !safeIssueCode(code) {
			code = "invalid"
		}
		issues = append(issues, toolerr.NewIssue(code, is.Path...))
	}
	retryable := e.Code.Retryable()
	msg := clip(e.Message, maxMessageBytes)
	if msg != "" {
		retryable = e.Retryable
	}
	out := toolerr.Raised(e.Code, retryable, issues...)
	out.Message = msg
	if e.IssueCount > out.IssueCount && e.IssueCount <= 1<<20 {
		out.IssueCount = e.IssueCount
	}
	return out, true
}

// safeIssueCode reports whether an issue code is a plain identifier.
func safeIssueCode(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// clip cuts s to at most n bytes of valid UTF-8.
func clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // replaces invalid bytes
	}
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// startMonitor starts the job's memory monitor: the OOM-kill count of its
// cgroup, or the observed tree's resident memory, at most sampleInterval
// apart. A breach closes w.breach.
func (w *worker) startMonitor() {
	if w.cg == nil {
		w.tree = newTree(w.self)
	}
	w.monitorStop, w.monitorDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.monitorDone)
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		for {
			if w.sample() {
				w.breachOnce.Do(func() { close(w.breach) })
			}
			select {
			case <-w.monitorStop:
				return
			case <-t.C:
			}
		}
	}()
}

// stopMonitor stops the monitor and waits for it; afterwards the tree and
// the samples belong to the caller.
func (w *worker) stopMonitor() {
	if w.monitorStop != nil {
		close(w.monitorStop)
		<-w.monitorDone
		w.monitorStop = nil
	}
}

// sample checks the job's memory once and reports a breach.
func (w *worker) sample() bool {
	if w.cg != nil {
		n, ok := w.cg.oomKills()
		return ok && n > 0
	}
	live := w.observe()
	var rss int64
	for _, p := range live {
		rss += p.RSSPages
	}
	rss *= w.s.sys.pageSize
	if !w.sampled || rss > w.peakSampled {
		w.peakSampled, w.sampled = rss, true
	}
	if rss > w.job.Operation.MemoryLimitBytes {
		w.observed = true
		return true
	}
	return false
}

// observe scans /proc and returns the tree's live members. It is used
// only by the monitor, or after the monitor stopped.
func (w *worker) observe() []procStat {
	if w.tree == nil {
		w.tree = newTree(w.self)
	}
	procs, err := scanProcs()
	if err != nil {
		return nil
	}
	return w.tree.update(procs)
}

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
// cgroup's memory counters and removes it. It runs after every outcome.
// It reports whether memory was breached and the peak.
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
		if err := w.cg.remove(deadline); err != nil {
			return breached, peak, err
		}
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
	if !w.reaped && w.pid != unix.Getpgrp() {
		// The unreaped worker pins its pid, which is its group's id, and
		// that group is never the supervisor's own.
		unix.Kill(-w.pid, sig)
	}
	if w.cg != nil {
		pids, _ := w.cg.procs()
		for _, pid := range pids {
			signalOwned(pid, sig, w.cg.contains)
		}
		return
	}
	for _, p := range w.observe() {
		signalOwned(p.PID, sig, w.tree.owns)
	}
}

// killAll kills every process of the job. A cgroup is frozen, killed and
// thawed (or killed at once through cgroup.kill). An observed tree is
// stopped member by member until a scan finds none running, so that
// nothing forks or detaches in between, then killed.
func (w *worker) killAll(deadline time.Time) {
	if !w.reaped && w.pid != unix.Getpgrp() {
		unix.Kill(-w.pid, unix.SIGKILL)
	}
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
				signalOwned(p.PID, unix.SIGSTOP, w.tree.owns)
			}
		}
		if running == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, p := range w.observe() {
		signalOwned(p.PID, unix.SIGKILL, w.tree.owns)
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
// ends the helper goroutines, and waits for them.
func (w *worker) release() {
	w.stopMonitor()
	close(w.stopRead)
	close(w.stopWatch)
	w.resultR.Close()
	w.jobW.Close()
	w.stderrR.Close()
	if w.pidfd != nil {
		w.pidfd.Close()
	}
	w.helpers.Wait()
	w.proc.Release()
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

// tail keeps the first maxStderrBytes written to it.
type tail struct {
	mu      sync.Mutex
	buf     []byte
	dropped int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(len(p), maxStderrBytes-len(t.buf))
	t.buf = append(t.buf, p[:n]...)
	t.dropped += len(p) - n
	return len(p), nil
}

func (t *tail) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.buf)
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		return fmt.Sprintf("%s… (%d bytes more)", t.buf, t.dropped)
	}
	return string(t.buf)
}

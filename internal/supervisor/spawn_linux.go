// Starting the worker: its environment, the process in a session of its
// own with the protocol pipes, and the goroutines that read its frames and
// stderr and watch for its exit without reaping it.

package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// workerEnv lists the server's environment variables a worker inherits.
var workerEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"}

// env returns the environment of the worker with id, started as a spare
// when ahead.
func (s *Supervisor) env(workerID string, ahead bool) []string {
	var env []string
	for _, k := range workerEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, s.cfg.Env...)
	if ahead {
		env = append(env, EnvSpare+"=1")
	}
	return append(env, EnvWorkerID+"="+workerID)
}

// spawn starts the worker in a new session with the protocol pipes on
// fds 3 and 4, and starts the goroutines that read its frames and stderr
// and watch for its exit.
func (w *worker) spawn() (err error) {
	// The child's ends of the pipes and /dev/null, once it has them (and
	// every end when the start fails): closing a pipe end or /dev/null
	// loses nothing.
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close() //nolint:errcheck // a pipe end or /dev/null: nothing to lose
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
				f.Close() //nolint:errcheck // an unused pipe end: nothing to lose
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
	w.spawned = time.Now()
	p, err := os.StartProcess(exe, argv, &os.ProcAttr{
		Env:   w.s.env(w.id, w.ahead),
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
			unix.Close(pidfd) //nolint:errcheck // an unused pidfd: nothing to lose; watchExit polls instead
		}
	}
	w.helpers.Add(3)
	go w.readFrames()
	go w.readStderr()
	go w.watchExit()
	return nil
}

// readFrames reads the ready frame, then, once the ACK is sent, the result
// frame: each by its length, never waiting for the pipe's end. The job's
// result bound is read only after the ACK, when the job is assigned.
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
	var taken [1]byte
	if _, err := io.ReadFull(w.resultR, taken[:]); err != nil || taken[0] != Taken {
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: no Taken byte before the result frame", errFrameMalformed)
		}
		w.frames <- frameRead{nil, err}
		return
	}
	close(w.taken)
	payload, err = readFrame(w.resultR, int(w.job.Operation.MaxResultBytes)+FrameReserveBytes)
	w.frames <- frameRead{payload, err}
}

// readStderr keeps the head of the worker's stderr for the log.
func (w *worker) readStderr() {
	defer w.helpers.Done()
	// It ends at the worker's exit (EOF) or when release closes the pipe:
	// either way what was read is kept, and there is nothing more to read.
	io.Copy(&w.stderr, w.stderrR) //nolint:errcheck // see above
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

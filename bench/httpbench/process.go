package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// markerEnv names the environment variable every process the benchmark
// starts carries, with a value unique to the run, so that processes left
// behind (a server's own children included, where they inherit it) can be
// found by id after the servers stopped.
const markerEnv = "TOOLHOST_HTTPBENCH_RUN"

// stopGrace is how long a server has to stop after SIGTERM before its
// process group is killed. Toolhost is started with a shorter shutdown
// timeout than this.
const stopGrace = 15 * time.Second

// processes are the servers of one run. stopAll stops them all; it is
// safe to call more than once.
type processes struct {
	logDir string
	marker string
	list   []*process
}

// process is one started server: the leader of its own process group, so
// that the terminal's SIGINT reaches the driver alone and the driver
// decides how each server stops.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	stopped bool
}

func newProcesses(logDir string) *processes {
	var b [8]byte
	rand.Read(b[:])
	return &processes{logDir: logDir, marker: hex.EncodeToString(b[:])}
}

// start starts name's command with its output in a log file of logDir.
// The child gets SIGTERM if the driver dies without stopping it.
func (ps *processes) start(name string, cmd *exec.Cmd) (*process, error) {
	if err := os.MkdirAll(ps.logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(ps.logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // the child writes the log through its own descriptor
	cmd.Stdout, cmd.Stderr = f, f
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, markerEnv+"="+ps.marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		cmd.Wait() //nolint:errcheck // the exit is what stop waits for; a server stopped by a signal exits non-zero
		close(p.exited)
	}()
	ps.list = append(ps.list, p)
	return p, nil
}

// pid is the process's id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// alive reports whether the process has not exited.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process group, waits up to stopGrace, then
// kills the group. It is safe to call more than once.
func (p *process) stop() error {
	if p.stopped {
		return nil
	}
	p.stopped = true
	pgid := p.pid()
	err := signalGroup(pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		err = errors.Join(err, fmt.Errorf("%s did not stop within %s of SIGTERM; its process group was killed", p.name, stopGrace))
		err = errors.Join(err, signalGroup(pgid, syscall.SIGKILL))
		<-p.exited
	}
	// Whatever is left of the group (a child that ignored SIGTERM).
	return errors.Join(err, signalGroup(pgid, syscall.SIGKILL))
}

// signalGroup sends sig to the process group pgid; a group gone already
// (ESRCH) is no failure.
func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// stopAll stops every server, last started first, then looks for any
// process still carrying the run's marker (a server's child that escaped
// its group) and kills it by id. It returns the first problem found.
func (ps *processes) stopAll() error {
	var first error
	for i := len(ps.list) - 1; i >= 0; i-- {
		if err := ps.list[i].stop(); err != nil && first == nil {
			first = err
		}
	}
	for _, pid := range ps.marked() {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) && first == nil {
			first = fmt.Errorf("killing process %d of this run: %w", pid, err)
		}
		if first == nil {
			first = fmt.Errorf("process %d of this run was still running after its server stopped; it was killed", pid)
		}
	}
	return first
}

// marked lists the processes, other than this one, whose environment holds
// the run's marker.
func (ps *processes) marked() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(markerEnv + "=" + ps.marker)
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// tail returns the last n lines of the process's log, for an error
// message.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logLevels counts the log's lines at level WARN and ERROR (slog's text
// format, as toolhost serve writes it).
func (p *process) logLevels() (warn, errs int) {
	f, err := os.Open(p.logPath)
	if err != nil {
		return 0, 0
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.Contains(line, " level=WARN "):
			warn++
		case strings.Contains(line, " level=ERROR "):
			errs++
		}
	}
	return warn, errs
}

// cpuTicks returns the user and system clock ticks the process and its
// waited-for children used, from /proc/PID/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields count from its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime, stime, cutime, cstime are 14–17.
	if len(f) < 15 {
		return 0, errors.New("unexpected /proc stat format")
	}
	var sum int64
	for _, s := range f[11:15] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// lookPath finds a program: a name with a slash is taken as a path.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		if _, err := os.Stat(name); err != nil {
			return "", err
		}
		return filepath.Abs(name)
	}
	return exec.LookPath(name)
}

// commandOutput runs a short command and returns its trimmed output, or
// "" when it fails to start.
func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	s := strings.TrimSpace(string(out))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

//go:build linux

package supervisor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"golang.org/x/sys/unix"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// waitBound is how long a test waits for an event it polls for. It is a
// bound against hanging, never an expectation.
const waitBound = 30 * time.Second

// logBuffer collects a supervisor's log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testParent is this test process's cgroup parent, so that concurrent
// test runs do not share one.
func testParent(suffix string) string {
	return "toolhost-test-" + strconv.Itoa(os.Getpid()) + suffix
}

// modes are the memory modes the tests run under: every cgroup mode the
// host has, and the observed mode, which every Linux host has.
func modes(t testing.TB) []string {
	t.Helper()
	out := []string{}
	for _, m := range []string{engine.MemoryCgroupV2Hard, engine.MemoryCgroupV1Hard} {
		s, err := New(Config{MemoryMode: m, CgroupParent: testParent("-probe"), Logger: discard()})
		if err != nil {
			continue
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return append(out, engine.MemoryProcessTreeObserved)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(bytesDiscard{}, nil)) }

type bytesDiscard struct{}

func (bytesDiscard) Write(p []byte) (int, error) { return len(p), nil }

// sparesEnv sets the number of spare workers of the supervisors the
// tests make (default 1); TestWithoutSpares runs the tests again with 0.
const sparesEnv = "TOOLHOST_SUPERVISOR_TEST_SPARES"

// testSpares is the Spares of the supervisors the tests make.
func testSpares() int {
	if v, ok := os.LookupEnv(sparesEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(sparesEnv + " is not a number")
		}
		return n
	}
	return 1
}

// newSupervisor returns a supervisor in mode ("" detects) whose workers
// are this test binary, with env added to their environment, and
// testSpares() spares. It is closed when the test ends, and its log is
// shown when the test fails. When the workers behave, it returns once the
// first spare is ready, so that the first item is handed to it.
func newSupervisor(t *testing.T, mode string, mutate func(*Config), env ...string) (*Supervisor, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg := Config{
		Env:          append([]string{testWorkerEnv + "=1"}, env...),
		CgroupParent: testParent(""),
		MemoryMode:   mode,
		TermGrace:    300 * time.Millisecond,
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Spares:       testSpares(),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	behaves := !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, testModeEnv+"=") })
	if cfg.Spares > 0 && behaves {
		awaitSpares(t, s, 1)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("supervisor log:\n%s", logs)
		}
	})
	return s, logs
}

// awaitSpares waits until s has n spares ready.
func awaitSpares(t testing.TB, s *Supervisor, n int) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for s.Stats().SparesReady < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d spares ready: %+v", n, s.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// newID returns a fresh execution id.
func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// probeJob returns a job of the probe tool with params, the default
// operation policy changed by mutate.
func probeJob(t testing.TB, params string, mutate func(*policy.Effective)) engine.Job {
	t.Helper()
	eff, err := policy.Clamp(policy.DefaultPlatform(), policy.DefaultOperation("run"))
	if err != nil {
		t.Fatal(err)
	}
	// Generous: a worker of the race-enabled test binary on a loaded
	// machine starts slowly, and no test depends on the budget's size.
	eff.HardTimeoutMS, eff.SoftTimeoutMS = 20_000, 19_000
	if mutate != nil {
		mutate(&eff)
	}
	return engine.Job{ExecutionID: newID(), ToolCode: "probe", Operation: eff, Parameters: []byte(params)}
}

// params returns the probe's parameters for mode.
func params(mode string, extra ...string) string {
	fields := []string{`"operation":"run"`, `"mode":"` + mode + `"`}
	return "{" + strings.Join(append(fields, extra...), ",") + "}"
}

// reportFile returns a file for the worker's process report, and the
// parameter member naming it.
func reportFile(t *testing.T) (string, string) {
	f := filepath.Join(t.TempDir(), "pids")
	return f, `"file":"` + f + `"`
}

// readReport waits until the worker's report at file holds want
// processes (the worker and its descendants) and returns them.
func readReport(t *testing.T, file string, want int) []identity {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			var ids []identity
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var id identity
				if _, err := fmt.Sscan(line, &id.PID, &id.StartTime); err == nil {
					ids = append(ids, id)
				}
			}
			if len(ids) >= want {
				return ids
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report of %d processes in %s", want, file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone checks that none of ids is still running. Run has confirmed
// the end of every process before returning; a zombie not yet reaped by
// its new parent runs nothing and is gone.
func assertGone(t *testing.T, ids []identity) {
	t.Helper()
	for _, id := range ids {
		if alive(id) {
			st, _ := readStat(id.PID)
			t.Errorf("process %d (start %d) is still running: %+v", id.PID, id.StartTime, st)
		}
	}
}

// wantCode checks err's platform code.
func wantCode(t *testing.T, err error, want toolerr.Code) {
	t.Helper()
	code, ok := toolerr.CodeOf(err)
	if !ok || code != want {
		t.Fatalf("error %v (%T), want %s", err, err, want)
	}
}

// run runs job on a fresh runner of the probe package, within waitBound.
func run(t *testing.T, s *Supervisor, job engine.Job) (*engine.Outcome, error) {
	t.Helper()
	return runCtx(t, context.Background(), s, job)
}

func runCtx(t *testing.T, ctx context.Context, s *Supervisor, job engine.Job) (*engine.Outcome, error) {
	t.Helper()
	type answer struct {
		out *engine.Outcome
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := s.Runner(probePackage("1.0.0")).Run(ctx, job)
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-time.After(2 * waitBound):
		t.Fatal("Run did not return")
		return nil, nil
	}
}

// cgroupEmpty checks that the supervisor left no job cgroup behind.
func cgroupEmpty(t *testing.T, s *Supervisor) {
	t.Helper()
	if s.sys == nil || s.sys.cg == nil {
		return
	}
	s.removing.Wait() // the emptied job cgroups are removed in the background
	if n := s.Stats().CgroupRemovalsFailed; n > 0 {
		t.Errorf("%d job cgroup removals failed", n)
	}
	var dirs []string
	switch cg := s.sys.cg.(type) {
	case *v1Host:
		for _, hy := range cg.hier {
			dirs = append(dirs, hy.dir(path.Join(hy.parent, cg.instance)))
		}
	case *v2Host:
		dirs = append(dirs, filepath.Join(cg.mount.dir, cg.parent, cg.instance))
	}
	// The job cgroups the ready spares wait in are not left behind; none
	// is being made or removed while the pool's lock is held with
	// nothing placing.
	var spares []string
	if p := s.spares; p != nil {
		deadline := time.Now().Add(waitBound)
		for p.mu.Lock(); p.placing > 0; p.mu.Lock() {
			p.mu.Unlock()
			if time.Now().After(deadline) {
				t.Fatal("a spare is being placed for too long")
			}
			time.Sleep(time.Millisecond)
		}
		defer p.mu.Unlock()
		for _, w := range p.ready {
			switch j := w.cg.(type) {
			case *v1Job:
				spares = append(spares, path.Base(j.rel))
			case *v2Job:
				spares = append(spares, path.Base(j.rel))
			}
		}
	}
	for _, d := range dirs {
		left := slices.DeleteFunc(subdirs(d), func(name string) bool { return slices.Contains(spares, name) })
		if len(left) > 0 {
			t.Errorf("job cgroups left in %s: %v", d, left)
		}
	}
}

func TestMemoryModeDetected(t *testing.T) {
	s, _ := newSupervisor(t, "", nil)
	want := engine.MemoryProcessTreeObserved
	if ms := modes(t); len(ms) > 1 {
		want = ms[0] // the strongest cgroup mode the host has
	}
	if got := s.MemoryMode(); got != want {
		t.Fatalf("MemoryMode() = %s, want %s", got, want)
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil && os.Geteuid() == 0 {
		if got := s.MemoryMode(); got != engine.MemoryCgroupV1Hard && got != engine.MemoryCgroupV2Hard {
			t.Errorf("root on a host with the v1 memory controller gets %s", got)
		}
	}
	t.Logf("memory mode: %s", s.MemoryMode())
}

func TestEcho(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, _ := newSupervisor(t, mode, nil)
			job := probeJob(t, params("echo", `"text":"<hello & welcome>"`), nil)
			out, err := run(t, s, job)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := string(out.Result); got != `{"text":"<hello & welcome>"}` {
				t.Errorf("result %s", got)
			}
			if out.Memory == nil || out.Memory.Mode != mode || out.Memory.LimitBytes != job.Operation.MemoryLimitBytes {
				t.Errorf("memory %+v", out.Memory)
			}
			if out.Memory.PeakBytes == nil && mode != engine.MemoryProcessTreeObserved {
				t.Error("no peak memory from the cgroup")
			}
			p := out.Phases
			for name, d := range map[string]*time.Duration{"startup": p.Startup, "input validation": p.InputValidation,
				"compute": p.Compute, "output validation": p.OutputValidation, "serialization": p.Serialization} {
				if d == nil || *d < 0 {
					t.Errorf("%s phase %v", name, d)
				}
			}
			if out.FuelUsed != nil {
				t.Error("a native item reports fuel")
			}
			cgroupEmpty(t, s)
		})
	}
}

func TestItemOutcomes(t *testing.T) {
	s, logs := newSupervisor(t, "", nil)
	tests := []struct {
		name   string
		params string
		mutate func(*policy.Effective)
		code   toolerr.Code
		check  func(t *testing.T, err error)
	}{
		{name: "unknown parameter", params: `{"operation":"run","mode":"echo","extra":1}`, code: toolerr.InvalidParameters},
		{name: "parameters over the limit", params: params("echo", `"text":"`+strings.Repeat("x", 200)+`"`),
			mutate: func(e *policy.Effective) { e.MaxParameterBytes = 100 }, code: toolerr.InputLimitExceeded},
		{name: "result over the limit", params: params("echo", `"text":"`+strings.Repeat("x", 200)+`"`),
			mutate: func(e *policy.Effective) { e.MaxResultBytes = 64 }, code: toolerr.OutputLimitExceeded},
		{name: "invalid output", params: params("invalid-output"), code: toolerr.InvalidOutput},
		{name: "output not JSON", params: params("not-json"), code: toolerr.InvalidOutput},
		{name: "checkpoint past the soft deadline", params: params("checkpoint"),
			mutate: func(e *policy.Effective) { e.SoftTimeoutMS = 300 }, code: toolerr.ExecutionLimit},
		{name: "tool error", params: params("tool-error"), code: toolerr.InvalidParameters, check: func(t *testing.T, err error) {
			var e *toolerr.Error
			errors.As(err, &e)
			if e.Message != "text is not usable" || e.Retryable || len(e.Issues) != 1 || e.Issues[0].Code != "bad_value" {
				t.Errorf("tool error %+v", e)
			}
		}},
		{name: "platform code from the tool", params: params("platform-code"), code: toolerr.ExecutionFailed},
		{name: "plain error", params: params("plain-error"), code: toolerr.ExecutionFailed, check: func(t *testing.T, err error) {
			if strings.Contains(fmt.Sprintf("%+v", err), "secret") || strings.Contains(logs.String(), "secret") {
				t.Error("the error's text escaped")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := probeJob(t, tt.params, tt.mutate)
			if tt.name == "checkpoint past the soft deadline" {
				job.Soft = time.Now().Add(300 * time.Millisecond)
			}
			out, err := run(t, s, job)
			wantCode(t, err, tt.code)
			if out == nil || out.Result != nil || out.Memory == nil {
				t.Fatalf("outcome %+v", out)
			}
			// A validation phase that ran and refused keeps its duration
			// (issue 16, item 19).
			switch tt.code {
			case toolerr.InvalidParameters, toolerr.InputLimitExceeded:
				if tt.name != "tool error" && out.Phases.InputValidation == nil {
					t.Error("input validation refused the item and reports no duration")
				}
			case toolerr.InvalidOutput:
				if out.Phases.OutputValidation == nil {
					t.Error("output validation refused the item and reports no duration")
				}
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
	cgroupEmpty(t, s)
}

func TestVersionMismatch(t *testing.T) {
	s, _ := newSupervisor(t, "", nil)
	// The supervisor's package is a newer build than the worker's.
	out, err := s.Runner(probePackage("2.0.0")).Run(context.Background(), probeJob(t, params("echo"), nil))
	wantCode(t, err, toolerr.VersionMismatch)
	var e *toolerr.Error
	errors.As(err, &e)
	if len(e.Issues) != 1 || e.Issues[0].Path[0] != "implementation_version" || out.Result != nil {
		t.Errorf("error %+v", e)
	}
}

func TestRunnerRefusals(t *testing.T) {
	s, _ := newSupervisor(t, "", nil)
	job := probeJob(t, params("echo"), nil)
	job.ToolCode = "nope"
	_, err := s.Runner(probePackage("1.0.0")).Run(context.Background(), job)
	wantCode(t, err, toolerr.UnknownTool)

	job = probeJob(t, params("echo"), func(e *policy.Effective) { e.Name = "other" })
	_, err = s.Runner(probePackage("1.0.0")).Run(context.Background(), job)
	wantCode(t, err, toolerr.ExecutionFailed)

	bad := probePackage("1.0.0")
	bad.Declaration = []byte(`{`)
	_, err = s.Runner(bad).Run(context.Background(), probeJob(t, params("echo"), nil))
	wantCode(t, err, toolerr.ToolUnavailable)
}

func TestHandshakeFailures(t *testing.T) {
	tests := []struct {
		mode string
		code toolerr.Code
		log  string
	}{
		{mode: "wrong-id", code: toolerr.WorkerCrashed, log: "another worker"},
		{mode: "wrong-pid", code: toolerr.WorkerCrashed, log: "names pid"},
		{mode: "wrong-pgid", code: toolerr.WorkerCrashed, log: "process group"},
		// pid-reuse safety: a frame whose start time is not the kernel's
		// is never taken for the worker.
		{mode: "wrong-start", code: toolerr.WorkerCrashed, log: "start time"},
		{mode: "wrong-protocol", code: toolerr.WorkerCrashed, log: "protocol"},
		{mode: "unknown-field", code: toolerr.WorkerCrashed, log: "malformed"},
		{mode: "garbage", code: toolerr.WorkerCrashed, log: "exceeds its bound"},
		{mode: "garbage-json", code: toolerr.WorkerCrashed, log: "malformed"},
		{mode: "oversized", code: toolerr.WorkerCrashed, log: "exceeds its bound"},
		{mode: "silent-exit", code: toolerr.WorkerCrashed, log: "before its ready frame"},
		{mode: "silent-hang", code: toolerr.ExecutionTimeout, log: "no ready frame"},
		{mode: "no-result", code: toolerr.WorkerCrashed, log: "without a result frame"},
		{mode: "partial-result", code: toolerr.WorkerCrashed, log: ""},
		{mode: "garbage-result", code: toolerr.WorkerCrashed, log: "malformed"},
		{mode: "foreign-result", code: toolerr.WorkerCrashed, log: "another execution"},
		{mode: "bad-code", code: toolerr.WorkerCrashed, log: "unknown error code"},
		{mode: "unvalidated-result", code: toolerr.InvalidOutput},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			s, logs := newSupervisor(t, "", nil, testModeEnv+"="+tt.mode)
			job := probeJob(t, params("echo"), func(e *policy.Effective) {
				if tt.mode == "silent-hang" {
					e.HardTimeoutMS, e.SoftTimeoutMS = 2_000, 1_000
				}
			})
			out, err := run(t, s, job)
			wantCode(t, err, tt.code)
			if out == nil || out.Result != nil {
				t.Errorf("outcome %+v", out)
			}
			if !strings.Contains(logs.String(), tt.log) {
				t.Errorf("the log does not say %q", tt.log)
			}
			cgroupEmpty(t, s)
		})
	}
}

func TestCrashes(t *testing.T) {
	for _, mode := range []string{"exit", "panic", "kill-self", "segv"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s, logs := newSupervisor(t, "", nil)
			out, err := run(t, s, probeJob(t, params(mode), nil))
			wantCode(t, err, toolerr.WorkerCrashed)
			if out.Result != nil || out.Memory == nil {
				t.Errorf("outcome %+v", out)
			}
			if !strings.Contains(logs.String(), "worker crashed") {
				t.Error("the crash is not logged")
			}
		})
	}
}

func TestDescendantsGone(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, _ := newSupervisor(t, mode, nil)
			file, member := reportFile(t)
			out, err := run(t, s, probeJob(t, params("spawn", member), nil))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if string(out.Result) != `{"text":"5"}` {
				t.Errorf("result %s", out.Result)
			}
			ids := readReport(t, file, 6)
			assertGone(t, ids)
			cgroupEmpty(t, s)
		})
	}
}

func TestIgnoredSIGTERM(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, logs := newSupervisor(t, mode, nil)
			file, member := reportFile(t)
			job := probeJob(t, params("ignore-term", member), nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Runner(probePackage("1.0.0")).Run(ctx, job)
				done <- err
			}()
			ids := readReport(t, file, 1)
			cancel() // the client leaves
			wantCode(t, <-done, toolerr.ServiceUnavailable)
			if !strings.Contains(logs.String(), "did not end on SIGTERM") {
				t.Error("no escalation to SIGKILL in the log")
			}
			assertGone(t, ids)
			cgroupEmpty(t, s)
		})
	}
}

func TestHardDeadline(t *testing.T) {
	s, _ := newSupervisor(t, "", nil)
	file, member := reportFile(t)
	job := probeJob(t, params("spawn-wait", member), nil)
	job.Hard = time.Now().Add(3 * time.Second)
	out, err := run(t, s, job)
	wantCode(t, err, toolerr.ExecutionTimeout)
	if out.Result != nil {
		t.Error("a result after the hard deadline")
	}
	if b, err := os.ReadFile(file); err == nil {
		var ids []identity
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var id identity
			if _, err := fmt.Sscan(line, &id.PID, &id.StartTime); err == nil {
				ids = append(ids, id)
			}
		}
		assertGone(t, ids)
	}
	cgroupEmpty(t, s)
}

func TestGrandchildHoldsThePipe(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, _ := newSupervisor(t, mode, nil)
			file, member := reportFile(t)
			out, err := run(t, s, probeJob(t, params("hold-pipe", member), nil))
			if err != nil || string(out.Result) != `{"text":"held"}` {
				t.Fatalf("Run: %s, %v", out.Result, err)
			}
			assertGone(t, readReport(t, file, 2))
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			s, _ := newSupervisor(t, mode, nil)
			const limit = 128 << 20
			job := probeJob(t, params("hog", `"bytes":`+strconv.Itoa(8*limit)),
				func(e *policy.Effective) { e.MemoryLimitBytes = limit })
			out, err := run(t, s, job)
			wantCode(t, err, toolerr.MemoryLimit)
			m := out.Memory
			if m == nil || m.Mode != mode || m.LimitBytes != limit {
				t.Fatalf("memory %+v", m)
			}
			if m.PeakBytes == nil || *m.PeakBytes < limit/2 {
				t.Errorf("peak %v, limit %d", m.PeakBytes, limit)
			}
			cgroupEmpty(t, s)
		})
	}
}

func TestForkBombContained(t *testing.T) {
	ms := modes(t)
	if len(ms) == 1 {
		t.Skip("no cgroup with a pids controller: a fork bomb is not contained in the observed mode")
	}
	s, logs := newSupervisor(t, ms[0], func(c *Config) { c.PidsLimit = 64 })
	var pidsDir string
	switch cg := s.sys.cg.(type) {
	case *v1Host:
		for _, hy := range cg.hier {
			if hy.name == "pids" {
				pidsDir = hy.dir(path.Join(hy.parent, cg.instance))
			}
		}
	case *v2Host:
		pidsDir = filepath.Join(cg.mount.dir, cg.parent, cg.instance)
	}
	if pidsDir == "" {
		t.Skip("no pids controller")
	}
	file, member := reportFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Runner(probePackage("1.0.0")).Run(ctx, probeJob(t, params("fork-bomb", member), nil))
		done <- err
	}()
	worker := readReport(t, file, 1)[0]
	// The limit is hit: forks fail in the job's cgroup.
	deadline := time.Now().Add(waitBound)
	for hit := false; !hit; {
		for _, job := range subdirs(pidsDir) {
			if n, ok := readKey(filepath.Join(pidsDir, job, "pids.events"), "max"); ok && n > 0 {
				hit = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the fork bomb never reached the pids limit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	err := <-done
	// The bomb fills the pids limit; the Go worker may fail to make a
	// thread and crash before the cancellation lands.
	if code, _ := toolerr.CodeOf(err); code != toolerr.ServiceUnavailable && code != toolerr.WorkerCrashed {
		t.Fatalf("error %v\n%s", err, logs)
	}
	procs, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.live() && p.StartTime >= worker.StartTime && (p.PGID == worker.PID || p.SID == worker.PID) {
			t.Errorf("a process of the bomb is left: %+v", p)
		}
	}
	cgroupEmpty(t, s)
}

func TestUnconfirmedCleanup(t *testing.T) {
	if !hasMode(t, engine.MemoryCgroupV1Hard) {
		t.Skip("needs the cgroup v1 freezer")
	}
	logs := &logBuffer{}
	s, err := New(Config{
		Env: []string{testWorkerEnv + "=1"}, CgroupParent: testParent("-stuck"), MemoryMode: engine.MemoryCgroupV1Hard,
		TermGrace: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.sys.cg.(*v1Host).freezerHierarchy() == nil {
		s.Close(context.Background())
		t.Skip("no freezer hierarchy")
	}
	file, member := reportFile(t)
	job := probeJob(t, params("frozen-child", member), func(e *policy.Effective) { e.CleanupTimeoutMS = 1_000 })
	out, err := run(t, s, job)
	ids := readReport(t, file, 2)
	// Whatever happens next, thaw the child and remove what was left.
	defer func() {
		stuck := ""
		if out != nil && out.Result == nil {
			v1 := s.sys.cg.(*v1Host)
			hy := *v1.freezerHierarchy()
			for _, jobDir := range subdirs(hy.dir(path.Join(hy.parent, v1.instance))) {
				stuck = filepath.Join(hy.dir(path.Join(hy.parent, v1.instance)), jobDir, "stuck")
			}
		}
		if stuck != "" {
			os.WriteFile(filepath.Join(stuck, "freezer.state"), []byte("THAWED"), 0)
		}
		for _, id := range ids[1:] {
			syscall.Kill(id.PID, syscall.SIGKILL)
		}
		deadline := time.Now().Add(waitBound)
		for _, id := range ids {
			for alive(id) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		s.sys.cg.reapInstance(s.sys.cg.(*v1Host).instance, time.Now().Add(waitBound))
		s.Close(context.Background())
	}()
	wantCode(t, err, toolerr.CleanupFailed)
	if !strings.Contains(logs.String(), "not confirmed") {
		t.Errorf("the log does not say the cleanup was not confirmed:\n%s", logs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, ErrUnconfirmed) {
		t.Errorf("Close after an unconfirmed cleanup: %v", err)
	}
}

func TestV2RefusalLeavesNothing(t *testing.T) {
	_, v2, err := cgroupMounts()
	if err != nil || v2 == nil {
		t.Skip("no cgroup2 mount")
	}
	_, own, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	parent := testParent("-v2")
	h, err := newV2Host(v2, own, Config{CgroupParent: parent + "/deeper", PidsLimit: 1}, "1-2-3")
	if err == nil {
		// A host with a delegated subtree: the test only checks refusals.
		if err := h.release(); err != nil {
			t.Error(err)
		}
		unix.Rmdir(filepath.Join(v2.dir, path.Dir(h.parent)))
		t.Skip("this host delegates a cgroup2 memory controller")
	}
	rel, _ := parentPath(*v2, own, parent)
	if _, statErr := os.Stat(filepath.Join(v2.dir, rel)); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a refused cgroup2 parent was left behind (%v): %v", err, statErr)
	}
}

func TestCloseWithRunningJobs(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			logs := &logBuffer{}
			s, err := New(Config{
				Env: []string{testWorkerEnv + "=1"}, CgroupParent: testParent(""), MemoryMode: mode,
				TermGrace: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil)),
				Spares: testSpares(),
			})
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			errs := make(chan error, 2)
			for range 2 {
				file, member := reportFile(t)
				files = append(files, file)
				job := probeJob(t, params("spawn-wait", member), nil)
				go func() {
					_, err := s.Runner(probePackage("1.0.0")).Run(context.Background(), job)
					errs <- err
				}()
			}
			var ids []identity
			for _, f := range files {
				ids = append(ids, readReport(t, f, 6)...)
			}
			// Both items run, each in a job cgroup of its own where the
			// mode has them (the kernel's count, which /metrics shows).
			st := s.Stats()
			if st.Jobs != 2 {
				t.Errorf("Stats().Jobs = %d with two items running", st.Jobs)
			}
			if cgroups := s.sys.cg != nil; cgroups && st.JobCgroups < 2 || !cgroups && st.JobCgroups != 0 {
				t.Errorf("Stats().JobCgroups = %d with two items running (cgroups: %v)", st.JobCgroups, cgroups)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Fatalf("Close: %v\n%s", err, logs)
			}
			if n := s.Stats().JobCgroups; n != 0 {
				t.Errorf("Stats().JobCgroups = %d after Close", n)
			}
			for range 2 {
				wantCode(t, <-errs, toolerr.ServiceUnavailable)
			}
			assertGone(t, ids)
			cgroupEmpty(t, s)
			if err := s.Close(ctx); err != nil {
				t.Errorf("second Close: %v", err)
			}
			_, err = s.Runner(probePackage("1.0.0")).Run(context.Background(), probeJob(t, params("echo"), nil))
			wantCode(t, err, toolerr.ServiceUnavailable)
		})
	}
}

func TestStaleCgroupsReaped(t *testing.T) {
	if !hasMode(t, engine.MemoryCgroupV1Hard) {
		t.Skip("the stale-instance test builds cgroup v1 directories")
	}
	parent := testParent("-stale")
	mounts, _, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	own, _, err := ownCgroups()
	if err != nil {
		t.Fatal(err)
	}
	// A previous run's instance: its owner (a pid with a start time no
	// process has) is gone, its job cgroup still holds a process.
	stale := fmt.Sprintf("%d-%d-%d", os.Getpid(), 1, 1)
	live := fmt.Sprintf("%d-%d-%d", os.Getpid(), mustSelf(t).StartTime, 999)
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var liveDirs []string
	for _, c := range []string{"memory", "pids", "freezer"} {
		m, ok := mounts[c]
		if !ok {
			continue
		}
		rel, err := parentPath(m, own[c], parent)
		if err != nil {
			t.Fatal(err)
		}
		job := filepath.Join(m.dir, rel, stale, "job-1-x")
		liveDir := filepath.Join(m.dir, rel, live)
		for _, d := range []string{job, liveDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		liveDirs = append(liveDirs, liveDir)
		if err := os.WriteFile(filepath.Join(job, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range liveDirs {
			syscall.Rmdir(d)
			syscall.Rmdir(filepath.Dir(d))
		}
	})

	s, _ := newSupervisor(t, engine.MemoryCgroupV1Hard, func(c *Config) { c.CgroupParent = parent })
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the stale job's process ended with %v", err)
		}
	case <-time.After(waitBound):
		cmd.Process.Kill()
		<-waited
		t.Fatal("the stale job's process is still running")
	}
	v1 := s.sys.cg.(*v1Host)
	for _, hy := range v1.hier {
		dir := hy.dir(path.Join(hy.parent, stale))
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left: %v", dir, err)
		}
	}
	for _, d := range liveDirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a live instance was reaped: %v", err)
		}
	}
}

func hasMode(t *testing.T, mode string) bool {
	for _, m := range modes(t) {
		if m == mode {
			return true
		}
	}
	return false
}

func mustSelf(t *testing.T) procStat {
	t.Helper()
	st, err := readStat(0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestWorkerRefusesWithoutSupervisor(t *testing.T) {
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	tests := []struct {
		name   string
		env    []string
		files  bool
		setsid bool
		want   string
	}{
		{name: "no worker id", files: true, setsid: true, want: "no " + EnvWorkerID},
		{name: "no pipes", env: []string{EnvWorkerID + "=x"}, setsid: true, want: "fd 3"},
		{name: "not a session leader", env: []string{EnvWorkerID + "=x"}, files: true, want: "session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("/proc/self/exe", "worker")
			cmd.Env = append([]string{testWorkerEnv + "=1"}, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if tt.files {
				jr, jw := pipe()
				rr, rw := pipe()
				_, _ = jw, rr
				cmd.ExtraFiles = []*os.File{jr, rw}
			}
			if tt.setsid {
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			}
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("the worker ran: %v", err)
			}
			if !strings.Contains(stderr.String(), "not started by a supervisor") || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{Env: []string{"NOEQUALS"}},
		{MemoryMode: "wasm_instance_hard"},
		{TermGrace: -time.Second},
		{CgroupParent: "a\x00b"},
	} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", c, err)
		}
	}
	if _, err := New(Config{MemoryMode: engine.MemoryCgroupV1Hard, CgroupParent: "../../../../../../../../x", Logger: discard()}); !errors.Is(err, ErrConfig) && !errors.Is(err, ErrModeUnavailable) {
		t.Errorf("a parent above the hierarchy: %v", err)
	}
	s, err := New(Config{MemoryMode: engine.MemoryUnavailable, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Runner(probePackage("1.0.0")).Run(context.Background(), probeJob(t, params("echo"), nil))
	var e *toolerr.Error
	if !errors.As(err, &e) || e.Code != toolerr.ServiceUnavailable || e.Retryable {
		t.Errorf("unavailable mode: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

// freezerHierarchy returns the freezer hierarchy, nil without it.
func (h *v1Host) freezerHierarchy() *v1Hierarchy {
	for i := range h.hier {
		if h.hier[i].name == cgroup1.Freezer {
			return &h.hier[i]
		}
	}
	return nil
}

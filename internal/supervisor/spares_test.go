//go:build linux

package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// spareSupervisor returns a supervisor in mode with n spares, whatever
// the run's testSpares, once they are all ready.
func spareSupervisor(t *testing.T, mode string, n int) (*Supervisor, *logBuffer) {
	t.Helper()
	s, logs := newSupervisor(t, mode, func(c *Config) { c.Spares = n })
	awaitSpares(t, s, n)
	return s, logs
}

// readySpares returns the identities of s's ready spares.
func readySpares(s *Supervisor) []identity {
	s.spares.mu.Lock()
	defer s.spares.mu.Unlock()
	var out []identity
	for _, w := range s.spares.ready {
		out = append(out, w.self)
	}
	return out
}

// computedBy runs a "self" item and returns the worker that computed it
// and its /proc/self/cgroup.
func computedBy(t *testing.T, s *Supervisor) (identity, string) {
	t.Helper()
	out, err := run(t, s, probeJob(t, params("self"), nil))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var res struct{ Text string }
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatal(err)
	}
	head, cgroups, _ := strings.Cut(res.Text, "\n")
	var id identity
	if _, err := fmt.Sscan(head, &id.PID, &id.StartTime); err != nil {
		t.Fatalf("result %q: %v", res.Text, err)
	}
	return id, cgroups
}

func TestSpareServesOneItem(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			const spares, items = 2, 5
			s, _ := spareSupervisor(t, mode, spares)
			var seen []identity
			for i := range items {
				awaitSpares(t, s, 1)
				ready := readySpares(s)
				id, cgroups := computedBy(t, s)
				if !slices.Contains(ready, id) {
					t.Errorf("item %d ran in %+v, not in a ready spare %+v", i, id, ready)
				}
				if slices.Contains(seen, id) {
					t.Errorf("item %d ran in worker %+v again", i, id)
				}
				seen = append(seen, id)
				if alive(id) {
					t.Errorf("the spare of item %d is still running after its item", i)
				}
				if slices.Contains(readySpares(s), id) {
					t.Errorf("the spare of item %d is back in the pool", i)
				}
				if mode == engine.MemoryCgroupV1Hard && !strings.Contains(memoryLine(cgroups), "/job-") {
					t.Errorf("item %d computed outside its job cgroup: %s", i, cgroups)
				}
			}
			awaitSpares(t, s, spares)
			st := s.Stats()
			if st.SparesUsed != items || st.FreshWorkers != 0 || st.SparesLost != 0 || st.SparesFailed != 0 {
				t.Errorf("stats %+v", st)
			}
			if st.SparesStarted != spares+st.SparesReplaced || st.SparesReplaced < items {
				t.Errorf("started %d, replaced %d after %d items", st.SparesStarted, st.SparesReplaced, items)
			}
			if st.Spares != spares || st.SparesReady != spares || st.SpareMemoryBytes <= 0 {
				t.Errorf("stats %+v", st)
			}
			cgroupEmpty(t, s)
		})
	}
}

// memoryLine returns the v1 memory line of a /proc/<pid>/cgroup text.
func memoryLine(cgroups string) string {
	for _, line := range strings.Split(cgroups, "\n") {
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "memory") {
			return parts[2]
		}
	}
	return ""
}

func TestSpareMemoryLimit(t *testing.T) {
	ms := modes(t)
	if len(ms) == 1 {
		t.Skip("no cgroup memory mode")
	}
	s, _ := spareSupervisor(t, ms[0], 1)
	// The job's limit replaced the spare's: an item may use more than
	// the spare limit, up to its own (generous: the race detector's
	// shadow memory is charged too), and no more.
	const touched, roomy = SpareMemoryLimitBytes + 16<<20, 16 * SpareMemoryLimitBytes
	job := probeJob(t, params("touch", `"bytes":`+fmt.Sprint(touched)),
		func(e *policy.Effective) { e.MemoryLimitBytes = roomy })
	out, err := run(t, s, job)
	if err != nil {
		t.Fatalf("an item within its limit, above the spare's: %v", err)
	}
	if p := out.Memory.PeakBytes; p == nil || *p < touched || *p > roomy {
		t.Errorf("peak %v, touched %d, limit %d", p, touched, roomy)
	}
	awaitSpares(t, s, 1)
	const limit = 2 * SpareMemoryLimitBytes
	job = probeJob(t, params("hog", `"bytes":`+fmt.Sprint(8*limit)), func(e *policy.Effective) { e.MemoryLimitBytes = limit })
	out, err = run(t, s, job)
	wantCode(t, err, toolerr.MemoryLimit)
	if p := out.Memory.PeakBytes; p == nil || *p < limit/2 || *p > 2*limit {
		t.Errorf("peak %v, limit %d", p, limit)
	}
	if st := s.Stats(); st.SparesUsed != 2 || st.FreshWorkers != 0 {
		t.Errorf("the items did not run in spares: %+v", st)
	}
	cgroupEmpty(t, s)
}

func TestSpareKilledWhileIdle(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGSTOP} {
		t.Run(sig.String(), func(t *testing.T) {
			s, logs := spareSupervisor(t, "", 1)
			victim := readySpares(s)[0]
			if err := syscall.Kill(victim.PID, sig); err != nil {
				t.Fatal(err)
			}
			// At once: the item must not be handed to the dying spare.
			id, _ := computedBy(t, s)
			if id == victim {
				t.Fatalf("the item ran in the killed spare %+v", victim)
			}
			awaitSpares(t, s, 1)
			deadline := time.Now().Add(waitBound)
			for alive(victim) {
				if time.Now().After(deadline) {
					t.Fatalf("the killed spare %+v is still there", victim)
				}
				time.Sleep(time.Millisecond)
			}
			st := s.Stats()
			if st.SparesLost != 1 || st.SparesUsed+st.FreshWorkers != 1 {
				t.Errorf("stats %+v\n%s", st, logs)
			}
			if slices.Contains(readySpares(s), victim) {
				t.Error("the killed spare is still in the pool")
			}
		})
	}
}

func TestItemWithoutReadySpare(t *testing.T) {
	// The one spare serves a first item, which waits; its replacement
	// starts only after that item, so a second item finds no spare ready
	// and is served by a fresh worker.
	s, _ := spareSupervisor(t, "", 1)
	file, member := reportFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := s.Runner(probePackage("1.0.0")).Run(ctx, probeJob(t, params("sleep", member), nil))
		first <- err
	}()
	held := readReport(t, file, 1)[0]
	id, _ := computedBy(t, s)
	if id == held {
		t.Fatal("two items in one worker")
	}
	if st := s.Stats(); st.SparesUsed != 1 || st.FreshWorkers != 1 {
		t.Errorf("stats %+v", st)
	}
	cancel()
	wantCode(t, <-first, toolerr.ServiceUnavailable)
	assertGone(t, []identity{held, id})
	awaitSpares(t, s, 1)
}

func TestCloseReapsSpares(t *testing.T) {
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("ready=%v", wait), func(t *testing.T) {
			before := ownChildren(t)
			s, err := New(Config{Env: []string{testWorkerEnv + "=1"}, CgroupParent: testParent("-spares"),
				Spares: 3, Logger: discard()})
			if err != nil {
				t.Fatal(err)
			}
			var ids []identity
			if wait {
				awaitSpares(t, s, 3)
				ids = readySpares(s)
			} else {
				// Close while the first spare is starting.
				deadline := time.Now().Add(waitBound)
				for s.Stats().SparesStarted == 0 {
					if time.Now().After(deadline) {
						t.Fatal("no spare started")
					}
					time.Sleep(100 * time.Microsecond)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			assertGone(t, ids)
			if left := ownChildren(t); len(left) > len(before) {
				t.Errorf("processes left after Close: %+v (before: %+v)", left, before)
			}
			if st := s.Stats(); st.SparesReady != 0 || st.SparesStarting != 0 {
				t.Errorf("stats after Close %+v", st)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("second Close: %v", err)
			}
			_, err = s.Runner(probePackage("1.0.0")).Run(context.Background(), probeJob(t, params("echo"), nil))
			wantCode(t, err, toolerr.ServiceUnavailable)
		})
	}
}

// ownChildren lists the live processes whose parent is this test process,
// from /proc.
func ownChildren(t *testing.T) []procStat {
	t.Helper()
	procs, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	var out []procStat
	for _, p := range procs {
		if p.PPID == os.Getpid() && p.live() {
			out = append(out, p)
		}
	}
	return out
}

// TestWithoutSpares runs every other test of the package again with spare
// workers off, in a child test binary, so that each outcome is checked on
// both paths: an item handed to a spare, and an item in a fresh worker.
func TestWithoutSpares(t *testing.T) {
	if testSpares() == 0 {
		t.Skip("spares are off in this run already")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	args := []string{"-test.run", "^Test", "-test.skip", "^TestWithoutSpares$", "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), sparesEnv+"=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests with spares off failed: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("with spares off:\n%s", out)
	}
}

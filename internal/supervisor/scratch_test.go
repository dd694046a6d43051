//go:build linux

package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// TestScratchRemoved (issue 16, item 10): an item's scratch data — a
// pac-* folder with the model built from the caller's data, made with
// os.MkdirTemp("", "pac-") as the PAC allocator does, and a cbc.log in
// the item's scratch folder — lives inside the item's own folder under
// Config.ScratchDir, never in the system temporary folder, and is gone
// after the item however it ends: the client disconnects (context
// cancelled), the worker is sent SIGTERM or SIGKILL from outside, or the
// hard deadline passes.
func TestScratchRemoved(t *testing.T) {
	tests := []struct {
		name string
		// end ends the item once the worker reported its processes.
		end  func(cancel context.CancelFunc, worker int)
		hard time.Duration
		code toolerr.Code
	}{
		{name: "disconnect", end: func(cancel context.CancelFunc, _ int) { cancel() }, code: toolerr.ServiceUnavailable},
		{name: "SIGTERM", end: func(_ context.CancelFunc, pid int) { syscall.Kill(pid, syscall.SIGTERM) }, code: toolerr.WorkerCrashed},
		{name: "SIGKILL", end: func(_ context.CancelFunc, pid int) { syscall.Kill(pid, syscall.SIGKILL) }, code: toolerr.WorkerCrashed},
		{name: "timeout", end: func(context.CancelFunc, int) {}, hard: 3 * time.Second, code: toolerr.ExecutionTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "scratch")
			s, _ := newSupervisor(t, "", func(c *Config) { c.ScratchDir = root })
			token := "prices-" + newID()
			file, member := reportFile(t)
			job := probeJob(t, params("scratch", member, `"text":"`+token+`"`), nil)
			if tt.hard > 0 {
				job.Hard = time.Now().Add(tt.hard)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Runner(probePackage("1.0.0")).Run(ctx, job)
				done <- err
			}()
			ids := readReport(t, file, 2)

			// While the item runs, its data is in its own folder.
			item := filepath.Join(s.scratch, "item-"+job.ExecutionID)
			models, _ := filepath.Glob(filepath.Join(item, "pac-*", "model.lp"))
			if len(models) != 1 {
				t.Errorf("models in the item's scratch folder: %v", models)
			}
			if _, err := os.Stat(filepath.Join(item, "cbc.log")); err != nil {
				t.Errorf("the solver log: %v", err)
			}
			noTempModel(t, token)

			tt.end(cancel, ids[0].PID)
			wantCode(t, <-done, tt.code)
			assertGone(t, ids)
			left, err := os.ReadDir(s.scratch)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				t.Errorf("left in the scratch folder: %s", e.Name())
			}
			noTempModel(t, token)
			cgroupEmpty(t, s)
		})
	}
}

// TestScratchReapedAtStart: the scratch instance folder of a process that
// is gone (a server killed with its items running) is removed by the next
// supervisor on the same folder; a live process's is left alone.
func TestScratchReapedAtStart(t *testing.T) {
	root := t.TempDir()
	self, err := readStat(0)
	if err != nil {
		t.Fatal(err)
	}
	// A pid that is ours but with another start time: its owner is gone.
	stale := filepath.Join(root, fmt.Sprintf("%d-%d-1", self.PID, self.StartTime+1), "item-x", "pac-1")
	live := filepath.Join(root, fmt.Sprintf("%d-%d-999", self.PID, self.StartTime), "item-y")
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "model.lp"), []byte("prices"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newSupervisor(t, "", func(c *Config) { c.ScratchDir = root })
	if _, err := os.Stat(filepath.Dir(filepath.Dir(stale))); !os.IsNotExist(err) {
		t.Errorf("the stale instance folder: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live instance folder: %v", err)
	}
}

// noTempModel fails the test when a pac-* folder of the system temporary
// folder holds a model with token.
func noTempModel(t *testing.T, token string) {
	t.Helper()
	models, _ := filepath.Glob(filepath.Join(os.TempDir(), "pac-*", "model.lp"))
	for _, m := range models {
		if b, err := os.ReadFile(m); err == nil && bytes.Contains(b, []byte(token)) {
			t.Errorf("the item's model is in the system temporary folder: %s", m)
		}
	}
}

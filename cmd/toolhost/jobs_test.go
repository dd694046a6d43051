package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// toolhost jobs lists, shows and cancels the jobs of a serving process on
// either backend: on SQLite beside the process's lock on the files folder,
// on PostgreSQL through --store; a queued job ends cancelled at once, a
// running one is stopped by the process running it.
func TestJobsCommand(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		dir := t.TempDir()
		t.Setenv(dataDirEnv, "")
		t.Setenv("TOOLHOST_STORE", "")
		t.Setenv("TOOLHOST_FILES_DIR", "")
		target := backend.Target
		where := []string{"--store", target}
		if backend.Name == "sqlite" {
			target = dir + "/" + databaseFile
			where = []string{"--data-dir", dir}
		}

		// The serving process: one worker, held by the first job.
		ctx := context.Background()
		st, err := store.Open(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		started := make(chan string, 2)
		served, err := jobs.Open(ctx, jobs.Config{Store: st, DataDir: dir, MaxWorkers: 1, PollInterval: 50 * time.Millisecond,
			Handlers: map[string]jobs.Handler{"hold": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
				started <- run.JobID
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer served.Close(ctx)
		submit := func(owner string) *jobs.Job {
			t.Helper()
			j, err := served.Submit(ctx, jobs.Submission{Owner: owner, Type: "hold", Input: json.RawMessage(`{}`)})
			for attempt := 1; err != nil && attempt < 10; attempt++ { // busy on a loaded machine: again
				j, err = served.Submit(ctx, jobs.Submission{Owner: owner, Type: "hold", Input: json.RawMessage(`{}`)})
			}
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
		running := submit("user:1")
		select {
		case <-started:
		case <-time.After(time.Minute):
			t.Fatal("the first job did not start")
		}
		time.Sleep(5 * time.Millisecond) // created_at has milliseconds: the second is newer
		queued := submit("user:2")

		toolhost := func(code int, args ...string) string {
			t.Helper()
			var stdout, stderr bytes.Buffer
			args = append(args, where...)
			if got := run(args, strings.NewReader(""), &stdout, &stderr); got != code {
				t.Fatalf("toolhost %q = %d, want %d\nstdout: %s\nstderr: %s", args, got, code, stdout.String(), stderr.String())
			}
			return stdout.String()
		}
		rows := func(out string) []jobRow {
			t.Helper()
			var list []jobRow
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var r jobRow
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("a row %q: %v", line, err)
				}
				list = append(list, r)
			}
			return list
		}

		list := rows(toolhost(0, "jobs", "list", "--json"))
		if len(list) != 2 || list[0].ID != queued.ID || list[0].Owner != "user:2" || list[0].State != "queued" ||
			list[1].ID != running.ID || list[1].State != "running" || list[1].Attempts != 1 {
			t.Fatalf("jobs list: %+v", list)
		}
		if list := rows(toolhost(0, "jobs", "list", "--owner", "user:1", "--json")); len(list) != 1 || list[0].ID != running.ID {
			t.Fatalf("jobs list --owner user:1: %+v", list)
		}
		if out := toolhost(0, "jobs", "list", "--state", "running"); !strings.Contains(out, running.ID) || strings.Contains(out, queued.ID) {
			t.Fatalf("jobs list --state running:\n%s", out)
		}
		toolhost(2, "jobs", "list", "--state", "stuck")
		toolhost(2, "jobs", "list", "--limit", "0")
		toolhost(2, "jobs", "show")
		toolhost(2, "jobs", "delete", queued.ID)
		if out := toolhost(0, "jobs", "show", queued.ID); !strings.Contains(out, "user:2") || !strings.Contains(out, "queued") {
			t.Fatalf("jobs show:\n%s", out)
		}
		toolhost(1, "jobs", "show", "job_none")

		// Queued: cancelled at once, and the serving process reads it so.
		if out := toolhost(0, "jobs", "cancel", queued.ID); out != queued.ID+" cancelled\n" {
			t.Fatalf("jobs cancel (queued): %q", out)
		}
		if j, err := served.Get(ctx, queued.ID, "user:2"); err != nil || j.State != jobs.Cancelled {
			t.Fatalf("the serving process reads the queued job %+v, %v", j, err)
		}

		// Running: the serving process is asked, and stops it. The cancel
		// prints it running, or cancelled already: on PostgreSQL River's
		// notification may beat the read that follows the cancel.
		var view struct {
			ID    string `json:"id"`
			State string `json:"state"`
			Owner string `json:"owner"`
		}
		if err := json.Unmarshal([]byte(toolhost(0, "jobs", "cancel", running.ID, "--json")), &view); err != nil ||
			view.ID != running.ID || (view.State != "running" && view.State != "cancelled") || view.Owner != "user:1" {
			t.Fatalf("jobs cancel --json (running): %+v, %v", view, err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			j, err := served.Get(ctx, running.ID, "user:1")
			if err != nil {
				t.Fatal(err)
			}
			if j.State == jobs.Cancelled {
				break
			}
			if j.State.Final() || time.Now().After(deadline) {
				t.Fatalf("the running job is %s after jobs cancel", j.State)
			}
		}
		if list := rows(toolhost(0, "jobs", "list", "--state", "cancelled", "--json")); len(list) != 2 {
			t.Fatalf("jobs list --state cancelled: %+v", list)
		}
	})
}

// toolhost jobs --help lists its settings and arguments, as help jobs does.
func TestJobsHelp(t *testing.T) {
	out := helpOf(t, "jobs", "--help")
	if out != helpOf(t, "help", "jobs") {
		t.Error("toolhost help jobs differs from toolhost jobs --help")
	}
	for _, flag := range []string{"--store", "--data-dir", "--files-dir", "--owner", "--state", "--limit", "--json"} {
		if !strings.Contains(out, flag) {
			t.Errorf("toolhost jobs --help lacks %s:\n%s", flag, out)
		}
	}
}

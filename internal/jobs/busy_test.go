package jobs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/store"
)

// lockDB takes the write lock of e's database from a connection of its
// own, as another process would (BEGIN IMMEDIATE: in WAL mode it blocks
// writers, not readers), and returns the function that releases it, which
// the test's end calls too.
func (e *env) lockDB(t *testing.T) (unlock func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "toolhost.db")+"?_pragma=busy_timeout%285000%29")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		conn.Close()
		db.Close()
		t.Fatal(err)
	}
	done := false
	unlock = func() {
		if !done {
			done = true
			conn.ExecContext(context.Background(), `ROLLBACK`)
			conn.Close()
			db.Close()
		}
	}
	t.Cleanup(unlock)
	return unlock
}

// While another connection holds the database's write lock, the calls a
// request waits for fail within the request budget with an error wrapping
// store.ErrBusy instead of sitting out the writer's busy timeout: Submit
// (an upload, whose file is on disk before the rows, and a reference,
// whose file is linked) leaves no row and no folder, Cancel and Retry
// change nothing; reads answer. Once the lock is gone the same calls
// succeed.
func TestBusyDatabase(t *testing.T) {
	e := newEnv(t)
	block := newBlocker()
	svc := e.open(t, map[string]jobs.Handler{"pdf": stamp(), "flaky": flaky(), "hold": block.handler(false)}, nil)
	ctx := context.Background()
	pdf := pdfFixture(t)

	stamped := submit(t, svc, "alice", "pdf", upload("a.pdf", pdf))
	waitState(t, svc, stamped.ID, "alice", jobs.Succeeded)
	failed := submit(t, svc, "alice", "flaky")
	waitState(t, svc, failed.ID, "alice", jobs.Failed)
	// Submit returns the job as it wrote it, without reading it back: the
	// same as a read of it (a held job keeps its input files unexpired).
	held := submit(t, svc, "alice", "hold", upload("b.pdf", pdf), upload("a.pdf", pdf))
	block.wait(t)
	got, err := svc.Get(ctx, held.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if held.State != jobs.Queued || held.Version != 1 || !reflect.DeepEqual(got.Files, held.Files) || !got.CreatedAt.Equal(held.CreatedAt) ||
		got.ID != held.ID || got.Type != held.Type || got.Owner != held.Owner || string(got.Input) != string(held.Input) ||
		!reflect.DeepEqual(got.References, held.References) {
		t.Fatalf("Submit returned %+v\nGet reads %+v", held, got)
	}
	if _, err := svc.Cancel(ctx, held.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	waitState(t, svc, held.ID, "alice", jobs.Cancelled)
	rows, dirs := e.countJobs(t)

	unlock := e.lockDB(t)
	// The documented bound is the budget; the margin is generous and still
	// well short of the busy timeout.
	bound := store.RequestBusyBudget + 2*time.Second
	busy := func(name string, call func() error) {
		t.Helper()
		began := time.Now()
		err := call()
		if took := time.Since(began); took > bound {
			t.Errorf("%s under the lock took %v, over %v", name, took, bound)
		}
		if !errors.Is(err, store.ErrBusy) {
			t.Errorf("%s under the lock = %v, want store.ErrBusy", name, err)
		}
	}
	busy("Submit with an upload", func() error {
		_, err := svc.Submit(ctx, jobs.Submission{Owner: "alice", Type: "pdf", Input: json.RawMessage(`{}`),
			Files: jobs.Uploads(upload("c.pdf", pdf)), Accept: []string{sniff.PDF}})
		return err
	})
	busy("Submit with a reference", func() error {
		_, err := svc.Submit(ctx, jobs.Submission{Owner: "alice", Type: "pdf", Input: json.RawMessage(`{}`),
			References: []jobs.Reference{{Job: stamped.ID, File: "stamped-a.pdf"}}, Accept: []string{sniff.PDF}})
		return err
	})
	busy("Retry", func() error { _, err := svc.Retry(ctx, failed.ID, "alice"); return err })
	busy("Cancel", func() error { _, err := svc.Cancel(ctx, stamped.ID, "alice"); return err })
	if j, err := svc.Get(ctx, failed.ID, "alice"); err != nil || j.State != jobs.Failed {
		t.Errorf("Get under the lock = %+v, %v", j, err)
	}
	if d, err := svc.OpenFile(ctx, stamped.ID, "stamped-a.pdf", "alice"); err != nil {
		t.Errorf("OpenFile under the lock: %v", err)
	} else {
		d.Content.Close()
	}
	unlock()
	if r, d := e.countJobs(t); r != rows || d != dirs {
		t.Errorf("the refused submissions left rows %d → %d, folders %d → %d", rows, r, dirs, d)
	}

	if _, err := svc.Retry(ctx, failed.ID, "alice"); err != nil {
		t.Fatalf("Retry after the lock: %v", err)
	}
	waitState(t, svc, failed.ID, "alice", jobs.Succeeded)
	j, err := svc.Submit(ctx, jobs.Submission{Owner: "alice", Type: "pdf", Input: json.RawMessage(`{}`),
		References: []jobs.Reference{{Job: stamped.ID, File: "stamped-a.pdf"}}, Accept: []string{sniff.PDF}})
	if err != nil {
		t.Fatalf("Submit after the lock: %v", err)
	}
	waitState(t, svc, j.ID, "alice", jobs.Succeeded)
}

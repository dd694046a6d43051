package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/store"
)

// TestRunsDoNotWaitOnALockedDatabase (issue 11, finding 10): while another
// connection holds the database's write lock with BEGIN EXCLUSIVE, as
// another process would, an anonymous hash run, a run with a cached token
// and one with a token never seen answer normally, refusals answer and are
// counted, and none of them sits out the store's busy timeout. Once the
// lock is gone the abuse log's writer stores the refusals it kept.
func TestRunsDoNotWaitOnALockedDatabase(t *testing.T) {
	cost := hashCost(t)
	var dataDir string
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: smallTable(cost)}
		dataDir = c.DataDir
	})
	carol, err := r.srv.Accounts().CreateToken(context.Background(), "carol")
	if err != nil {
		t.Fatal(err)
	}
	// alice's token is resolved once, so it is in the cache.
	if status, _, body := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: r.token}, []byte(hashRun)); status != http.StatusOK {
		t.Fatalf("warm-up run: %d %s", status, body)
	}

	other, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, server.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	unlock := func() {
		conn.ExecContext(context.Background(), `ROLLBACK`)
		conn.Close()
	}
	defer unlock()

	// Nothing here may wait for the lock: each answer must come well
	// before the busy timeout a statement waiting for it would sit out.
	bound := store.BusyTimeout - time.Second
	run := func(name string, c cred, want int) {
		t.Helper()
		began := time.Now()
		status, _, body := r.send("POST", "/api/v1/tools/hash/run", c, []byte(hashRun))
		took := time.Since(began)
		if status != want {
			t.Errorf("%s under the lock: %d %s, want %d", name, status, body, want)
		}
		if took > bound {
			t.Errorf("%s under the lock took %v, over %v", name, took, bound)
		}
	}
	run("anonymous run", cred{}, http.StatusOK)
	run("cached-token run", cred{bearer: r.token}, http.StatusOK)
	// carol's token is read from the database (reads do not wait for a
	// writer in WAL mode); its last_used_at write is given up within the
	// request budget.
	run("new-token run", cred{bearer: carol}, http.StatusOK)
	run("cached new-token run", cred{bearer: carol}, http.StatusOK)
	// The anonymous allowance is 2 runs: the rest are refused, and their
	// abuse rows wait in memory.
	run("anonymous run", cred{}, http.StatusOK)
	for range 5 {
		run("refused run", cred{}, http.StatusTooManyRequests)
	}

	unlock()
	var rows int64
	eventually(t, "the refusals are stored", func() bool {
		got, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
		// The refusals, not the abuse rule the fifth one in a row trips
		// (run.RuleQuotaStreak).
		got = slices.DeleteFunc(got, func(row abuse.Row) bool { return strings.HasPrefix(row.Reason, "rule.") })
		rows = events(got)
		return err == nil && rows == 5
	})
	if m := r.metricsText(); !strings.Contains(m, "toolhost_abuse_dropped_total 0") {
		t.Errorf("/metrics: no toolhost_abuse_dropped_total 0")
	}
}

// lockDatabase takes the write lock of the server's database in dataDir
// from a connection of its own, as another process would: BEGIN IMMEDIATE,
// which in WAL mode blocks every writer and no reader. It returns the
// function that releases it (safe to call more than once; the test's end
// calls it too).
func lockDatabase(t *testing.T, dataDir string) (unlock func()) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, server.DatabaseFile)+"?_pragma=busy_timeout%285000%29")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(context.Background())
	if err != nil {
		other.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		conn.Close()
		other.Close()
		t.Fatal(err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			conn.Close()
			other.Close()
		})
	}
	t.Cleanup(unlock)
	return unlock
}

// TestJobsAnswerBusyUnderALockedDatabase (issue 11, findings 10 and 11):
// while another connection holds the database's write lock, a job
// submission — JSON, and a multipart upload whose file is on disk before
// the job's rows are written — answers 503 tools.store.busy with
// Retry-After: 1 well within the store's busy timeout instead of sitting it
// out and answering 500, and leaves no row and no job folder behind; a
// cancel (a write) answers the same, a read of a job answers. Once the lock
// is gone the same submissions are accepted and run.
func TestJobsAnswerBusyUnderALockedDatabase(t *testing.T) {
	var dataDir string
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, MaxWorkers: 1}
		dataDir = c.DataDir
	})
	letter := readPDF(t, "letter_3pages.pdf")
	sleep := func() (int, http.Header, []byte) {
		return r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"test","input":{"tool":"sleep","ms":10}}`))
	}
	upload := func() (int, http.Header, []byte) {
		return r.doMultipart("/api/v1/jobs", r.token,
			part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render","dpi":36,"first_page":1,"last_page":1}}`)},
			part{name: "file", content: letter, file: true})
	}
	accepted := func(name string, send func() (int, http.Header, []byte)) string {
		t.Helper()
		status, _, body := send()
		var d jobDoc
		if err := json.Unmarshal(body, &d); err != nil || status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", name, status, body)
		}
		return d.ID
	}
	// Before the lock: the token is resolved (and cached), and both kinds
	// of submission work.
	done := r.final(accepted("a submission", sleep))
	if done.State != "succeeded" {
		t.Fatalf("the first job: %+v", done)
	}
	if d := r.final(accepted("an upload", upload)); d.State != "succeeded" {
		t.Fatalf("the first upload: %+v", d)
	}
	rows, dirs := jobRows(t, dataDir), jobDirs(t, dataDir)

	unlock := lockDatabase(t, dataDir)
	// Each answer must come well before the busy timeout a statement
	// waiting for the lock would sit out (the budget is 250 ms).
	bound := store.BusyTimeout - time.Second
	busy := func(name string, send func() (int, http.Header, []byte)) {
		t.Helper()
		began := time.Now()
		status, h, body := send()
		if took := time.Since(began); took > bound {
			t.Errorf("%s under the lock took %v, over %v", name, took, bound)
		}
		problemCode(t, name+" under the lock", status, h, body, http.StatusServiceUnavailable, "tools.store.busy")
		if got := h.Get("Retry-After"); got != "1" {
			t.Errorf("%s under the lock: Retry-After %q, want 1", name, got)
		}
	}
	busy("a submission", sleep)
	busy("an upload", upload)
	busy("a run of a job tool", func() (int, http.Header, []byte) {
		return r.doMultipart("/api/v1/tools/pdf_to_image/run", r.token,
			part{name: "input", content: []byte(`{"dpi":36,"first_page":1,"last_page":1}`)},
			part{name: "file", content: letter, file: true})
	})
	busy("a cancel", func() (int, http.Header, []byte) {
		return r.do("POST", "/api/v1/jobs/"+done.ID+"/cancel", r.token, nil)
	})
	// Reads do not wait for a writer in WAL mode.
	if d := r.job(done.ID, r.token); d.State != "succeeded" {
		t.Errorf("a read under the lock: %+v", d)
	}
	if n, names := jobRows(t, dataDir), jobDirs(t, dataDir); n != rows || !slices.Equal(names, dirs) {
		t.Errorf("the refused submissions left rows %d → %d, folders %v → %v", rows, n, dirs, names)
	}

	unlock()
	if d := r.final(accepted("a submission after the lock", sleep)); d.State != "succeeded" {
		t.Errorf("a submission after the lock: %+v", d)
	}
	if d := r.final(accepted("an upload after the lock", upload)); d.State != "succeeded" {
		t.Errorf("an upload after the lock: %+v", d)
	}
	status, h, body := r.do("POST", "/api/v1/jobs/"+done.ID+"/cancel", r.token, nil)
	problemCode(t, "a cancel of a finished job after the lock", status, h, body, http.StatusConflict, "tools.job.state_conflict")
}

package server_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"toolhost/internal/guard"
	"toolhost/internal/server"
	"toolhost/internal/store"
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
		rows = events(got)
		return err == nil && rows == 5
	})
	if m := r.metricsText(); !strings.Contains(m, "toolhost_abuse_dropped_total 0") {
		t.Errorf("/metrics: no toolhost_abuse_dropped_total 0")
	}
}

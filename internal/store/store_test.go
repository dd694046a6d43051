package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/store"
)

// Closing a Store stops every goroutine its pools started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open opens a Store on path and closes it when the test ends.
func open(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// applied returns the schema_migrations rows as "version name applied_at".
func applied(t *testing.T, s *store.Store) []string {
	t.Helper()
	rows, err := s.ReadDB().Query(`SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var version, name, at string
		if err := rows.Scan(&version, &name, &at); err != nil {
			t.Fatal(err)
		}
		out = append(out, version+" "+name+" "+at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenCreatesFolderAndFile(t *testing.T) {
	// A '?', a '#' and a '%' in the path must not be read as URI syntax.
	path := filepath.Join(t.TempDir(), "a b?c#d%20", "nested", "toolhost.db")
	s := open(t, path)
	if s.Path() != path {
		t.Fatalf("Path() = %q, want %q", s.Path(), path)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("database file mode %v, want 0600", mode)
	}
	if rows := applied(t, s); len(rows) == 0 {
		t.Fatal("no migration recorded")
	}
}

func TestOpenTwiceAppliesMigrationsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolhost.db")
	s := open(t, path)
	first := applied(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	again := applied(t, open(t, path))
	if len(again) != len(first) {
		t.Fatalf("after reopening: %q, want %q", again, first)
	}
	for i := range first {
		if again[i] != first[i] {
			t.Fatalf("after reopening: %q, want %q", again, first)
		}
	}
}

// Stores opened at once on one new file (as by several processes starting
// together) apply each migration once between them.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolhost.db")
	const n = 8
	stores := make([]*store.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = store.Open(context.Background(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	var count, distinct int
	err := stores[0].ReadDB().QueryRow(`SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&count, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if count != distinct || count == 0 {
		t.Fatalf("schema_migrations has %d rows for %d versions", count, distinct)
	}
}

func TestPragmas(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "toolhost.db"))
	pools := []struct {
		name string
		db   *sql.DB
		busy time.Duration
	}{{"DB", s.DB(), store.BusyTimeout}, {"ReadDB", s.ReadDB(), store.ReadBusyTimeout}}
	tests := []struct {
		pragma string
		want   func(busy time.Duration) string
	}{
		{pragma: "journal_mode", want: func(time.Duration) string { return "wal" }},
		{pragma: "foreign_keys", want: func(time.Duration) string { return "1" }},
		{pragma: "busy_timeout", want: func(busy time.Duration) string { return strconv.FormatInt(busy.Milliseconds(), 10) }},
	}
	for _, tt := range tests {
		t.Run(tt.pragma, func(t *testing.T) {
			for _, p := range pools {
				var got string
				if err := p.db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				if want := tt.want(p.busy); got != want {
					t.Fatalf("%s: PRAGMA %s = %q, want %q", p.name, tt.pragma, got, want)
				}
			}
		})
	}
}

// The read pool refuses writes, and what the writer commits is visible to
// it at once.
func TestReadDBIsReadOnly(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "toolhost.db"))
	if _, err := s.ReadDB().Exec(`CREATE TABLE t (x INTEGER)`); err == nil {
		t.Fatal("ReadDB accepted a write")
	}
	if _, err := s.DB().Exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := s.ReadDB().QueryRow(`SELECT x FROM t`).Scan(&x); err != nil || x != 7 {
		t.Fatalf("ReadDB read %d, %v; want 7", x, err)
	}
}

// While another connection holds the write lock, as another process
// would, reads answer, and a write under a Budget fails within the budget
// and is reported Busy instead of waiting out BusyTimeout.
func TestBudgetFailsFastUnderALock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolhost.db")
	s := open(t, path)
	if _, err := s.DB().Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)

	var n int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatalf("a read under the lock: %v", err)
	}
	ctx, cancel := store.Budget(context.Background())
	defer cancel()
	began := time.Now()
	_, err = s.DB().ExecContext(ctx, `INSERT INTO t VALUES (1)`)
	took := time.Since(began)
	if err == nil || !store.Busy(ctx, err) {
		t.Fatalf("a budgeted write under the lock = %v, Busy %v", err, store.Busy(ctx, err))
	}
	// The documented bound is the budget; the margin is generous, and
	// still well short of BusyTimeout.
	if took > store.RequestBusyBudget+2*time.Second {
		t.Fatalf("the budgeted write took %v", took)
	}
	if store.Busy(context.Background(), context.Canceled) || store.Busy(context.Background(), nil) {
		t.Fatal("Busy reports a cancelled client or no error as busy")
	}
}

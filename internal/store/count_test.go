//go:build toolhost_count

package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/store"
)

// The statement counter of the toolhost_count build sees every statement a
// Store sends, on either pool: plain statements, a transaction's BEGIN and
// COMMIT (or ROLLBACK), each execution of a prepared statement, and a new
// connection, each with the caller that sent it. Nothing is recorded
// outside StartCounting … StopCounting.
//
//	go test -count=1 -tags toolhost_count -run CountsStatements ./internal/store
func TestCountsStatements(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "toolhost.db"))
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.ReadDB().QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}

	store.StartCounting()
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO t (v)
		VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO t (v) VALUES (?)`)
	if err != nil {
		t.Fatal(err)
	}
	for v := range 2 {
		if _, err := ins.ExecContext(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err = s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if err := s.ReadDB().QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("count %d, %v", n, err)
	}
	got := store.StopCounting()

	if _, err := s.DB().ExecContext(ctx, `DELETE FROM t`); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, st := range got {
		texts = append(texts, st.Pool+" "+st.SQL)
		if !strings.HasPrefix(st.Caller, "github.com/toolhost/toolhost/internal/store_test.TestCountsStatements (") || !st.OnStack("github.com/toolhost/toolhost/internal/store_test.TestCountsStatements") {
			t.Errorf("%v: caller %q", st, st.Caller)
		}
	}
	want := []string{
		"write INSERT INTO t (v) VALUES (1)",
		"write BEGIN",
		"write INSERT INTO t (v) VALUES (?)",
		"write INSERT INTO t (v) VALUES (?)",
		"write COMMIT",
		"write BEGIN",
		"write ROLLBACK",
		"read SELECT count(*) FROM t",
	}
	if !slices.Equal(texts, want) {
		t.Fatalf("recorded\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	if more := store.StopCounting(); len(more) != 0 {
		t.Fatalf("recorded after StopCounting: %v", more)
	}

	// A new connection is counted: a Store opened while counting records
	// its connections and its migrations' statements.
	store.StartCounting()
	open(t, filepath.Join(t.TempDir(), "other.db"))
	got = store.StopCounting()
	if !slices.ContainsFunc(got, func(st store.Statement) bool { return st.SQL == "(connect)" }) {
		t.Errorf("no connection recorded while opening a Store: %v", got)
	}
}

package store_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// TestBackends opens each backend twice (the second open applies nothing)
// and checks what the statements of auth, abuse and jobs rely on in both
// dialects: the last insert id, ON CONFLICT, NOCASE names, group_concat,
// bool parameters and flags read as bools.
func TestBackends(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		s, err := store.Open(ctx, b.Target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got := s.Dialect().String(); got != b.Name {
			t.Fatalf("dialect %s, want %s", got, b.Name)
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		db := s.DB()
		res, err := db.ExecContext(ctx, `INSERT INTO users (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, "Alice")
		if err != nil {
			t.Fatal(err)
		}
		id, err := res.LastInsertId()
		if err != nil || id <= 0 {
			t.Fatalf("LastInsertId = %d, %v", id, err)
		}
		res, err = db.ExecContext(ctx, `INSERT INTO users (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Fatalf("a second spelling of one name inserted %d rows", n)
		}
		if _, err := db.ExecContext(ctx, `UPDATE users SET disabled = ? WHERE name = ?`, true, "ALICE"); err != nil {
			t.Fatal(err)
		}
		var disabled bool
		var name string
		if err := s.ReadDB().QueryRowContext(ctx, `SELECT name, disabled FROM users WHERE id = ?`, id).Scan(&name, &disabled); err != nil {
			t.Fatal(err)
		}
		if name != "Alice" || !disabled {
			t.Fatalf("read %q disabled=%v", name, disabled)
		}
		res, err = db.ExecContext(ctx, `INSERT INTO tokens (user_id, sandbox, hash) VALUES (?, ?, ?)`, id, false, strings.Repeat("a", 64))
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := res.LastInsertId()
		for _, c := range []string{"tools.net.probe", "b.c"} {
			if _, err := db.ExecContext(ctx, `INSERT INTO token_capabilities (token_id, capability) VALUES (?, ?)`, tok, c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO token_capabilities (token_id, capability) VALUES (?, ?)`, tok, "Bad!"); err == nil {
			t.Fatal("a malformed capability was stored")
		}
		var caps string
		if err := db.QueryRowContext(ctx, `SELECT group_concat(c.capability, ' ') FROM token_capabilities c WHERE c.token_id = ?`, tok).Scan(&caps); err != nil {
			t.Fatal(err)
		}
		if len(strings.Fields(caps)) != 2 {
			t.Fatalf("group_concat = %q", caps)
		}
		s.Close()

		// Reopening applies nothing and keeps the rows.
		s, err = store.Open(ctx, b.Target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("after reopening: %d users, %v", n, err)
		}
	})
}

// TestPostgresBadURL: a URL that does not parse, or a server that is not
// there, is a clear error at Open, without the password.
func TestPostgresBadURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://u:secretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"postgres://u:secretpw@127.0.0.1:5432/db?sslmode=bogus",
	} {
		s, err := store.Open(ctx, dsn)
		if err == nil {
			s.Close()
			t.Fatalf("%s opened", dsn)
		}
		if strings.Contains(err.Error(), "secretpw") {
			t.Fatalf("the error shows the password: %v", err)
		}
		t.Logf("%v", err)
	}
}

// TestMigrationSets: the PostgreSQL migrations are the SQLite ones, file
// for file: the same numbers and names.
func TestMigrationSets(t *testing.T) {
	lite, err := fs.Glob(store.MigrationFiles(store.SQLite), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := fs.Glob(store.MigrationFiles(store.Postgres), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lite, " ") != strings.Join(pg, " ") || len(lite) == 0 {
		t.Fatalf("SQLite migrations %v, PostgreSQL %v", lite, pg)
	}
}

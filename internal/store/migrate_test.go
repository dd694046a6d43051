package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// migrations is a migrations folder holding the given files.
func migrations(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys["migrations/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}

// tables lists the tables of the database at path, schema_migrations
// excepted, and the versions it records.
func tables(t *testing.T, path string) (names []string, versions []int) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name != 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	rows, err = db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	return names, versions
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A migration that fails halfway leaves neither its first statement nor a
// schema_migrations row; the migrations before it stay; a fixed file is
// applied by the next Open.
func TestFailedMigrationLeavesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolhost.db")
	first := "CREATE TABLE a (x INTEGER);"
	broken := migrations(map[string]string{
		"0001_a.sql": first,
		"0002_b.sql": "CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1); INSERT INTO missing VALUES (1);",
	})
	if s, err := open(ctx, path, broken); !errors.Is(err, ErrMigration) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a broken migration: %v, want ErrMigration", err)
	}
	if names, versions := tables(t, path); !equal(names, []string{"a"}) || !equal(versions, []int{1}) {
		t.Fatalf("after the failure: tables %q, versions %v; want [a] and [1]", names, versions)
	}

	fixed := migrations(map[string]string{
		"0001_a.sql": first,
		"0002_b.sql": "CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1);",
	})
	s, err := open(ctx, path, fixed)
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM b`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("b holds %d rows (%v), want the 1 every statement of the file inserts", rows, err)
	}
	s.Close()
	if names, versions := tables(t, path); !equal(names, []string{"a", "b"}) || !equal(versions, []int{1, 2}) {
		t.Fatalf("after the fix: tables %q, versions %v; want [a b] and [1 2]", names, versions)
	}

	// An older binary, knowing only 0001, refuses the file and leaves it.
	older := migrations(map[string]string{"0001_a.sql": first})
	if s, err := open(ctx, path, older); !errors.Is(err, ErrSchemaNewer) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open by an older binary: %v, want ErrSchemaNewer", err)
	}
	if names, versions := tables(t, path); !equal(names, []string{"a", "b"}) || !equal(versions, []int{1, 2}) {
		t.Fatalf("after the refusal: tables %q, versions %v; want [a b] and [1 2]", names, versions)
	}
}

func TestMigrationNames(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		ok    bool
	}{
		{name: "in order", files: map[string]string{"0001_a.sql": "", "0002_b.sql": ""}, ok: true},
		{name: "none", files: map[string]string{}, ok: true},
		{name: "gap", files: map[string]string{"0001_a.sql": "", "0003_c.sql": ""}},
		{name: "repeat", files: map[string]string{"0001_a.sql": "", "0001_b.sql": ""}},
		{name: "starts at 0", files: map[string]string{"0000_a.sql": ""}},
		{name: "short prefix", files: map[string]string{"001_a.sql": ""}},
		{name: "capitals", files: map[string]string{"0001_Accounts.sql": ""}},
		{name: "not sql", files: map[string]string{"0001_a.sql": "", "README.md": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := migrations(tt.files)
			if len(tt.files) == 0 {
				fsys["migrations"] = &fstest.MapFile{Mode: fs.ModeDir}
			}
			ms, err := readMigrations(fsys)
			if tt.ok && (err != nil || len(ms) != len(tt.files)) {
				t.Fatalf("readMigrations = %d, %v; want %d files", len(ms), err, len(tt.files))
			}
			if !tt.ok && !errors.Is(err, ErrMigration) {
				t.Fatalf("readMigrations = %v, want ErrMigration", err)
			}
		})
	}
}

// The embedded migrations are well named; Open would refuse them otherwise.
func TestEmbeddedMigrations(t *testing.T) {
	ms, err := readMigrations(migrationFiles)
	if err != nil || len(ms) == 0 {
		t.Fatalf("readMigrations(embedded) = %d, %v", len(ms), err)
	}
}

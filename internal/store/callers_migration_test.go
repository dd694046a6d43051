package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// upTo is the embedded migrations folder holding only the files before
// prefix.
func upTo(t *testing.T, prefix string) fstest.MapFS {
	t.Helper()
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, e := range entries {
		if e.Name() >= prefix {
			continue
		}
		data, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out["migrations/"+e.Name()] = &fstest.MapFile{Data: data}
	}
	return out
}

// 0004_callers rebuilds tokens: a database with user tokens keeps them, with
// their ids, hashes and times, as user tokens; a token then belongs to
// exactly one user or app, and only an app's token can be a sandbox token.
func TestCallersMigrationKeepsTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolhost.db")
	before, err := open(ctx, path, upTo(t, "0004"))
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("ab", 32)
	_, err = before.DB().Exec(`
		INSERT INTO users (id, name) VALUES (7, 'alice');
		INSERT INTO tokens (id, user_id, hash, created_at, last_used_at) VALUES (42, 7, ?, '2026-11-01T00:00:00.000Z', '2026-11-02T00:00:00.000Z')`, hash)
	if err != nil {
		t.Fatal(err)
	}
	before.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var (
		id, userID                int64
		created, lastUsed, appIDs string
		sandbox                   bool
	)
	err = s.ReadDB().QueryRow(`SELECT id, user_id, coalesce(app_id, ''), sandbox, created_at, last_used_at FROM tokens WHERE hash = ?`, hash).
		Scan(&id, &userID, &appIDs, &sandbox, &created, &lastUsed)
	if err != nil {
		t.Fatal(err)
	}
	if id != 42 || userID != 7 || appIDs != "" || sandbox || created != "2026-11-01T00:00:00.000Z" || lastUsed != "2026-11-02T00:00:00.000Z" {
		t.Fatalf("after the migration: token %d of user %d, app %q, sandbox %v, %s, %s", id, userID, appIDs, sandbox, created, lastUsed)
	}

	if _, err := s.DB().Exec(`INSERT INTO apps (id, name) VALUES (3, 'ci')`); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, stmt string
	}{
		{"neither user nor app", `INSERT INTO tokens (hash) VALUES ('` + strings.Repeat("01", 32) + `')`},
		{"both user and app", `INSERT INTO tokens (user_id, app_id, hash) VALUES (7, 3, '` + strings.Repeat("02", 32) + `')`},
		{"sandbox user token", `INSERT INTO tokens (user_id, sandbox, hash) VALUES (7, 1, '` + strings.Repeat("03", 32) + `')`},
		{"unknown app", `INSERT INTO tokens (app_id, hash) VALUES (99, '` + strings.Repeat("04", 32) + `')`},
		{"malformed capability", `INSERT INTO token_capabilities (token_id, capability) VALUES (42, 'Tools.net')`},
		{"capability of no token", `INSERT INTO token_capabilities (token_id, capability) VALUES (99, 'tools.net.probe')`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.DB().Exec(tt.stmt); err == nil {
				t.Fatalf("accepted: %s", tt.stmt)
			}
		})
	}
	if _, err := s.DB().Exec(`INSERT INTO tokens (id, app_id, sandbox, hash) VALUES (50, 3, 1, ?)`, strings.Repeat("05", 32)); err != nil {
		t.Fatalf("a sandbox app token: %v", err)
	}
	if _, err := s.DB().Exec(`INSERT INTO token_capabilities (token_id, capability) VALUES (50, 'tools.net.probe')`); err == nil {
		t.Fatal("a sandbox token was granted a capability")
	}
	if _, err := s.DB().Exec(`INSERT INTO token_capabilities (token_id, capability) VALUES (42, 'tools.net.probe')`); err != nil {
		t.Fatalf("a user token's capability: %v", err)
	}
}

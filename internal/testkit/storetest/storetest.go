// Package storetest runs a store test against each backend: the SQLite
// file of one machine and, when TOOLHOST_TEST_POSTGRES names a server, a
// PostgreSQL schema of its own. Every test that opens a store uses it, so
// that both dialects pass the same tests.
//
// PostgreSQL is skipped, with a message, when TOOLHOST_TEST_POSTGRES is
// unset, unless CI=true, where its absence fails the test: CI (.ci/run)
// starts a server and sets the variable.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolhost/toolhost/internal/testkit"
)

// EnvPostgres names the PostgreSQL server of the tests, a postgres:// URL
// of a role that may create schemas.
const EnvPostgres = "TOOLHOST_TEST_POSTGRES"

// Backend is one store a test runs against.
type Backend struct {
	// Name is "sqlite" or "postgres", the subtest's name.
	Name string
	// Target is what store.Open takes: a SQLite file in the test's
	// temporary folder, or a PostgreSQL URL whose search_path is a schema
	// made for this test alone and dropped when it ends. Opening it again
	// opens the same database.
	Target string
}

// Run runs fn as one subtest per backend, each with a fresh database.
func Run(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, Postgres(t))
	})
}

// SQLite is a fresh SQLite backend in t's temporary folder.
func SQLite(t testing.TB) Backend {
	return Backend{Name: "sqlite", Target: filepath.Join(t.TempDir(), "toolhost.db")}
}

// Postgres is a fresh PostgreSQL backend: a new schema on the server of
// TOOLHOST_TEST_POSTGRES, dropped with everything in it when t ends. It
// skips t when the variable is unset (fails it under CI=true).
func Postgres(t testing.TB) Backend {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		testkit.Missing(t, fmt.Sprintf("PostgreSQL store tests skipped: set %s=postgres://user:password@127.0.0.1:5432/db?sslmode=disable to run them (.ci/run starts a server)", EnvPostgres))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", EnvPostgres, err)
	}
	defer conn.Close(ctx) //nolint:errcheck // a setup session done with: nothing to lose
	raw := make([]byte, 8)
	rand.Read(raw)
	schema := "test_" + hex.EncodeToString(raw)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx) //nolint:errcheck // a cleanup session done with: nothing to lose
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return Backend{Name: "postgres", Target: WithSchema(t, base, schema)}
}

// WithSchema is the URL base with schema as its search_path.
func WithSchema(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s does not parse: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

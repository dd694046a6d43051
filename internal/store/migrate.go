package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
)

// migration is one schema file.
type migration struct {
	version int    // from the NNNN prefix: 1, 2, …
	file    string // the file name, recorded in schema_migrations
	sql     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// readMigrations reads the migrations folder of fsys in version order and
// checks that the versions count 1, 2, … without gaps or repeats, so that a
// misnamed or misnumbered file is found by any test that opens a Store.
func readMigrations(fsys fs.FS) ([]migration, error) {
	return readMigrationsDir(fsys, "migrations")
}

// readMigrationsDir is readMigrations of the folder dir of fsys.
func readMigrationsDir(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the migrations: %w", ErrMigration, err)
	}
	// ReadDir sorts by name, and the fixed-width prefix makes that
	// version order.
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			return nil, fmt.Errorf("%w: %s is not named NNNN_name.sql", ErrMigration, e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		if version != len(out)+1 {
			return nil, fmt.Errorf("%w: %s has version %d, want %d", ErrMigration, e.Name(), version, len(out)+1)
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %w", ErrMigration, e.Name(), err)
		}
		out = append(out, migration{version: version, file: e.Name(), sql: string(data)})
	}
	return out, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)`

// migrator is a *sql.DB or a *sql.Conn.
type migrator interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// migrate applies the migrations db has not recorded yet. db must begin
// its transactions IMMEDIATE: each one then holds the write lock from the
// moment it checks whether its migration is applied, so two processes
// opening one file apply every migration once between them.
//
// On PostgreSQL db is one connection holding the migration lock
// (migratePostgres), and create is that dialect's CREATE TABLE.
func migrate(ctx context.Context, db migrator, migrations []migration, create string) error {
	if _, err := db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	var newest int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("reading schema_migrations: %w", err)
	}
	if newest > len(migrations) {
		return fmt.Errorf("%w: it records migration %04d, this binary knows %d", ErrSchemaNewer, newest, len(migrations))
	}
	for _, m := range migrations[newest:] {
		if err := apply(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}

// apply runs one migration and records it, in one transaction. It does
// nothing when the migration is already recorded: another process may have
// applied it since migrate looked.
func apply(ctx context.Context, db migrator, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: beginning %s: %w", ErrMigration, m.file, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit; before it, the failure is the one returned
	var applied bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`, m.version).Scan(&applied); err != nil {
		return fmt.Errorf("%w: checking %s: %w", ErrMigration, m.file, err)
	}
	if applied {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("%w: applying %s: %w", ErrMigration, m.file, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.version, m.file); err != nil {
		return fmt.Errorf("%w: recording %s: %w", ErrMigration, m.file, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: committing %s: %w", ErrMigration, m.file, err)
	}
	return nil
}

// Package store is Toolhost's SQL database: by default one SQLite file,
// opened with the pure-Go driver modernc.org/sqlite, or a PostgreSQL
// database shared by replicas (serve --store postgres://…; see
// docs/store.md). It holds accounts, tokens, sessions and apps, the jobs,
// the abuse log and the shared signing key. [Open] brings its schema up to
// date before it returns.
//
// Both dialects are reached through database/sql with the same statements:
// the schema keeps the same columns and types in both (text timestamps,
// INTEGER 0/1 flags), and a PostgreSQL store respells SQLite's ?
// parameters as $N. Where the dialects differ in a statement, the caller
// asks [Store.Dialect]. The rest of this comment is about SQLite; a
// PostgreSQL store is one pgxpool (Store.Pool) under one *sql.DB, which DB
// and ReadDB both return.
//
// # Connections
//
// SQLite lets one connection write at a time; in WAL mode readers neither
// wait for the writer nor block it. A Store therefore keeps two pools on the
// one file:
//
//   - [Store.DB] has a single connection. Every write and every transaction
//     goes through it, so writers wait their turn in database/sql's queue,
//     in order and without polling, instead of in SQLite's busy handler,
//     which sleeps and retries. Transactions begin IMMEDIATE: they take the
//     write lock at BEGIN, so a transaction that reads and then writes cannot
//     fail halfway with SQLITE_BUSY because another process wrote between.
//   - [Store.ReadDB] has several read-only connections (PRAGMA query_only),
//     for lookups on hot paths such as token authentication. They run in
//     parallel with each other and with the writer, and a write sent to
//     them by mistake fails instead of competing for the lock.
//
// Both pools have foreign keys on. The writer's busy timeout is
// [BusyTimeout], which only matters when another process holds the file;
// the readers' is the much shorter [ReadBusyTimeout]: in WAL mode a reader
// waits only in rare moments (another process recovering the WAL index),
// and a lookup on a request path must not sit out a long wait. The journal is WAL;
// synchronous stays at SQLite's default, FULL, so a committed write survives
// a power loss (NORMAL would be faster and could lose the last commits).
//
// # Migrations
//
// The schema is the files of migrations/, embedded in the binary and named
// NNNN_name.sql, numbered from 0001 without gaps. Open applies those not yet
// recorded in the schema_migrations table, in order, each in its own
// transaction together with its schema_migrations row: a migration that fails
// leaves nothing behind, the ones before it stay applied, and the next Open
// tries it again. Adding a migration is adding the next file. A migration
// must not contain BEGIN or COMMIT, and PRAGMAs that do nothing inside a
// transaction (foreign_keys, journal_mode) do nothing in a migration either.
// Open refuses a database that records a migration this binary does not have
// ([ErrSchemaNewer]) and changes nothing in it.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"modernc.org/sqlite" // registers the "sqlite" driver; its *Error carries result codes
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrBusy is the cause of a [Budget] context that ran out, and is
	// wrapped by errors [Busy] reports: the database was locked (by
	// another process, or by a writer that held it past the budget) for
	// longer than a request may wait.
	ErrBusy = errors.New("store: database busy")

	// ErrMigration is returned by Open when the embedded migration files
	// are misnamed or misnumbered, or when one of them fails to apply; a
	// failed migration is rolled back whole.
	ErrMigration = errors.New("store: migration failed")

	// ErrSchemaNewer is returned by Open when the database records a
	// migration this binary does not have: a newer Toolhost wrote it.
	ErrSchemaNewer = errors.New("store: database schema is newer than this binary")
)

const (
	// BusyTimeout is how long a statement of the writer pool waits for a
	// lock held by another process before it fails with SQLITE_BUSY.
	BusyTimeout = 5 * time.Second

	// ReadBusyTimeout is the same for the read pool.
	ReadBusyTimeout = 250 * time.Millisecond

	// RequestBusyBudget is how long [Budget] lets a request's statements
	// wait, for a connection of the pool and for SQLite's lock together.
	RequestBusyBudget = 250 * time.Millisecond
)

// Budget returns ctx bounded by [RequestBusyBudget] for the database
// statements of a request, with [ErrBusy] as the cause when the budget
// runs out. Call cancel when the statements are done.
func Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, RequestBusyBudget, ErrBusy)
}

// Busy reports whether err, returned by a statement run under ctx, means
// the database was busy: SQLITE_BUSY or SQLITE_LOCKED from the driver,
// PostgreSQL's lock and serialization failures, a PostgreSQL server that
// could not be reached or whose connection broke (the caller may retry
// as for a lock: /readyz reports the store meanwhile), or
// ctx (a [Budget] context) ending with ErrBusy as its cause while its
// parent is still live. A client that went away is not busy. ctx may be
// nil when the statement had no budget.
func Busy(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBusy) || pgBusy(err) || pgUnreachable(err) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return ctx != nil && errors.Is(context.Cause(ctx), ErrBusy)
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

//go:embed migrations_postgres/*.sql
var postgresMigrationFiles embed.FS

// Dialect is the SQL engine under a Store.
type Dialect int

const (
	// SQLite is the embedded file of one machine (the default).
	SQLite Dialect = iota
	// Postgres is a PostgreSQL database that replicas share.
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// Store is an open database. Its methods are safe for concurrent use.
type Store struct {
	dialect   Dialect
	pool      *pgxpool.Pool // PostgreSQL only
	path      string
	db        *sql.DB // one connection: writes and transactions
	read      *sql.DB // read-only connections
	closeOnce sync.Once
	closeErr  error
}

// Open opens the database file at path, creating it and its parent folder
// (mode 0700) when they are missing, and applies the pending migrations.
// A new database file is created with mode 0600; SQLite gives its -wal and
// -shm files the same mode. A path that is a postgres:// URL ([IsPostgres])
// opens that PostgreSQL database instead, failing when it cannot be
// reached. The context bounds the opening and the migrations only, not the
// Store's life.
func Open(ctx context.Context, path string) (*Store, error) {
	if IsPostgres(path) {
		return openPostgres(ctx, path)
	}
	return open(ctx, path, migrationFiles)
}

// open is Open with the migrations read from fsys (a "migrations" folder),
// so that tests can supply their own.
func open(ctx context.Context, path string, fsys fs.FS) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving the database path: %w", err)
	}
	migrations, err := readMigrations(fsys)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("creating the database folder: %w", err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the database: %w", err)
	}
	f.Close() //nolint:errcheck // opened to create it with mode 0600 only: nothing written, nothing to lose

	s := &Store{path: abs}
	if s.db, err = openPool(dsn(abs, false), "write"); err != nil {
		return nil, fmt.Errorf("opening %s: %w", abs, err)
	}
	s.db.SetMaxOpenConns(1)
	if err := useWAL(ctx, s.db); err != nil {
		return nil, errors.Join(fmt.Errorf("opening %s: %w", abs, err), s.Close())
	}
	if err := migrate(ctx, s.db, migrations, createMigrationsTable); err != nil {
		return nil, errors.Join(fmt.Errorf("opening %s: %w", abs, err), s.Close())
	}
	if s.read, err = openPool(dsn(abs, true), "read"); err != nil {
		return nil, errors.Join(fmt.Errorf("opening %s: %w", abs, err), s.Close())
	}
	readers := max(2, runtime.GOMAXPROCS(0))
	s.read.SetMaxOpenConns(readers)
	s.read.SetMaxIdleConns(readers)
	if err := s.read.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("opening %s: %w", abs, err), s.Close())
	}
	return s, nil
}

// dsn is the driver's name for the file at the absolute path abs: a SQLite
// URI, so that any character of the path survives (a '?' is escaped rather
// than taken for the start of the parameters), with the pragmas every
// connection of a pool runs when it opens.
func dsn(abs string, readOnly bool) string {
	q := url.Values{}
	busy := BusyTimeout
	if readOnly {
		busy = ReadBusyTimeout
	}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	if readOnly {
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// useWAL puts the database in WAL mode. The mode is kept in the file, so
// this changes something only on a new database; connections opened later
// read it from the file's header.
//
// Switching to WAL needs the file to itself for a moment, and SQLite answers
// SQLITE_BUSY at once, without waiting in the busy handler, when another
// connection (from another process opening the same new file, say) holds a
// lock then. That is why the switch is done here, retried until
// [BusyTimeout], and not as a pragma of every new connection.
func useWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(BusyTimeout)
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		var se *sqlite.Error
		switch {
		case err == nil && mode == "wal":
			return nil
		case err == nil:
			return fmt.Errorf("setting WAL mode: the journal stays %q", mode)
		case !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline):
			return fmt.Errorf("setting WAL mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("setting WAL mode: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Path is the absolute path of the database file; "" for PostgreSQL.
func (s *Store) Path() string { return s.path }

// Dialect is the store's SQL engine.
func (s *Store) Dialect() Dialect { return s.dialect }

// Pool is a PostgreSQL store's pgx pool (River's riverpgxv5 driver runs on
// it); nil for SQLite.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers, for readiness: a PostgreSQL
// server that went away fails it. A SQLite store pings a reader, which
// never waits for the writer.
func (s *Store) Ping(ctx context.Context) error {
	if s.pool != nil {
		return s.pool.Ping(ctx)
	}
	return s.read.PingContext(ctx)
}

// DB is the pool for writes and transactions. It has one connection: inside
// a transaction use the *sql.Tx only, since a statement sent to DB meanwhile
// waits for the transaction's own connection. Transactions begin IMMEDIATE.
func (s *Store) DB() *sql.DB { return s.db }

// ReadDB is the pool for reads that need no transaction. Its connections
// are read-only and see every write committed before a statement starts.
func (s *Store) ReadDB() *sql.DB { return s.read }

// Close closes both pools; a connection still in use closes when its
// statement ends. It is safe to call more than once and returns the first
// call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		// Readers first: the writer's connection is the last one on the
		// file, so closing it checkpoints the WAL into the database.
		if s.read != nil && s.read != s.db {
			s.closeErr = s.read.Close()
		}
		if s.db != nil {
			s.closeErr = errors.Join(s.closeErr, s.db.Close())
		}
		if s.pool != nil {
			s.pool.Close()
		}
	})
	return s.closeErr
}

var errNoRows = sql.ErrNoRows

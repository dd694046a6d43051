package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// DefaultPoolConns is the size of a PostgreSQL store's pool when the DSN
// names none (pool_max_conns): River's producer, its listener, the jobs'
// transactions and the request paths' lookups share it.
const DefaultPoolConns = 16

// IsPostgres reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// openPostgres opens the PostgreSQL database dsn names and applies the
// pending migrations of migrations_postgres. The *sql.DB of DB and ReadDB
// is one pool over pgx's database/sql adapter, whose statements keep the
// SQLite spelling of parameters (rebind); River uses the pgxpool.Pool
// under it (Store.Pool).
func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgconn's message repeats the DSN, password included: name the
		// fault without it.
		return nil, fmt.Errorf("store: the PostgreSQL URL does not parse: %s", redactParseError(err))
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultPoolConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: opening PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s: %w", redactDSN(dsn), err)
	}
	s := &Store{dialect: Postgres, pool: pool, path: ""}
	s.db = sql.OpenDB(pgConnector{stdlib.GetPoolConnector(pool)})
	s.read = s.db
	migrations, err := readMigrationsDir(postgresMigrationFiles, "migrations_postgres")
	if err == nil {
		err = migratePostgres(ctx, s.db, migrations)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("opening PostgreSQL at %s: %w", redactDSN(dsn), err), s.Close())
	}
	return s, nil
}

// migrationLock is the pg_advisory_lock key under which a process applies
// the migrations, so that replicas starting together apply each once.
const migrationLock = 0x746f6f6c686f7374 // "toolhost"

// migratePostgres is migrate on one connection that holds the migration
// lock for the whole run.
func migratePostgres(ctx context.Context, db *sql.DB, migrations []migration) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close() //nolint:errcheck // hands the connection back to the pool: only ErrConnDone, nothing to lose
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("taking the migration lock: %w", err)
	}
	defer func() {
		uctx := context.WithoutCancel(ctx)
		if _, err := conn.ExecContext(uctx, `SELECT pg_advisory_unlock(?)`, int64(migrationLock)); err != nil {
			// The lock is the session's: ended, the session takes it along.
			dropSession(uctx, conn)
		}
	}()
	return migrate(ctx, conn, migrations, createMigrationsTablePostgres)
}

// dropSession ends conn's PostgreSQL session rather than hand it back to
// the pools with what it holds (a session lock): its connection is closed,
// then leaves database/sql's pool (told so by ErrBadConn) and pgxpool's
// (which drops a closed connection at its release).
func dropSession(ctx context.Context, conn *sql.Conn) {
	conn.Raw(func(dc any) error { //nolint:errcheck // Raw returns f's ErrBadConn, by design
		if c, ok := dc.(*pgConn); ok {
			c.Conn.Conn().Close(ctx) //nolint:errcheck // a session being ended: nothing to lose
		}
		return driver.ErrBadConn
	})
}

const createMigrationsTablePostgres = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
)`

// redactDSN is dsn without its password, for messages.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a PostgreSQL URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.Redacted()
}

// redactParseError is the reason pgx gives for a DSN it cannot parse,
// without the DSN it quotes.
func redactParseError(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	return "invalid URL"
}

// pgConnector makes the connections of a PostgreSQL store's *sql.DB:
// pgx's, with each statement's parameters respelled (rebind) and Go bools
// sent as the 0 and 1 the schema keeps.
type pgConnector struct{ inner driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{dc.(*stdlib.Conn)}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q := rebind(query)
	if insertWithID.MatchString(q) && !returning.MatchString(q) {
		return c.insert(ctx, q, args)
	}
	return c.Conn.ExecContext(ctx, q, args)
}

// insertWithID matches an INSERT into a table whose key is an identity
// column named id; returning, a statement that already returns something.
var (
	insertWithID = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+(users|tokens|apps|sessions|abuse_log)\b`)
	returning    = regexp.MustCompile(`(?i)\bRETURNING\b`)
)

// insert runs q, an INSERT into a table of insertWithID, with RETURNING id,
// so that its result has SQLite's LastInsertId (the id of the last row
// inserted) as well as its RowsAffected: pgx has no last insert id.
func (c *pgConn) insert(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	q = strings.TrimRight(strings.TrimSpace(q), ";") + " RETURNING id"
	rows, err := c.Conn.QueryContext(ctx, q, args)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // Next's failure is the one returned
	var res insertResult
	dest := make([]driver.Value, 1)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		res.rows++
		if id, ok := dest[0].(int64); ok {
			res.id = id
		}
	}
}

type insertResult struct{ id, rows int64 }

func (r insertResult) LastInsertId() (int64, error) { return r.id, nil }
func (r insertResult) RowsAffected() (int64, error) { return r.rows, nil }

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// CheckNamedValue sends a bool as an integer: the schema's flags are
// INTEGER 0/1 in both dialects, so that the same statements serve both.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
		return nil
	}
	return c.Conn.CheckNamedValue(nv)
}

// PgxConn is the pgx connection under a connection of a PostgreSQL
// store's *sql.DB, for the River driver's statements inside a transaction
// begun through database/sql ([RawPgx]).
func (c *pgConn) PgxConn() *pgx.Conn { return c.Conn.Conn() }

// RawPgx runs fn with the pgx connection under conn, a connection of a
// PostgreSQL store's DB, while conn's transaction (if any) stays open: a
// statement fn sends through it is part of that transaction.
func RawPgx(conn *sql.Conn, fn func(*pgx.Conn) error) error {
	return conn.Raw(func(dc any) error {
		pc, ok := dc.(*pgConn)
		if !ok {
			return errors.New("store: not a PostgreSQL connection")
		}
		return fn(pc.PgxConn())
	})
}

// rebind respells the parameters of a statement written for SQLite — ?
// for the next one, ?N for the Nth — as PostgreSQL's $N, leaving quoted
// strings, quoted names and comments as they are.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	next := 0
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch ch {
		case '\'', '"':
			j := i + 1
			for j < len(q) && q[j] != ch {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case '-':
			if i+1 < len(q) && q[i+1] == '-' {
				j := strings.IndexByte(q[i:], '\n')
				if j < 0 {
					b.WriteString(q[i:])
					return b.String()
				}
				b.WriteString(q[i : i+j])
				i += j - 1
			} else {
				b.WriteByte(ch)
			}
		case '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteByte('$')
				b.WriteString(q[i+1 : j])
				i = j - 1
			} else {
				next++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(next))
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// pgUnreachable reports whether err is a PostgreSQL connection that could
// not be made or broke: the server is down, restarting or cut off.
func pgUnreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return false // the caller's deadline or cancellation (Busy looks at its cause)
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return true
	case errors.As(err, &pe):
		// Class 08, connection exception; the server shutting down or
		// starting up.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return false
}

// pgBusy reports whether err is PostgreSQL's way of saying another
// transaction holds what a statement needs.
func pgBusy(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "55P03", "40001", "40P01": // lock_not_available, serialization_failure, deadlock_detected
		return true
	}
	return false
}

// InTx runs fn with a pgx.Tx standing for the transaction conn has open
// (begun with conn.BeginTx on a PostgreSQL store's DB), so that River's
// riverpgxv5 statements (InsertTx, JobCancelTx, …) are part of the same
// transaction as the database/sql statements around them: a job's row and
// its River ticket commit or roll back together. fn must not keep the
// pgx.Tx; its Commit and Rollback are refused (the database/sql transaction
// ends it), and its Begin makes a savepoint.
func InTx(conn *sql.Conn, fn func(pgx.Tx) error) error {
	return RawPgx(conn, func(c *pgx.Conn) error { return fn(&openTx{c: c}) })
}

// openTx is pgx.Tx over a connection whose transaction someone else
// began; depth > 0 is a savepoint inside it.
type openTx struct {
	c     *pgx.Conn
	depth int
}

var errOuterTx = errors.New("store: the transaction is ended by database/sql, not through River")

func (t *openTx) Begin(ctx context.Context) (pgx.Tx, error) {
	n := t.depth + 1
	if _, err := t.c.Exec(ctx, "SAVEPOINT toolhost_sp_"+strconv.Itoa(n)); err != nil {
		return nil, err
	}
	return &openTx{c: t.c, depth: n}, nil
}

func (t *openTx) Commit(ctx context.Context) error {
	if t.depth == 0 {
		return errOuterTx
	}
	_, err := t.c.Exec(ctx, "RELEASE SAVEPOINT toolhost_sp_"+strconv.Itoa(t.depth))
	return err
}

func (t *openTx) Rollback(ctx context.Context) error {
	if t.depth == 0 {
		return errOuterTx
	}
	_, err := t.c.Exec(ctx, "ROLLBACK TO SAVEPOINT toolhost_sp_"+strconv.Itoa(t.depth))
	return err
}

func (t *openTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return t.c.CopyFrom(ctx, table, cols, src)
}

func (t *openTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.c.SendBatch(ctx, b)
}

func (t *openTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *openTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.c.Prepare(ctx, name, sql)
}

func (t *openTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.c.Exec(ctx, sql, args...)
}

func (t *openTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.c.Query(ctx, sql, args...)
}

func (t *openTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.c.QueryRow(ctx, sql, args...)
}

func (t *openTx) Conn() *pgx.Conn { return t.c }

var _ pgx.Tx = (*openTx)(nil)

//go:build toolhost_count

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// This file exists only in builds with the toolhost_count tag: tests that
// prove a path runs no SQL statement (docs/performance.md, "No SQL on the
// run path"). Every pool a Store opens goes through a connector that
// records each statement sent to SQLite while counting is on; the default
// build opens the plain driver instead (count_default.go).

// Statement is one statement a Store sent to SQLite, recorded while
// counting.
type Statement struct {
	// Pool is "write" ([Store.DB]) or "read" ([Store.ReadDB]).
	Pool string
	// SQL is the statement's text, whitespace collapsed; BEGIN, COMMIT and
	// ROLLBACK for a transaction's ends, "(connect)" for a new connection
	// (which runs the pool's pragmas).
	SQL string
	// Caller is the first frame outside database/sql and this file, as
	// "function (file:line)".
	Caller string
	// Stack is the statement's goroutine stack from Caller outwards, up to
	// 48 frames, each formatted as Caller is.
	Stack []string
}

// String is the statement's pool, caller and text.
func (s Statement) String() string {
	return fmt.Sprintf("%s %q at %s", s.Pool, s.SQL, s.Caller)
}

// OnStack reports whether a frame of the statement's stack is in function
// fn (its full name, such as "github.com/toolhost/toolhost/internal/abuse.(*Log).loop").
func (s Statement) OnStack(fn string) bool {
	for _, f := range s.Stack {
		if strings.HasPrefix(f, fn+" (") {
			return true
		}
	}
	return false
}

var counting struct {
	on    atomic.Bool
	mu    sync.Mutex
	stmts []Statement
}

// StartCounting forgets the statements recorded so far and records every
// statement of every Store in the process from now on, until StopCounting.
func StartCounting() {
	counting.mu.Lock()
	counting.stmts = nil
	counting.mu.Unlock()
	counting.on.Store(true)
}

// StopCounting stops recording and returns the statements recorded since
// StartCounting, in the order they were sent.
func StopCounting() []Statement {
	counting.on.Store(false)
	counting.mu.Lock()
	defer counting.mu.Unlock()
	s := counting.stmts
	counting.stmts = nil
	return s
}

func record(pool, query string) {
	if !counting.on.Load() {
		return
	}
	s := Statement{Pool: pool, SQL: strings.Join(strings.Fields(query), " ")}
	pcs := make([]uintptr, 96)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		mine := strings.HasSuffix(f.File, "/store/count_testing.go")
		if !mine && !strings.HasPrefix(f.Function, "database/sql.") && len(s.Stack) < 48 {
			s.Stack = append(s.Stack, fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line))
		}
		if !more {
			break
		}
	}
	if len(s.Stack) > 0 {
		s.Caller = s.Stack[0]
	}
	counting.mu.Lock()
	counting.stmts = append(counting.stmts, s)
	counting.mu.Unlock()
}

// openPool opens a pool on dsn through a connector that records the
// statements of each connection, named pool.
func openPool(dsn, pool string) (*sql.DB, error) {
	base, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(countConnector{base: base, pool: pool}), nil
}

type countConnector struct {
	base driver.Connector
	pool string
}

func (c countConnector) Connect(ctx context.Context) (driver.Conn, error) {
	record(c.pool, "(connect)")
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countConn{Conn: conn, pool: c.pool}, nil
}

func (c countConnector) Driver() driver.Driver { return c.base.Driver() }

// countConn forwards every optional interface the driver's connections
// implement (see sqlite.NewConnector), so that database/sql uses the same
// paths as with the plain driver.
type countConn struct {
	driver.Conn
	pool string
}

// The driver's connections implement all of these.
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

func (c *countConn) inner() driverConn { return c.Conn.(driverConn) }

// Unwrap is the driver's connection, for sqlite.Limit and the like.
func (c *countConn) Unwrap() driver.Conn { return c.Conn }

func (c *countConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	record(c.pool, "BEGIN")
	tx, err := c.inner().BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countTx{Tx: tx, pool: c.pool}, nil
}

func (c *countConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &countStmt{Stmt: st, pool: c.pool, query: query}, nil
}

func (c *countConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	record(c.pool, query)
	return c.inner().ExecContext(ctx, query, args)
}

func (c *countConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	record(c.pool, query)
	return c.inner().QueryContext(ctx, query, args)
}

func (c *countConn) Ping(ctx context.Context) error {
	record(c.pool, "select 1")
	return c.inner().Ping(ctx)
}

func (c *countConn) ResetSession(ctx context.Context) error { return c.inner().ResetSession(ctx) }

func (c *countConn) IsValid() bool { return c.inner().IsValid() }

type countTx struct {
	driver.Tx
	pool string
}

func (t countTx) Commit() error {
	record(t.pool, "COMMIT")
	return t.Tx.Commit()
}

func (t countTx) Rollback() error {
	record(t.pool, "ROLLBACK")
	return t.Tx.Rollback()
}

// countStmt records each execution of a prepared statement.
type countStmt struct {
	driver.Stmt
	pool, query string
}

type driverStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

func (s *countStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	record(s.pool, s.query)
	return s.Stmt.(driverStmt).ExecContext(ctx, args)
}

func (s *countStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	record(s.pool, s.query)
	return s.Stmt.(driverStmt).QueryContext(ctx, args)
}

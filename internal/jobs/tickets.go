package jobs

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolhost/toolhost/internal/store"
)

// txn is a transaction of the job store: the *sql.Tx every statement of
// ours goes through and, on PostgreSQL, the connection it is open on, on
// which River's statements join it (store.InTx).
type txn struct {
	*sql.Tx
	conn *sql.Conn // PostgreSQL only
	// onCommit runs once tx has committed, in order: the release of the
	// slots of the jobs it moved to a final state, the removal of what
	// their rows now hold.
	onCommit []func()
}

// tickets is River as the jobs see it, whichever driver runs it:
// riversqlite on the store's writer for SQLite, riverpgxv5 on the store's
// pool for PostgreSQL. Its transactional calls take our txn.
type tickets interface {
	insert(ctx context.Context, tx *txn, args ticketArgs, opts *river.InsertOpts) (int64, error)
	cancel(ctx context.Context, tx *txn, id int64) error
	get(ctx context.Context, tx *txn, id int64) (*rivertype.JobRow, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// openTickets applies River's migrations with the store's driver and makes
// its client.
func openTickets(ctx context.Context, st *store.Store, config func(log *slog.Logger) *river.Config, log *slog.Logger) (tickets, error) {
	if st.Dialect() == store.Postgres {
		driver := riverpgxv5.New(st.Pool())
		if err := underLock(ctx, st, riverMigrationLock, func() error { return migrateRiver(ctx, driver, log) }); err != nil {
			return nil, err
		}
		c, err := river.NewClient(driver, config(log))
		if err != nil {
			return nil, err
		}
		return pgTickets{c}, nil
	}
	driver := riversqlite.New(st.DB())
	if err := migrateRiver(ctx, driver, log); err != nil {
		return nil, err
	}
	c, err := river.NewClient(driver, config(log))
	if err != nil {
		return nil, err
	}
	return sqliteTickets{c}, nil
}

// riverMigrationLock is the pg_advisory_lock key under which a replica
// applies River's migrations: replicas starting together against a new
// database would otherwise create River's types twice and one would fail
// (rivermigrate takes no lock of its own).
const riverMigrationLock = 0x72697665726d6967 // "rivermig"

// underLock runs fn while this process holds the advisory lock key on a
// connection of the store's pool.
func underLock(ctx context.Context, st *store.Store, key int64, fn func() error) error {
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		return errMigrateRiver{err}
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return errMigrateRiver{err}
	}
	defer func() {
		uctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", key); err != nil {
			// The lock is the session's: closed, the connection takes it
			// along, and Release then drops the connection from the pool.
			conn.Conn().Close(uctx) //nolint:errcheck // a connection dropped: nothing to lose
		}
	}()
	return fn()
}

// errMigrateRiver marks a failure of River's own migrations.
type errMigrateRiver struct{ err error }

func (e errMigrateRiver) Error() string { return "applying River's migrations: " + e.err.Error() }
func (e errMigrateRiver) Unwrap() error { return e.err }

func migrateRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], log *slog.Logger) error {
	m, err := rivermigrate.New[TTx](driver, &rivermigrate.Config{Logger: log})
	if err != nil {
		return errMigrateRiver{err}
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return errMigrateRiver{err}
	}
	return nil
}

type sqliteTickets struct{ c *river.Client[*sql.Tx] }

func (t sqliteTickets) insert(ctx context.Context, tx *txn, args ticketArgs, opts *river.InsertOpts) (int64, error) {
	res, err := t.c.InsertTx(ctx, tx.Tx, args, opts)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

func (t sqliteTickets) cancel(ctx context.Context, tx *txn, id int64) error {
	_, err := t.c.JobCancelTx(ctx, tx.Tx, id)
	return err
}

func (t sqliteTickets) get(ctx context.Context, tx *txn, id int64) (*rivertype.JobRow, error) {
	return t.c.JobGetTx(ctx, tx.Tx, id)
}

func (t sqliteTickets) Start(ctx context.Context) error         { return t.c.Start(ctx) }
func (t sqliteTickets) Stop(ctx context.Context) error          { return t.c.Stop(ctx) }
func (t sqliteTickets) StopAndCancel(ctx context.Context) error { return t.c.StopAndCancel(ctx) }

type pgTickets struct{ c *river.Client[pgx.Tx] }

func (t pgTickets) insert(ctx context.Context, tx *txn, args ticketArgs, opts *river.InsertOpts) (id int64, err error) {
	err = store.InTx(tx.conn, func(ptx pgx.Tx) error {
		res, err := t.c.InsertTx(ctx, ptx, args, opts)
		if err == nil {
			id = res.Job.ID
		}
		return err
	})
	return id, err
}

func (t pgTickets) cancel(ctx context.Context, tx *txn, id int64) error {
	return store.InTx(tx.conn, func(ptx pgx.Tx) error {
		_, err := t.c.JobCancelTx(ctx, ptx, id)
		return err
	})
}

func (t pgTickets) get(ctx context.Context, tx *txn, id int64) (row *rivertype.JobRow, err error) {
	err = store.InTx(tx.conn, func(ptx pgx.Tx) error {
		row, err = t.c.JobGetTx(ctx, ptx, id)
		return err
	})
	return row, err
}

func (t pgTickets) Start(ctx context.Context) error         { return t.c.Start(ctx) }
func (t pgTickets) Stop(ctx context.Context) error          { return t.c.Stop(ctx) }
func (t pgTickets) StopAndCancel(ctx context.Context) error { return t.c.StopAndCancel(ctx) }

package jobs

import (
	"context"
	"database/sql"

	"github.com/toolhost/toolhost/internal/store"
)

// Rows is where the jobs' rows are kept, for the statements already cut
// out of this package: the control's (cancel, retry, counts by state) and
// the sweeps' and the lists of queued and active jobs, for SQLite and PostgreSQL alike, in package store
// (*store.Store implements it, internal/store/jobrows.go). A method taking
// a *sql.Tx runs in the job's transaction (withTx), the one River's ticket
// is written in too. Submit, claim, finish, progress and the reads of a
// job and its files still write their SQL here (docs/store.md).
type Rows interface {
	// MarkCancelRequested records that running job id is to stop.
	MarkCancelRequested(ctx context.Context, tx *sql.Tx, id string) error
	// CountLiveInputs counts job id's input files unexpired at now.
	CountLiveInputs(ctx context.Context, tx *sql.Tx, id, now string) (int, error)
	// RequeueForRetry puts final job id back to queued, cleared.
	RequeueForRetry(ctx context.Context, tx *sql.Tx, id string) error
	// CountJobsByState counts the jobs of each state that has any.
	CountJobsByState(ctx context.Context) (map[string]int64, error)
	// ListExpiredFiles lists up to limit files expired at or before now.
	ListExpiredFiles(ctx context.Context, now string, limit int) ([]store.ExpiredFile, error)
	// DeleteExpiredFile deletes a file's row if still expired at now.
	DeleteExpiredFile(ctx context.Context, tx *sql.Tx, id, name, now string) error
	// ListOldJobs lists up to limit final jobs finished by cutoff.
	ListOldJobs(ctx context.Context, cutoff string, limit int) ([]string, error)
	// DeleteOldJob deletes job id if still finished by cutoff.
	DeleteOldJob(ctx context.Context, tx *sql.Tx, id, cutoff string) error
	// ListQueuedJobs lists the queued jobs' ids, oldest first.
	ListQueuedJobs(ctx context.Context) ([]string, error)
	// ListActiveJobs lists the queued and running jobs' ids, oldest first.
	ListActiveJobs(ctx context.Context) ([]string, error)
	// JobExists reports whether there is a job id.
	JobExists(ctx context.Context, id string) (bool, error)
}

var _ Rows = (*store.Store)(nil)

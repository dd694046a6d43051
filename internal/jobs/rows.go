package jobs

import (
	"context"
	"database/sql"

	"github.com/toolhost/toolhost/internal/store"
)

// Rows is where the jobs' rows are kept: every statement of this package
// on its own tables (jobs, job_files) is one of its methods, for SQLite
// and PostgreSQL alike, in package store (*store.Store implements it,
// internal/store/jobrows.go). A method taking a *sql.Tx runs in the job's
// transaction (withTx), the one River's ticket is written in too; the
// reads without one go to the store's readers. This package writes no SQL
// of its own; River's statements are River's (tickets.go).
type Rows interface {
	// MarkCancelRequested records that running job id is to stop.
	MarkCancelRequested(ctx context.Context, tx *sql.Tx, id string) error
	// CountLiveInputs counts job id's input files unexpired at now.
	CountLiveInputs(ctx context.Context, tx *sql.Tx, id, now string) (int, error)
	// RequeueForRetry puts final job id back to queued, cleared, holding
	// slots ("" for none).
	RequeueForRetry(ctx context.Context, tx *sql.Tx, id, slots string) error
	// CountJobsByState counts the jobs of each state that has any, a
	// running job whose lease ran out before now as "stalled".
	CountJobsByState(ctx context.Context, now string) (map[string]int64, error)
	// IdempotentJob reads the job owner submitted with key, and when it
	// was created; sql.ErrNoRows when none.
	IdempotentJob(ctx context.Context, tx *sql.Tx, owner, key string) (id, createdAt string, err error)
	// ClearIdempotencyKey forgets job id's Idempotency-Key.
	ClearIdempotencyKey(ctx context.Context, tx *sql.Tx, id string) error
	// ListJobs reads up to limit jobs, newest first, of owner and state
	// ("" for any).
	ListJobs(ctx context.Context, owner, state string, limit int) ([]store.JobRecord, error)
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

	// GetJob reads job id's row; sql.ErrNoRows when there is none.
	GetJob(ctx context.Context, id string) (store.JobRecord, error)
	// ListJobFiles reads job id's files, inputs first, each group by name.
	ListJobFiles(ctx context.Context, id string) ([]store.JobFileRecord, error)
	// LookupJobFile reads file name of job id and the job's owner.
	LookupJobFile(ctx context.Context, id, name string) (store.JobFileRecord, string, error)
	// LookupReferencedFile reads what a reference to file name of job id
	// needs of it, the job's owner too.
	LookupReferencedFile(ctx context.Context, id, name string) (store.ReferencedFile, error)
	// GetJobTransition reads the fields the transitions decide on.
	GetJobTransition(ctx context.Context, tx *sql.Tx, id string) (store.JobTransition, error)
	// InsertJob inserts a queued job.
	InsertJob(ctx context.Context, tx *sql.Tx, j store.NewJob) error
	// InsertInputFile inserts an input file of job id.
	InsertInputFile(ctx context.Context, tx *sql.Tx, id string, f store.JobFileRecord) error
	// InsertOutputFile inserts an output file of job id.
	InsertOutputFile(ctx context.Context, tx *sql.Tx, id string, f store.JobFileRecord) error
	// SetJobTicket records job id's River ticket.
	SetJobTicket(ctx context.Context, tx *sql.Tx, id string, ticket int64) error
	// FinishJob moves job id to a final state.
	FinishJob(ctx context.Context, tx *sql.Tx, id, state string, result, errDoc any, finishedAt, expires string) error
	// SetJobFilesExpiry sets the expiry of all of job id's files.
	SetJobFilesExpiry(ctx context.Context, tx *sql.Tx, id, expires string) error
	// RequeueJob puts job id back to queued for a rerun.
	RequeueJob(ctx context.Context, tx *sql.Tx, id string) error
	// ClaimJob starts a run of job id, leased until lease (nil: none).
	ClaimJob(ctx context.Context, tx *sql.Tx, id, startedAt string, lease any) error
	// GetJobInput reads job id's input document.
	GetJobInput(ctx context.Context, id string) (string, error)
	// SaveRunningProgress records running job id's progress, outside a
	// transaction.
	SaveRunningProgress(ctx context.Context, id string, done, total int64, message string) error
	// SaveProgress records job id's progress in tx.
	SaveProgress(ctx context.Context, tx *sql.Tx, id string, done, total int64, message string) error
	// RenewLease extends running job id's lease while it runs on ticket.
	RenewLease(ctx context.Context, id string, ticket int64, lease any) error
}

var _ Rows = (*store.Store)(nil)

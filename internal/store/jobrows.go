package store

import (
	"context"
	"database/sql"
)

// The jobs' rows (package jobs, docs/jobs.md): every statement on the
// jobs and job_files tables — submit, claim, progress, finish, requeue,
// the lease, the reads of a job, its input and its files, the control
// (cancel, retry, counts), the sweeps and the lists of queued and active
// jobs — one text for both dialects.
// Package jobs holds them as its jobs.Rows interface; *Store implements
// it. A method taking a *sql.Tx runs in the jobs' transaction, the one
// that also holds the job's River ticket; the others read from ReadDB,
// except SaveRunningProgress and RenewLease, single writes on the writer
// outside any transaction, as they were in package jobs (docs/store.md).

// ExpiredFile is a job file whose expiry has passed, as ListExpiredFiles
// returns it.
type ExpiredFile struct {
	JobID, Name, Role string
}

// MarkCancelRequested records in tx that running job id is to stop.
func (s *Store) MarkCancelRequested(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ?`, id)
	return err
}

// CountLiveInputs counts in tx job id's input files still unexpired at now.
func (s *Store) CountLiveInputs(ctx context.Context, tx *sql.Tx, id, now string) (int, error) {
	var live int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM job_files WHERE job_id = ? AND role = 'input' AND expires_at > ?`,
		id, now).Scan(&live)
	return live, err
}

// RequeueForRetry puts final job id back to queued in tx: its files no
// longer expire, its result, error, progress, cancel mark and times are
// cleared, its version grows. Its new River ticket is the caller's.
func (s *Store) RequeueForRetry(ctx context.Context, tx *sql.Tx, id, slots string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE job_files SET expires_at = NULL WHERE job_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', result = NULL, error = NULL, progress_done = 0,
			progress_total = 0, progress_message = '', cancel_requested = 0, started_at = NULL, finished_at = NULL,
			expires_at = NULL, slots = ?, version = version + 1 WHERE id = ?`, nullString(slots), id)
	return err
}

// CountJobsByState returns how many jobs each state that has any holds,
// a running job whose lease ran out before now counted as "stalled" (its
// replica stopped vouching for it; the rescuer settles it). One query over
// the jobs_state index.
func (s *Store) CountJobsByState(ctx context.Context, now string) (map[string]int64, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT CASE WHEN state = 'running' AND lease_until IS NOT NULL AND lease_until < ?
		THEN 'stalled' ELSE state END AS st, count(*) FROM jobs GROUP BY st`, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// IdempotentJob reads in tx the job owner submitted with Idempotency-Key
// key, and when it was created; sql.ErrNoRows when there is none.
func (s *Store) IdempotentJob(ctx context.Context, tx *sql.Tx, owner, key string) (id, createdAt string, err error) {
	err = tx.QueryRowContext(ctx, `SELECT id, created_at FROM jobs WHERE owner = ? AND idempotency_key = ?`, owner, key).Scan(&id, &createdAt)
	return id, createdAt, err
}

// ClearIdempotencyKey forgets in tx job id's Idempotency-Key, so that the
// key can name a new job.
func (s *Store) ClearIdempotencyKey(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET idempotency_key = NULL WHERE id = ?`, id)
	return err
}

// ListJobs reads from the readers up to limit jobs, newest first: every
// owner's when owner is "", every state's when state is "".
func (s *Store) ListJobs(ctx context.Context, owner, state string, limit int) ([]JobRecord, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE (? = '' OR owner = ?) AND (? = '' OR state = ?)
		ORDER BY created_at DESC, id LIMIT ?`, owner, owner, state, state, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var out []JobRecord
	for rows.Next() {
		var j JobRecord
		if err := rows.Scan(&j.ID, &j.Type, &j.Owner, &j.State, &j.Input, &j.Result, &j.Error, &j.Refs, &j.ProgressDone,
			&j.ProgressTotal, &j.ProgressMessage, &j.Attempts, &j.Version, &j.CreatedAt, &j.StartedAt, &j.FinishedAt,
			&j.ExpiresAt); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// nullString is s as a nullable column: NULL when empty.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// ListExpiredFiles returns up to limit job files that expired at or
// before now.
func (s *Store) ListExpiredFiles(ctx context.Context, now string, limit int) ([]ExpiredFile, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT job_id, name, role FROM job_files WHERE expires_at <= ? LIMIT ?`, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var out []ExpiredFile
	for rows.Next() {
		var f ExpiredFile
		if err := rows.Scan(&f.JobID, &f.Name, &f.Role); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// DeleteExpiredFile deletes in tx the row of job id's file name if it
// still expires at or before now.
func (s *Store) DeleteExpiredFile(ctx context.Context, tx *sql.Tx, id, name, now string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM job_files WHERE job_id = ? AND name = ? AND expires_at <= ?`, id, name, now)
	return err
}

// ListOldJobs returns the ids of up to limit final jobs finished at or
// before cutoff.
func (s *Store) ListOldJobs(ctx context.Context, cutoff string, limit int) ([]string, error) {
	return s.jobIDs(ctx, `SELECT id FROM jobs WHERE finished_at <= ? AND state IN ('succeeded', 'failed', 'cancelled')
		LIMIT ?`, cutoff, limit)
}

// DeleteOldJob deletes job id in tx if it still finished at or before
// cutoff.
func (s *Store) DeleteOldJob(ctx context.Context, tx *sql.Tx, id, cutoff string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE id = ? AND finished_at <= ?`, id, cutoff)
	return err
}

// ListQueuedJobs returns the ids of the queued jobs, oldest first.
func (s *Store) ListQueuedJobs(ctx context.Context) ([]string, error) {
	return s.jobIDs(ctx, `SELECT id FROM jobs WHERE state = 'queued' ORDER BY created_at`)
}

// ListActiveJobs returns the ids of the queued and running jobs, oldest
// first.
func (s *Store) ListActiveJobs(ctx context.Context) ([]string, error) {
	return s.jobIDs(ctx, `SELECT id FROM jobs WHERE state IN ('queued', 'running') ORDER BY created_at`)
}

// jobIDs runs query with args, which selects job ids, on the readers.
func (s *Store) jobIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// JobExists reports whether there is a job id.
func (s *Store) JobExists(ctx context.Context, id string) (bool, error) {
	var exists bool
	err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?)`, id).Scan(&exists)
	return exists, err
}

// JobRecord is a job's row as GetJob reads it, its columns as stored:
// the timestamps are the store's text, the JSON documents text.
type JobRecord struct {
	ID, Type, Owner, State, Input string
	Result, Error                 sql.NullString
	Refs                          string
	ProgressDone, ProgressTotal   int64
	ProgressMessage               string
	Attempts                      int
	Version                       int64
	CreatedAt                     string
	StartedAt, FinishedAt         sql.NullString
	ExpiresAt                     sql.NullString
}

// JobFileRecord is a job file's row, as ListJobFiles and LookupJobFile
// read it and InsertInputFile and InsertOutputFile write it.
type JobFileRecord struct {
	Name, Role, MediaType string
	SizeBytes             int64
	SHA256, Source        string
	CreatedAt             string
	ExpiresAt             sql.NullString
}

// JobTransition is what the jobs' state transitions read of a job's row
// (GetJobTransition).
type JobTransition struct {
	ID, Type, Owner, State string
	Ticket                 sql.NullInt64
	Attempts               int
	CancelRequested        bool
	InputFiles             int
	LeaseUntil             sql.NullString
	// Slots are the concurrency slots the job holds (the guard's JSON);
	// NULL when none.
	Slots sql.NullString
}

// NewJob is a queued job's row as InsertJob writes it.
type NewJob struct {
	ID, Type, Owner, Input, Refs string
	InputFiles                   int
	CreatedAt                    string
	// Slots are the concurrency slots the job holds; "" for none.
	Slots string
	// IdempotencyKey is the submission's Idempotency-Key; "" for none.
	IdempotencyKey string
}

// ReferencedFile is what a submission referencing an earlier job's file
// reads of it (LookupReferencedFile).
type ReferencedFile struct {
	Role, MediaType string
	SizeBytes       int64
	SHA256          string
	ExpiresAt       sql.NullString
	Owner           string
}

const jobColumns = `id, type, owner, state, input, result, error, refs, progress_done, progress_total,
	progress_message, attempts, version, created_at, started_at, finished_at, expires_at`

// GetJob reads job id's row from the readers; sql.ErrNoRows when there is
// none.
func (s *Store) GetJob(ctx context.Context, id string) (JobRecord, error) {
	var j JobRecord
	err := s.read.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id).Scan(
		&j.ID, &j.Type, &j.Owner, &j.State, &j.Input, &j.Result, &j.Error, &j.Refs, &j.ProgressDone, &j.ProgressTotal,
		&j.ProgressMessage, &j.Attempts, &j.Version, &j.CreatedAt, &j.StartedAt, &j.FinishedAt, &j.ExpiresAt)
	return j, err
}

// ListJobFiles reads job id's file rows from the readers, inputs first,
// each group by name.
func (s *Store) ListJobFiles(ctx context.Context, id string) ([]JobFileRecord, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name, role, media_type, size_bytes, sha256, source, created_at, expires_at
		FROM job_files WHERE job_id = ? ORDER BY role = 'output', name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	files := []JobFileRecord{}
	for rows.Next() {
		var f JobFileRecord
		if err := rows.Scan(&f.Name, &f.Role, &f.MediaType, &f.SizeBytes, &f.SHA256, &f.Source, &f.CreatedAt, &f.ExpiresAt); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, rows.Err()
}

// LookupJobFile reads file name of job id and the job's owner from the
// readers; sql.ErrNoRows when there is no such file.
func (s *Store) LookupJobFile(ctx context.Context, id, name string) (JobFileRecord, string, error) {
	var (
		f     JobFileRecord
		owner string
	)
	err := s.read.QueryRowContext(ctx, `SELECT f.name, f.role, f.media_type, f.size_bytes, f.sha256, f.source, f.created_at,
		f.expires_at, j.owner FROM job_files f JOIN jobs j ON j.id = f.job_id WHERE f.job_id = ? AND f.name = ?`, id, name).Scan(
		&f.Name, &f.Role, &f.MediaType, &f.SizeBytes, &f.SHA256, &f.Source, &f.CreatedAt, &f.ExpiresAt, &owner)
	return f, owner, err
}

// LookupReferencedFile reads from the readers what a submission
// referencing file name of job id needs of it; sql.ErrNoRows when there
// is no such file.
func (s *Store) LookupReferencedFile(ctx context.Context, id, name string) (ReferencedFile, error) {
	var f ReferencedFile
	err := s.read.QueryRowContext(ctx, `SELECT f.role, f.media_type, f.size_bytes, f.sha256, f.expires_at, j.owner
		FROM job_files f JOIN jobs j ON j.id = f.job_id WHERE f.job_id = ? AND f.name = ?`, id, name).Scan(
		&f.Role, &f.MediaType, &f.SizeBytes, &f.SHA256, &f.ExpiresAt, &f.Owner)
	return f, err
}

// GetJobTransition reads in tx the fields of job id's row its state
// transitions decide on; sql.ErrNoRows when there is none.
func (s *Store) GetJobTransition(ctx context.Context, tx *sql.Tx, id string) (JobTransition, error) {
	var r JobTransition
	err := tx.QueryRowContext(ctx, `SELECT id, type, owner, state, ticket, attempts, cancel_requested, input_files, lease_until, slots
		FROM jobs WHERE id = ?`, id).Scan(&r.ID, &r.Type, &r.Owner, &r.State, &r.Ticket, &r.Attempts, &r.CancelRequested, &r.InputFiles, &r.LeaseUntil, &r.Slots)
	return r, err
}

// InsertJob inserts queued job j in tx.
func (s *Store) InsertJob(ctx context.Context, tx *sql.Tx, j NewJob) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, type, owner, state, input, refs, input_files, created_at, slots, idempotency_key)
			VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)`, j.ID, j.Type, j.Owner, j.Input, j.Refs, j.InputFiles, j.CreatedAt,
		nullString(j.Slots), nullString(j.IdempotencyKey))
	return err
}

// InsertInputFile inserts in tx input file f of job id (its role is
// "input" whatever f.Role says; its expiry none).
func (s *Store) InsertInputFile(ctx context.Context, tx *sql.Tx, id string, f JobFileRecord) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO job_files (job_id, name, role, media_type, size_bytes, sha256, source, created_at)
				VALUES (?, ?, 'input', ?, ?, ?, ?, ?)`, id, f.Name, f.MediaType, f.SizeBytes, f.SHA256, f.Source, f.CreatedAt)
	return err
}

// InsertOutputFile inserts in tx output file f of job id (its role is
// "output" and its source "job" whatever f says; its expiry none).
func (s *Store) InsertOutputFile(ctx context.Context, tx *sql.Tx, id string, f JobFileRecord) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO job_files (job_id, name, role, media_type, size_bytes, sha256, source, created_at)
					VALUES (?, ?, 'output', ?, ?, ?, 'job', ?)`, id, f.Name, f.MediaType, f.SizeBytes, f.SHA256, f.CreatedAt)
	return err
}

// SetJobTicket records in tx River ticket as job id's.
func (s *Store) SetJobTicket(ctx context.Context, tx *sql.Tx, id string, ticket int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET ticket = ? WHERE id = ?`, ticket, id)
	return err
}

// FinishJob moves job id in tx to final state, with its result and error
// document (each nil or a string), its finish time and expiry; its
// version grows.
func (s *Store) FinishJob(ctx context.Context, tx *sql.Tx, id, state string, result, errDoc any, finishedAt, expires string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, result = ?, error = ?, finished_at = ?, expires_at = ?,
		slots = NULL, lease_until = NULL, version = version + 1 WHERE id = ?`, state, result, errDoc, finishedAt, expires, id)
	return err
}

// SetJobFilesExpiry sets in tx the expiry of all of job id's files.
func (s *Store) SetJobFilesExpiry(ctx context.Context, tx *sql.Tx, id, expires string) error {
	_, err := tx.ExecContext(ctx, `UPDATE job_files SET expires_at = ? WHERE job_id = ?`, expires, id)
	return err
}

// RequeueJob puts job id back to queued in tx for a rerun: its start
// time and progress are cleared, its version grows. Its new River ticket
// is the caller's.
func (s *Store) RequeueJob(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', started_at = NULL, progress_done = 0,
		progress_total = 0, progress_message = '', version = version + 1 WHERE id = ?`, id)
	return err
}

// ClaimJob starts a run of job id in tx: running, one more attempt,
// started at startedAt, progress cleared, version grown, leased until
// lease (nil on SQLite, where there is no lease).
func (s *Store) ClaimJob(ctx context.Context, tx *sql.Tx, id, startedAt string, lease any) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ?,
			progress_done = 0, progress_total = 0, progress_message = '', version = version + 1, lease_until = ? WHERE id = ?`,
		startedAt, lease, id)
	return err
}

// GetJobInput reads job id's input document from the readers.
func (s *Store) GetJobInput(ctx context.Context, id string) (string, error) {
	var input string
	err := s.read.QueryRowContext(ctx, `SELECT input FROM jobs WHERE id = ?`, id).Scan(&input)
	return input, err
}

// SaveRunningProgress records on the writer, outside any transaction,
// running job id's progress; a job no longer running is left alone.
func (s *Store) SaveRunningProgress(ctx context.Context, id string, done, total int64, message string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET progress_done = ?, progress_total = ?, progress_message = ?
				WHERE id = ? AND state = 'running'`, done, total, message, id)
	return err
}

// SaveProgress records job id's progress in tx.
func (s *Store) SaveProgress(ctx context.Context, tx *sql.Tx, id string, done, total int64, message string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET progress_done = ?, progress_total = ?, progress_message = ? WHERE id = ?`,
		done, total, message, id)
	return err
}

// RenewLease extends on the writer, outside any transaction, the lease
// of job id to lease while it is still running on ticket.
func (s *Store) RenewLease(ctx context.Context, id string, ticket int64, lease any) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET lease_until = ? WHERE id = ? AND ticket = ? AND state = 'running'`,
		lease, id, ticket)
	return err
}

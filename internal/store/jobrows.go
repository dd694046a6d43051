package store

import (
	"context"
	"database/sql"
)

// The jobs' rows (package jobs, docs/jobs.md): the statements of the jobs'
// control (cancel, retry, counts), of their sweeps and of the lists of
// queued and active jobs, for both dialects.
// Package jobs holds them as its jobs.Rows interface; *Store implements
// it. A method taking a *sql.Tx runs in the jobs' transaction, the one
// that also holds the job's River ticket; the others read from ReadDB.
// The rest of the jobs' statements (submit, claim, finish, progress) are
// still in package jobs (docs/store.md).

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
func (s *Store) RequeueForRetry(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE job_files SET expires_at = NULL WHERE job_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', result = NULL, error = NULL, progress_done = 0,
			progress_total = 0, progress_message = '', cancel_requested = 0, started_at = NULL, finished_at = NULL,
			expires_at = NULL, version = version + 1 WHERE id = ?`, id)
	return err
}

// CountJobsByState returns how many jobs each state that has any holds.
// One indexed query (jobs_state).
func (s *Store) CountJobsByState(ctx context.Context) (map[string]int64, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT state, count(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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

// ListExpiredFiles returns up to limit job files that expired at or
// before now.
func (s *Store) ListExpiredFiles(ctx context.Context, now string, limit int) ([]ExpiredFile, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT job_id, name, role FROM job_files WHERE expires_at <= ? LIMIT ?`, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM jobs WHERE finished_at <= ? AND state IN ('succeeded', 'failed', 'cancelled')
		LIMIT ?`, cutoff, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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

// jobIDs runs query, which selects job ids, on the readers.
func (s *Store) jobIDs(ctx context.Context, query string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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

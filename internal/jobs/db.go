package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// timeLayout is the store's timestamp format: UTC, milliseconds, sortable
// as text.
const timeLayout = "2006-01-02T15:04:05.000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// optTime parses a nullable timestamp.
func optTime(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid {
		return nil, nil
	}
	t, err := parseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// newID returns a fresh job id: "job_" and 26 characters of lower-case
// base32 (128 random bits).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return "job_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// loadJob reads job id with its files from the readers, whoever owns it.
// It returns ErrNotFound when there is no such job.
func (s *Service) loadJob(ctx context.Context, id string) (*Job, error) {
	rec, err := s.rows.GetJob(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s: %w", id, err)
	}
	j, err := jobOf(rec)
	if err != nil {
		return nil, err
	}
	if j.Files, err = s.loadFiles(ctx, id); err != nil {
		return nil, err
	}
	return j, nil
}

// jobOf is the Job a job's row describes, without its files.
func jobOf(rec store.JobRecord) (*Job, error) {
	j := Job{ID: rec.ID, Type: rec.Type, Owner: rec.Owner, State: State(rec.State), Attempts: rec.Attempts, Version: rec.Version}
	j.Input = json.RawMessage(rec.Input)
	if rec.Result.Valid {
		j.Result = json.RawMessage(rec.Result.String)
	}
	if rec.Error.Valid {
		j.Error = new(toolerr.Error)
		if err := json.Unmarshal([]byte(rec.Error.String), j.Error); err != nil {
			return nil, fmt.Errorf("decoding job %s's error: %w", rec.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(rec.Refs), &j.References); err != nil {
		return nil, fmt.Errorf("decoding job %s's references: %w", rec.ID, err)
	}
	j.Progress = Progress{Done: rec.ProgressDone, Total: rec.ProgressTotal, Message: rec.ProgressMessage}
	var err error
	if j.CreatedAt, err = parseTime(rec.CreatedAt); err != nil {
		return nil, fmt.Errorf("job %s: %w", rec.ID, err)
	}
	for _, p := range []struct {
		dst **time.Time
		src sql.NullString
	}{{&j.StartedAt, rec.StartedAt}, {&j.FinishedAt, rec.FinishedAt}, {&j.ExpiresAt, rec.ExpiresAt}} {
		if *p.dst, err = optTime(p.src); err != nil {
			return nil, fmt.Errorf("job %s: %w", rec.ID, err)
		}
	}
	return &j, nil
}

// loadFiles reads the files of job id from the readers, inputs first, each
// group by name.
func (s *Service) loadFiles(ctx context.Context, id string) ([]File, error) {
	recs, err := s.rows.ListJobFiles(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading job %s's files: %w", id, err)
	}
	files := make([]File, 0, len(recs))
	for _, rec := range recs {
		f, err := fileOf(rec)
		if err != nil {
			return nil, fmt.Errorf("reading job %s's files: %w", id, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// fileOf is the File a job file's row describes.
func fileOf(rec store.JobFileRecord) (File, error) {
	f := File{Name: rec.Name, Role: Role(rec.Role), MediaType: rec.MediaType, SizeBytes: rec.SizeBytes, SHA256: rec.SHA256, Source: rec.Source}
	var err error
	if f.CreatedAt, err = parseTime(rec.CreatedAt); err != nil {
		return File{}, err
	}
	if f.ExpiresAt, err = optTime(rec.ExpiresAt); err != nil {
		return File{}, err
	}
	return f, nil
}

// jobRow is what the state transitions read of a job.
type jobRow struct {
	id, typ, owner  string
	state           State
	ticket          int64 // 0 when none
	attempts        int
	cancelRequested bool
	inputFiles      int
	leaseUntil      string // lease_until; "" when none
	slots           string // the concurrency slots it holds; "" when none
}

// getRow reads the transition fields of job id inside tx.
func (s *Service) getRow(ctx context.Context, tx *txn, id string) (*jobRow, error) {
	rec, err := s.rows.GetJobTransition(ctx, tx.Tx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s: %w", id, err)
	}
	return &jobRow{id: rec.ID, typ: rec.Type, owner: rec.Owner, state: State(rec.State), ticket: rec.Ticket.Int64,
		attempts: rec.Attempts, cancelRequested: rec.CancelRequested, inputFiles: rec.InputFiles,
		leaseUntil: rec.LeaseUntil.String, slots: rec.Slots.String}, nil
}

// ticketArgs are the arguments of a River job (a ticket): which of our jobs
// to run. The type is there for River's tools only.
type ticketArgs struct {
	JobID string `json:"job_id"`
	Type  string `json:"type"`
}

// Kind is the River job kind of every ticket.
func (ticketArgs) Kind() string { return "toolhost_job" }

// ticketMaxAttempts bounds River's own retries of a ticket whose worker
// returned an error before the job's outcome was recorded (the database
// was unavailable, say). A handler's failure is never one of those: it is
// recorded as the job's outcome and the ticket completes.
const ticketMaxAttempts = 10

// newTicket inserts a River job for job id in tx and records it as the
// job's ticket. The ticket becomes visible to River when tx commits.
func (s *Service) newTicket(ctx context.Context, tx *txn, id, typ string) error {
	ticket, err := s.tickets.insert(ctx, tx, ticketArgs{JobID: id, Type: typ}, &river.InsertOpts{
		Queue:       queue,
		MaxAttempts: ticketMaxAttempts,
	})
	if err != nil {
		return fmt.Errorf("inserting job %s's River ticket: %w", id, err)
	}
	if err := s.rows.SetJobTicket(ctx, tx.Tx, id, ticket); err != nil {
		return fmt.Errorf("recording job %s's ticket: %w", id, err)
	}
	return nil
}

// finalize moves job r in tx to a final state: it sets the state, the
// finish time, the expiry of the job and of all its files, forgets its
// slots and lease, and bumps the version. errDoc is the error document
// (failed only), result the result (succeeded only). The slots the job
// held are released once tx commits (withTx), wherever that happens.
func (s *Service) finalize(ctx context.Context, tx *txn, r *jobRow, state State, result json.RawMessage, jobErr *toolerr.Error) error {
	id := r.id
	if slots := r.slots; slots != "" {
		tx.onCommit = append(tx.onCommit, func() { s.releaseSlots(slots) })
	}
	now := s.cfg.Now()
	expires := fmtTime(now.Add(s.cfg.FileTTL))
	var resultArg, errArg any
	if result != nil {
		resultArg = string(result)
	}
	if jobErr != nil {
		b, err := json.Marshal(jobErr)
		if err != nil {
			return fmt.Errorf("encoding job %s's error: %w", id, err)
		}
		errArg = string(b)
	}
	if err := s.rows.FinishJob(ctx, tx.Tx, id, string(state), resultArg, errArg, fmtTime(now), expires); err != nil {
		return fmt.Errorf("finishing job %s: %w", id, err)
	}
	if err := s.rows.SetJobFilesExpiry(ctx, tx.Tx, id, expires); err != nil {
		return fmt.Errorf("setting job %s's file expiry: %w", id, err)
	}
	return nil
}

// requeue puts job id back in the queue in tx with a new ticket, for a
// rerun after an interruption.
func (s *Service) requeue(ctx context.Context, tx *txn, r *jobRow) error {
	if err := s.rows.RequeueJob(ctx, tx.Tx, r.id); err != nil {
		return fmt.Errorf("requeueing job %s: %w", r.id, err)
	}
	return s.newTicket(ctx, tx, r.id, r.typ)
}

// interrupted records the end of a run that did not finish on its own: the
// process died (code worker_crashed, found by Open) or Close cut it short
// (service_unavailable). A cancellation asked for wins; a Retryable type
// with runs left is requeued; anything else fails with code. It returns the
// state the job is left in.
func (s *Service) interrupted(ctx context.Context, tx *txn, r *jobRow, code toolerr.Code) (State, error) {
	h, ok := s.handler(r.typ)
	switch {
	case r.cancelRequested:
		return Cancelled, s.finalize(ctx, tx, r, Cancelled, nil, nil)
	case ok && h.Retryable && r.attempts < h.MaxAttempts:
		return Queued, s.requeue(ctx, tx, r)
	default:
		return Failed, s.finalize(ctx, tx, r, Failed, nil, toolerr.New(code))
	}
}

// busy returns err wrapped with [store.ErrBusy] when it is the failure of
// a statement run under ctx, a [store.Budget] context, because the
// database was busy ([store.Busy]); a refusal decided on what was read
// (ErrNotFound, ErrState, ErrExpired) or one for lack of room stays as it
// is, even when the budget ran out meanwhile.
func busy(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, store.ErrBusy), errors.Is(err, ErrNotFound), errors.Is(err, ErrState),
		errors.Is(err, ErrExpired), errors.Is(err, ErrStorageFull):
		return err
	case store.Busy(ctx, err):
		return fmt.Errorf("%w: %w", store.ErrBusy, err)
	}
	return err
}

// withTx runs fn in a transaction of the writer and commits it. A failure
// for lack of space (SQLITE_FULL) is recorded in the storage condition and
// returned as ErrStorageFull; the transaction is rolled back. On
// PostgreSQL the transaction is begun on a connection of its own, on which
// River's statements join it (txn, tickets).
func (s *Service) withTx(ctx context.Context, fn func(tx *txn) error) error {
	t := &txn{}
	var err error
	if s.replicated {
		if t.conn, err = s.db.Conn(ctx); err != nil {
			return s.storageErr(fmt.Errorf("beginning a transaction: %w", err))
		}
		defer t.conn.Close() //nolint:errcheck // hands the connection back to the pool: only ErrConnDone, nothing to lose
		t.Tx, err = t.conn.BeginTx(ctx, nil)
	} else {
		t.Tx, err = s.db.BeginTx(ctx, nil)
	}
	if err != nil {
		return s.storageErr(fmt.Errorf("beginning a transaction: %w", err))
	}
	tx := t.Tx
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit; before it, fn's error is the one returned
	if err := fn(t); err != nil {
		return s.storageErr(err)
	}
	if err := tx.Commit(); err != nil {
		return s.storageErr(fmt.Errorf("committing: %w", err))
	}
	for _, fn := range t.onCommit {
		fn()
	}
	return nil
}

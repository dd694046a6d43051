package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

// IdempotencyWindow is how long a submission's Idempotency-Key names its
// job: a submission of the same owner with the same key within it gets
// that job back (Job.Replayed) and stores nothing; after it, the key is
// taken from the old job and names the new one.
const IdempotencyWindow = 24 * time.Hour

// maxIdempotencyKeyBytes bounds an Idempotency-Key: Stripe's bound, well
// past a UUID's 36 characters.
const maxIdempotencyKeyBytes = 255

// validIdempotencyKey reports whether key can be an Idempotency-Key: 1 to
// 255 printable ASCII characters, what an HTTP header's string carries.
func validIdempotencyKey(key string) bool {
	if key == "" || len(key) > maxIdempotencyKeyBytes {
		return false
	}
	for i := range len(key) {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// Idempotent returns the job owner submitted with Idempotency-Key key
// within IdempotencyWindow, marked Replayed, as Submit would replay it: a
// route can answer a retried submission with it before admitting the
// request and reading its body. It is ErrNotFound when there is none (or
// only an older one), ErrInvalid when key cannot be an Idempotency-Key.
// It reads in a read-only transaction of the store's readers, under
// [store.Budget]; it changes nothing.
func (s *Service) Idempotent(ctx context.Context, owner, key string) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if !validIdempotencyKey(key) {
		return nil, fmt.Errorf("%w: the Idempotency-Key is not 1 to %d printable ASCII characters", ErrInvalid, maxIdempotencyKeyBytes)
	}
	if owner == "" {
		return nil, ErrNotFound
	}
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	tx, err := s.cfg.Store.ReadDB().BeginTx(bctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, busy(bctx, fmt.Errorf("reading an idempotent job: %w", err))
	}
	defer tx.Rollback() //nolint:errcheck // a read-only transaction: nothing to undo, nothing to lose
	id, live, err := s.idempotentJob(bctx, tx, owner, key)
	if err != nil {
		return nil, busy(bctx, err)
	}
	if !live {
		return nil, ErrNotFound
	}
	tx.Rollback() //nolint:errcheck // read-only, ended early: replayed reads on its own
	return s.replayed(ctx, id, owner)
}

// idempotentJob reads in tx the job owner submitted with key: its id ("" for
// none) and whether it is within IdempotencyWindow (Config.Now, the clock
// its created_at was written with).
func (s *Service) idempotentJob(ctx context.Context, tx *sql.Tx, owner, key string) (id string, live bool, err error) {
	id, created, err := s.rows.IdempotentJob(ctx, tx, owner, key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading an idempotent job: %w", err)
	}
	at, err := parseTime(created)
	if err != nil {
		return "", false, fmt.Errorf("reading job %s: %w", id, err)
	}
	return id, s.cfg.Now().Before(at.Add(IdempotencyWindow)), nil
}

// claimIdempotencyKey runs in submit's transaction before the job is
// inserted: it returns a *replay when owner's key names a job within the
// window, and takes the key from an older one so that the new job's
// insert may use it.
func (s *Service) claimIdempotencyKey(ctx context.Context, tx *txn, owner, key string) error {
	id, live, err := s.idempotentJob(ctx, tx.Tx, owner, key)
	switch {
	case err != nil:
		return err
	case live:
		return &replay{id: id}
	case id != "":
		if err := s.rows.ClearIdempotencyKey(ctx, tx.Tx, id); err != nil {
			return fmt.Errorf("forgetting job %s's Idempotency-Key: %w", id, err)
		}
	}
	return nil
}

// replayAfter is submit's answer to a transaction that failed with err
// while it carried key: a *replay as it is; otherwise, when a job with
// the key exists now, a *replay of it — a concurrent submission with the
// same key committed first, and the unique index (owner,
// idempotency_key) refused this one's insert; otherwise err. The key is
// read again in a transaction of its own, the failed one being rolled
// back.
func (s *Service) replayAfter(ctx context.Context, owner, key string, err error) error {
	var rep *replay
	if errors.As(err, &rep) {
		return err
	}
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	var id string
	var live bool
	if rerr := s.withTx(bctx, func(tx *txn) error {
		var err error
		id, live, err = s.idempotentJob(bctx, tx.Tx, owner, key)
		return err
	}); rerr != nil || !live {
		return err
	}
	return &replay{id: id}
}

// replay is how submit tells Submit that the submission is a replay of
// job id: its transaction rolled back, its files are removed like a
// refusal's, and Submit returns job id. It never leaves the package.
type replay struct{ id string }

func (r *replay) Error() string { return "jobs: a replay of job " + r.id }

// replayed is job id read for owner as Get reads it, marked Replayed.
func (s *Service) replayed(ctx context.Context, id, owner string) (*Job, error) {
	job, err := s.get(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	job.Replayed = true
	return job, nil
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolhost/toolhost/internal/store"
)

// Get returns job id for its owner, with the latest progress of a running
// job. A queued job that waits because the data folder is full carries
// CodeStorageFull (retryable) as its Error, the reason it waits; so does a
// running job whose run ended with no room to record its outcome. Another
// owner's job is ErrNotFound. Its reads are bounded by [store.Budget]; a
// database too busy to answer within it is an error wrapping
// [store.ErrBusy].
func (s *Service) Get(ctx context.Context, id, owner string) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	return s.get(ctx, id, owner)
}

// get is Get under a budget of its own.
func (s *Service) get(ctx context.Context, id, owner string) (*Job, error) {
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	job, err := s.loadJob(bctx, id)
	if err != nil {
		return nil, busy(bctx, err)
	}
	if owner == "" || job.Owner != owner {
		return nil, ErrNotFound
	}
	switch {
	case job.State == Running:
		s.mu.Lock()
		e := s.running[id]
		s.mu.Unlock()
		if e != nil {
			job.Progress, _ = e.snapshot()
		}
	case job.State == Queued && job.Error == nil && s.storageStatus().Full:
		// The reason it waits: it starts once there is room.
		job.Error = storageFullError()
	}
	if job.State == Running && s.isCut(id) {
		// Its run has ended, but there was no room to record how: it
		// fails with this once there is.
		job.Error = storageFullError()
	}
	return job, nil
}

// Cancel cancels job id for its owner. A queued job ends cancelled at once
// and never runs. A running job's handler has its context cancelled and the
// job ends cancelled when the handler returns (or succeeded, if it finished
// first): Cancel returns it still running. Cancelling a cancelled job does
// nothing; a succeeded or failed one is ErrState.
//
// Its transaction is bounded by [store.Budget]: a database locked past it
// is an error wrapping [store.ErrBusy], with nothing changed. The job is
// then read under a budget of its own.
func (s *Service) Cancel(ctx context.Context, id, owner string) (*Job, error) {
	if owner == "" && !s.isClosed() {
		return nil, ErrNotFound
	}
	return s.cancel(ctx, id, owner)
}

// cancel is Cancel for owner's job id, or for any owner's when owner is ""
// (CancelAny, an operator's).
func (s *Service) cancel(ctx context.Context, id, owner string) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	var (
		changed bool
		signal  bool
	)
	req := ctx
	ctx, cancel := store.Budget(ctx)
	defer cancel()
	err := s.withTx(ctx, func(tx *txn) error {
		r, err := s.getRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if owner != "" && r.owner != owner {
			return ErrNotFound
		}
		switch r.state {
		case Cancelled:
			return nil
		case Succeeded, Failed:
			return fmt.Errorf("%w: the job has %s", ErrState, r.state)
		case Queued:
			if err := s.cancelTicket(ctx, tx, r.ticket); err != nil {
				return err
			}
			changed = true
			return s.finalize(ctx, tx, r, Cancelled, nil, nil)
		}
		// Running: the handler is told, and finish records the end.
		signal = true
		if r.cancelRequested {
			return nil
		}
		if err := s.rows.MarkCancelRequested(ctx, tx.Tx, id); err != nil {
			return fmt.Errorf("cancelling job %s: %w", id, err)
		}
		// River tells the client running the ticket, were it another
		// process's; this one is told below, at once.
		return s.cancelTicket(ctx, tx, r.ticket)
	})
	if err != nil {
		return nil, busy(ctx, err)
	}
	if signal {
		s.mu.Lock()
		e := s.running[id]
		s.mu.Unlock()
		if e != nil {
			e.cancel(errCancelled)
		}
	}
	if changed {
		s.publishState(ctx, id)
	}
	// Committed: the read gets a budget of its own, not what the
	// transaction left of this one.
	if owner == "" {
		return s.show(req, id)
	}
	return s.get(req, id, owner)
}

// cancelTicket cancels River ticket ticket in tx; a ticket River no longer
// has is fine.
func (s *Service) cancelTicket(ctx context.Context, tx *txn, ticket int64) error {
	if ticket == 0 {
		return nil
	}
	if err := s.tickets.cancel(ctx, tx, ticket); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("cancelling River ticket %d: %w", ticket, err)
	}
	return nil
}

// Retry queues a failed or cancelled job of owner's again, with the same
// input and input files: its error, result, progress and outputs are
// cleared and it gets a new River ticket; its attempt count keeps growing.
// A job whose input files have expired is ErrExpired; a queued, running or
// succeeded job is ErrState.
//
// Its transaction is bounded by [store.Budget]: a database locked past it
// is an error wrapping [store.ErrBusy], with nothing changed. The job is
// then read under a budget of its own.
func (s *Service) Retry(ctx context.Context, id, owner string) (*Job, error) {
	return s.RetryHolding(ctx, id, owner, "")
}

// RetryHolding is Retry for a run that holds slots (Submission.Slots),
// taken when the retry was admitted: the job holds them until it ends
// again. On a refusal they are the caller's to release.
func (s *Service) RetryHolding(ctx context.Context, id, owner, slots string) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	req := ctx
	ctx, cancel := store.Budget(ctx)
	defer cancel()
	err := s.withTx(ctx, func(tx *txn) error {
		r, err := s.getRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if owner == "" || r.owner != owner {
			return ErrNotFound
		}
		if r.state != Failed && r.state != Cancelled {
			return fmt.Errorf("%w: the job is %s", ErrState, r.state)
		}
		live, err := s.rows.CountLiveInputs(ctx, tx.Tx, id, fmtTime(s.cfg.Now()))
		if err != nil {
			return fmt.Errorf("counting job %s's inputs: %w", id, err)
		}
		if live != r.inputFiles {
			return fmt.Errorf("%w: the job's input files", ErrExpired)
		}
		// A failed or cancelled job has no outputs: finish keeps none,
		// and the next run empties the output directory first.
		if err := s.rows.RequeueForRetry(ctx, tx.Tx, id, slots); err != nil {
			return fmt.Errorf("retrying job %s: %w", id, err)
		}
		return s.newTicket(ctx, tx, id, r.typ)
	})
	if err != nil {
		return nil, busy(ctx, err)
	}
	s.publishState(ctx, id)
	return s.get(req, id, owner)
}

// Stalled is the count CountByState gives the running jobs whose lease
// ran out: their replica stopped vouching for them (it died, or lost the
// database) and River's rescuer will settle them. It is no state a job is
// ever read in: Get reads such a job running until it is settled.
const Stalled State = "stalled"

// CountByState returns how many jobs are in each state now, every state
// listed (0 when none): what the metrics report as jobs by state, the
// queued ones being the queue's depth. A running job whose lease ran out
// counts as Stalled, not Running, so that a dead replica's jobs do not
// show as running for the whole rescue window. One indexed query
// (jobs_state).
func (s *Service) CountByState(ctx context.Context) (map[State]int64, error) {
	out := map[State]int64{Queued: 0, Running: 0, Succeeded: 0, Failed: 0, Cancelled: 0, Stalled: 0}
	counts, err := s.rows.CountJobsByState(ctx, fmtTime(time.Now()))
	if err != nil {
		return nil, err
	}
	for st, n := range counts {
		out[State(st)] = n
	}
	return out, nil
}

package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/toolhost/toolhost/internal/store"
)

// The bounds of ListFilter.Limit.
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// OpenControl opens the jobs subsystem for an operator's control only —
// `toolhost jobs` beside a serving process, on either store: it brings
// River's tables up to date as Open does and makes River's client
// insert-only (no queue, no worker, never started). It takes no lock on
// the files folder (the serving process holds it on SQLite), settles
// nothing a previous process left, starts no sweeper and no storage
// watch, and writes no file. Submit is refused (no job type has a
// handler); List, Show, Get, CancelAny and Cancel work, their changes
// reaching the serving processes through the store and River: a queued
// job cancelled here never runs, a running one is stopped by the process
// running it (River tells it: at once on PostgreSQL, within River's
// two-second poll of cancellations on SQLite).
//
// Its Close only refuses further calls; it is safe to call more than
// once. Config.Slots, when set, releases the slots of the jobs cancelled
// here.
func OpenControl(ctx context.Context, cfg Config) (*Service, error) {
	cfg.Handlers, cfg.Resolve = nil, nil
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	// Measured never: a queued job held back by a full folder is read
	// without the reason the serving process gives it.
	s.storage = newStorageWatch(s.root, cfg.Store.Path(), cfg.MinFreeBytes)
	riverLog := slog.New(levelFloor{s.log.Handler(), slog.LevelWarn})
	config := func(log *slog.Logger) *river.Config {
		// No Queues and no Workers: River's insert-only client, whose
		// JobCancelTx marks a running ticket and, on PostgreSQL,
		// notifies the client running it.
		return &river.Config{Logger: log}
	}
	if s.tickets, err = openTickets(ctx, cfg.Store, config, riverLog); err != nil {
		return nil, fmt.Errorf("making the River client: %w", err)
	}
	return s, nil
}

// ListFilter selects the jobs List returns.
type ListFilter struct {
	// Owner is the owner whose jobs are listed; "" for every owner's.
	Owner string
	// State is the state of the jobs listed; "" for every state.
	State State
	// Limit is the most jobs listed: DefaultListLimit when 0, at most
	// MaxListLimit.
	Limit int
}

// List returns the jobs f selects, newest first (by creation, then id),
// as stored: without their files (Files is nil; Show reads them), a
// running job's progress as its process last saved it. It is an
// operator's read: it sees every owner's jobs. A state that is no job's
// state is ErrInvalid. Its read is bounded by [store.Budget].
func (s *Service) List(ctx context.Context, f ListFilter) ([]*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	switch f.State {
	case "", Queued, Running, Succeeded, Failed, Cancelled:
	default:
		return nil, fmt.Errorf("%w: no job state %q", ErrInvalid, f.State)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	recs, err := s.rows.ListJobs(bctx, f.Owner, string(f.State), limit)
	if err != nil {
		return nil, busy(bctx, fmt.Errorf("listing jobs: %w", err))
	}
	out := make([]*Job, 0, len(recs))
	for _, rec := range recs {
		j, err := jobOf(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Show returns job id with its files, whoever owns it: an operator's
// read, as stored (a running job's progress as its process last saved
// it). ErrNotFound when there is no such job. Its reads are bounded by
// [store.Budget].
func (s *Service) Show(ctx context.Context, id string) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	return s.show(ctx, id)
}

// show is Show under a budget of its own.
func (s *Service) show(ctx context.Context, id string) (*Job, error) {
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	job, err := s.loadJob(bctx, id)
	if err != nil {
		return nil, busy(bctx, err)
	}
	return job, nil
}

// CancelAny is Cancel for an operator: job id whoever owns it. A queued
// job ends cancelled at once; a running one is marked to stop and its
// River ticket cancelled, which tells the process running it, wherever
// that is (see OpenControl); CancelAny returns it still running.
func (s *Service) CancelAny(ctx context.Context, id string) (*Job, error) {
	return s.cancel(ctx, id, "")
}

package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// worker is the one River worker: every ticket, whatever its job type, is
// worked by Service.work.
type worker struct {
	river.WorkerDefaults[ticketArgs]
	s *Service
}

func (w *worker) Work(ctx context.Context, rj *river.Job[ticketArgs]) error {
	// River's timeout (Timeout) is when its rescuer may hand the ticket
	// out again, not a limit of the run: handlers have their own
	// deadlines. The run keeps River's cancellations, not its deadline.
	ctx, stop := withoutDeadline(ctx)
	defer stop()
	return w.s.work(ctx, rj.ID, rj.Args.JobID)
}

// Timeout is River's timeout of a ticket, which its rescuer reads: on a
// replica (PostgreSQL) Config.RescueAfter, so that a ticket left running by
// a replica that died is handed out again; on SQLite none (-1), since
// Open settles a dead process's jobs itself.
func (w *worker) Timeout(*river.Job[ticketArgs]) time.Duration {
	if w.s.replicated {
		return w.s.cfg.RescueAfter
	}
	return -1
}

// withoutDeadline is a context with parent's values that ends when
// parent is cancelled, but not when parent's deadline passes.
func withoutDeadline(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	unhook := context.AfterFunc(parent, func() {
		if !errors.Is(parent.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(parent))
		}
	})
	return ctx, func() { unhook(); cancel(nil) }
}

// runEntry is a job this process is running.
type runEntry struct {
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	progress  Progress
	version   int64
	lastSaved time.Time
}

func (e *runEntry) snapshot() (Progress, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.progress, e.version
}

// errCancelled is the cause of a run context ended by Cancel.
var errCancelled = errors.New("jobs: cancelled")

// work runs job id for River ticket ticket. It returns an error only when
// the job's state could not be read or written; River then retries the
// ticket later, and that delivery finds the job as this one left it.
func (s *Service) work(ctx context.Context, ticket int64, id string) error {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	entry := &runEntry{cancel: cancel}
	s.mu.Lock()
	if _, dup := s.running[id]; dup {
		// River's rescuer handed out a ticket this process is still
		// running: leave the run alone. A replica keeps the ticket
		// alive, so that another can settle the job should this one die.
		s.mu.Unlock()
		if s.replicated {
			return river.JobSnooze(s.cfg.LeaseTTL)
		}
		return nil
	}
	// Registered before the claim commits, so that a Cancel that sees
	// the job running also finds its context here.
	s.running[id] = entry
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}()

	var (
		r       *jobRow
		claimed bool
		changed bool
		held    bool
		leased  bool
	)
	h, known := Handler{}, false
	// Read before the claim: a database gone after the claim must not
	// fail the run before it starts (readInputs).
	in, err := s.readInputs(ctx, id)
	if err != nil {
		s.log.Error("jobs: reading a job to run it", "job", id, "error", err)
		return err
	}
	err = s.withTx(ctx, func(tx *txn) error {
		var err error
		r, err = s.getRow(ctx, tx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.ticket != ticket {
			return nil // a stale ticket: the job has another one now
		}
		if in == nil && r.state == Queued {
			return errors.New("the job appeared after its input was read") // River delivers the ticket again
		}
		h, known = s.handler(r.typ)
		switch {
		case r.state == Running && s.replicated && leaseLive(r.leaseUntil):
			// Another replica runs it and renews its lease: River's
			// rescuer gave its ticket out again because the run is
			// long. The ticket waits, and comes back after the lease.
			leased = true
			return nil
		case r.state == Running:
			// An earlier delivery of this ticket ended without
			// recording the job's outcome: the outcome it kept, if
			// any, else a crash.
			changed = true
			_, err = s.settle(ctx, tx, r, toolerr.WorkerCrashed)
			return err
		case r.state != Queued:
			return nil
		case s.checkStorage(false).Full:
			// No room for its outputs, nor perhaps for its row: the
			// job waits, queued, and resume gives it a new ticket
			// once there is room.
			held = true
			return nil
		case !known:
			changed = true
			// No handler runs its type any more (its tool left the
			// catalogue): it fails once, rather than waiting for a
			// type that may never come back; Retry runs it again.
			return s.finalize(ctx, tx, r, Failed, nil, toolerr.New(toolerr.UnknownTool))
		}
		if err := s.rows.ClaimJob(ctx, tx.Tx, id, fmtTime(s.cfg.Now()), s.leaseArg()); err != nil {
			return fmt.Errorf("starting job %s: %w", id, err)
		}
		r.attempts++
		claimed, changed = true, true
		return nil
	})
	if err != nil && isStorageFull(err) {
		// The claim rolled back (withTx recorded the failure): the job
		// waits, queued, as above.
		held = true
	} else if err != nil {
		s.log.Error("jobs: claiming a job", "job", id, "error", err)
		return err
	}
	if leased {
		return river.JobSnooze(s.cfg.LeaseTTL)
	}
	if held {
		s.hold("")
		return nil
	}
	if changed {
		version := s.publishState(ctx, id)
		entry.mu.Lock()
		entry.version = version
		entry.mu.Unlock()
	}
	if !claimed {
		return nil
	}

	run, err := s.prepare(r, in)
	if err != nil {
		// The run could not even start (its files are unreadable): the
		// job fails rather than retrying forever.
		s.log.Error("jobs: preparing a run", "job", id, "error", err)
		return s.finish(ctx, runCtx, r, ticket, entry, nil, nil, err)
	}
	run.progress = s.progressFunc(runCtx, id, entry)
	stopLease := s.holdLease(id, ticket)
	stopSlots := s.holdSlots(id, r.slots)
	result, herr := s.call(runCtx, h, run)
	stopSlots()
	stopLease()
	return s.finish(ctx, runCtx, r, ticket, entry, run, result, herr)
}

// runInputs are what a run reads of its job's rows: its input document
// and its files. They do not change while the job is queued, and are read
// before the job is claimed, so that a database that stops answering
// between the claim and the run costs a retry of the ticket (the job
// still queued), not the job.
type runInputs struct {
	input string
	files []File
}

// readInputs reads job id's runInputs; nil, nil when there is no such
// job (the claim finds that out and does nothing).
func (s *Service) readInputs(ctx context.Context, id string) (*runInputs, error) {
	input, err := s.rows.GetJobInput(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s's input: %w", id, err)
	}
	files, err := s.loadFiles(ctx, id)
	if err != nil {
		return nil, err
	}
	return &runInputs{input: input, files: files}, nil
}

// prepare lists job r's inputs and empties its output directory.
func (s *Service) prepare(r *jobRow, in *runInputs) (*Run, error) {
	input, files := in.input, in.files
	run := &Run{JobID: r.id, Type: r.typ, Attempt: r.attempts, Input: json.RawMessage(input), OutDir: s.outDir(r.id)}
	// Its secrets are merged in for this run only; they stay sealed in
	// the job's folder while another run may follow.
	secrets, err := s.openSecrets(r.id)
	if err != nil {
		return nil, err
	}
	if secrets != nil {
		merged, err := mergeSecrets(run.Input, secrets)
		clear(secrets)
		if err != nil {
			return nil, fmt.Errorf("merging job %s's secrets: %w", r.id, err)
		}
		run.Input = merged
	}
	for _, f := range files {
		if f.Role == Input {
			run.Files = append(run.Files, InputFile{Name: f.Name, MediaType: f.MediaType, SizeBytes: f.SizeBytes,
				Path: s.filePath(r.id, Input, f.Name)})
		}
	}
	s.dropOutcome(r.id) // an earlier run's, recorded or superseded
	if err := os.RemoveAll(run.OutDir); err != nil {
		return nil, fmt.Errorf("emptying job %s's output directory: %w", r.id, err)
	}
	if err := os.MkdirAll(run.OutDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating job %s's output directory: %w", r.id, err)
	}
	return run, nil
}

// call runs the handler, turning a panic into an error.
func (s *Service) call(ctx context.Context, h Handler, run *Run) (result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("jobs: handler panicked", "job", run.JobID, "type", run.Type, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h.Run(ctx, run)
}

// progressFunc is Run.Progress for the run of job id.
func (s *Service) progressFunc(ctx context.Context, id string, entry *runEntry) func(Progress) {
	return func(p Progress) {
		now := time.Now()
		entry.mu.Lock()
		entry.progress = p
		version := entry.version
		save := now.Sub(entry.lastSaved) >= s.cfg.ProgressInterval
		if save {
			entry.lastSaved = now
		}
		entry.mu.Unlock()
		s.publish(id, Event{Kind: EventProgress, Version: version, State: Running, Progress: &p})
		if save && ctx.Err() == nil {
			if err := s.rows.SaveRunningProgress(ctx, id, p.Done, p.Total, p.Message); err != nil && ctx.Err() == nil {
				s.log.Warn("jobs: saving progress", "job", id, "error", err)
			}
		}
	}
}

// finish records the outcome of a run: its outputs and result, or its error,
// or its cancellation or interruption. A run whose job has meanwhile moved
// on (another ticket, a final state) records nothing.
//
// The outcome is never lost: it is kept in the job's folder first
// (keepOutcome), then written to the job's row, and the write is tried
// again, waiting up to outcomeRetryMax between tries, until the database
// takes it. Only when River stops this run (ctx ends: the process is
// shutting down) does it stop trying, and returns the error: River hands
// the ticket out again, and whoever settles the job (settle) records the
// kept outcome instead of worker_crashed. The job's slots are not renewed
// meanwhile: they lapse with their lease if the write outlasts it.
func (s *Service) finish(ctx, runCtx context.Context, r *jobRow, ticket int64, entry *runEntry, run *Run, result json.RawMessage, herr error) error {
	// River's context: it ends when River stops this run at shutdown.
	stop := ctx
	// The outcome is recorded even when the run's context has ended.
	ctx = context.WithoutCancel(ctx)
	var outputs []File
	if herr == nil {
		switch {
		case len(result) == 0:
			result = json.RawMessage(`{}`)
		case !json.Valid(result):
			herr = toolerr.New(toolerr.InvalidOutput)
		}
	}
	if herr == nil {
		outputs, herr = s.collectOutputs(run)
	}
	progress, _ := entry.snapshot()
	// A run that Close cut short did not end on its own: it has no
	// outcome to keep, and is interrupted (rerun or service_unavailable).
	cut := herr != nil && s.stopping.Load() && runCtx.Err() != nil
	oc := &outcome{Ticket: ticket, Attempt: r.attempts, Progress: progress}
	if herr == nil {
		oc.Result, oc.Outputs = result, outputs
	} else if !cut {
		oc.Error = s.toolError(r, herr)
	}
	if !cut && !isStorageFull(herr) {
		if err := s.keepOutcome(r.id, oc); err != nil {
			s.log.Warn("jobs: keeping a run's outcome beside its row", "job", r.id, "error", err)
		}
	}
	var final State
	write := func() error {
		return s.withTx(ctx, func(tx *txn) error {
			cur, err := s.getRow(ctx, tx, r.id)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if cur.state != Running || cur.ticket != ticket || cur.attempts != r.attempts {
				return nil
			}
			if cut {
				if err := s.rows.SaveProgress(ctx, tx.Tx, r.id, progress.Done, progress.Total, progress.Message); err != nil {
					return fmt.Errorf("saving job %s's progress: %w", r.id, err)
				}
				if err := os.RemoveAll(s.outDir(r.id)); err != nil {
					s.log.Warn("jobs: removing a run's outputs", "job", r.id, "error", err)
				}
				final, err = s.interrupted(ctx, tx, cur, toolerr.ServiceUnavailable)
				return err
			}
			final, err = s.record(ctx, tx, cur, oc)
			return err
		})
	}
	wait := outcomeRetryMin
	for tries := 1; ; tries++ {
		final = ""
		err := write()
		if err == nil {
			break
		}
		if isStorageFull(err) {
			// The outcome cannot be recorded for lack of space: the
			// outputs go (they would be unrecorded files, and the room
			// is needed), and resume fails the job with
			// CodeStorageFull once there is room for that.
			s.log.Error("jobs: recording a job's outcome", "job", r.id, "error", s.storageErr(err))
			s.hold(r.id)
			s.dropOutcome(r.id)
			if err := os.RemoveAll(s.outDir(r.id)); err != nil {
				s.log.Warn("jobs: removing a run's outputs", "job", r.id, "error", err)
			}
			return nil
		}
		if stop.Err() != nil {
			s.log.Error("jobs: stopping with a job's outcome unwritten; it is kept for the replica or restart that settles the job",
				"job", r.id, "tries", tries, "error", err)
			return err
		}
		if tries == 1 || tries%10 == 0 {
			s.log.Error("jobs: recording a job's outcome; trying again", "job", r.id, "tries", tries, "error", err)
		}
		select {
		case <-time.After(wait):
		case <-stop.Done():
		}
		wait = min(2*wait, outcomeRetryMax)
	}
	if final != "" {
		s.publishState(ctx, r.id)
	}
	return nil
}

// toolError is the job error for a handler's error: a *toolerr.Error as it
// is; a failure for lack of space (a handler writing its outputs, the
// run's preparation) CodeStorageFull, retryable, recorded in the storage
// condition; anything else execution_failed, its text logged only.
func (s *Service) toolError(r *jobRow, err error) *toolerr.Error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	if isStorageFull(err) {
		s.log.Warn("jobs: a run failed for lack of space", "job", r.id, "type", r.typ, "error", s.storageErr(err))
		return storageFullError()
	}
	s.log.Error("jobs: handler failed", "job", r.id, "type", r.typ, "error", err)
	return toolerr.New(toolerr.ExecutionFailed)
}

// collectOutputs describes the files a successful run left in its output
// directory and makes them read-only. A run that left anything else, too
// many files, or a name that is not valid or is an input's, fails with
// invalid_output (output_limit_exceeded for the count).
func (s *Service) collectOutputs(run *Run) ([]File, error) {
	entries, err := os.ReadDir(run.OutDir)
	if err != nil {
		return nil, fmt.Errorf("listing job %s's outputs: %w", run.JobID, err)
	}
	if len(entries) > s.cfg.MaxOutputFiles {
		return nil, toolerr.New(toolerr.OutputLimitExceeded)
	}
	inputs := map[string]bool{}
	for _, f := range run.Files {
		inputs[f.Name] = true
	}
	var out []File
	for _, e := range entries {
		if !e.Type().IsRegular() || !validName(e.Name()) || inputs[e.Name()] {
			s.log.Warn("jobs: a handler left an output that is not a plain, new file", "job", run.JobID, "name", e.Name())
			return nil, toolerr.New(toolerr.InvalidOutput)
		}
		f, err := describeFile(filepath.Join(run.OutDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading job %s's output: %w", run.JobID, err)
		}
		f.Name, f.Role, f.Source = e.Name(), Output, "job"
		out = append(out, f)
	}
	for _, dir := range []string{run.OutDir, filepath.Dir(run.OutDir)} {
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// describeFile sniffs, sizes and hashes the file at path and makes it
// read-only.
func describeFile(path string) (File, error) {
	in, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer in.Close() //nolint:errcheck // read-only file: nothing to lose
	head := make([]byte, sniff.HeadBytes)
	n, err := io.ReadFull(in, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return File{}, err
	}
	h := sha256.New()
	h.Write(head[:n])
	rest, err := io.Copy(h, in)
	if err != nil {
		return File{}, err
	}
	if err := in.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return File{}, err
	}
	if err := os.Chmod(path, 0o400); err != nil {
		return File{}, err
	}
	return File{MediaType: sniff.Detect(head[:n]), SizeBytes: int64(n) + rest, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// recoverJobs settles the jobs a previous process left active, before River
// starts. The data directory's lock guarantees that no live process is
// running them. A job left running was cut short: it is rerun when its type
// is Retryable and has runs left, else it fails with worker_crashed (or
// ends cancelled when a cancellation was asked for). A job left queued keeps
// its River ticket when River still holds it queued, and gets a new one
// otherwise (a ticket River had already handed to the dead process).
func (s *Service) recoverJobs(ctx context.Context) error {
	ids, err := s.rows.ListActiveJobs(ctx)
	if err != nil {
		return fmt.Errorf("listing active jobs: %w", err)
	}
	for _, id := range ids {
		err := s.withTx(ctx, func(tx *txn) error {
			r, err := s.getRow(ctx, tx, id)
			if err != nil {
				return err
			}
			switch r.state {
			case Running:
				state, err := s.settle(ctx, tx, r, toolerr.WorkerCrashed)
				s.log.Warn("jobs: a job was running when the process stopped", "job", id, "type", r.typ, "now", state)
				return err
			case Queued:
				live, err := s.ticketLive(ctx, tx, r.ticket)
				if err != nil || live {
					return err
				}
				return s.newTicket(ctx, tx, id, r.typ)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("recovering job %s: %w", id, err)
		}
	}
	return nil
}

// ticketLive reports whether River holds ticket waiting to be worked.
func (s *Service) ticketLive(ctx context.Context, tx *txn, ticket int64) (bool, error) {
	if ticket == 0 {
		return false, nil
	}
	row, err := s.tickets.get(ctx, tx, ticket)
	if errors.Is(err, river.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading River ticket %d: %w", ticket, err)
	}
	switch row.State {
	case rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending:
		return true, nil
	}
	return false, nil
}

// leaseArg is the lease_until a claim writes: LeaseTTL from now on a
// replica (wall-clock time, which replicas share; not Config.Now), NULL
// on SQLite.
func (s *Service) leaseArg() any {
	if !s.replicated {
		return nil
	}
	return fmtTime(time.Now().Add(s.cfg.LeaseTTL))
}

// leaseLive reports whether the lease_until text until is still to come.
func leaseLive(until string) bool {
	t, err := parseTime(until)
	return err == nil && time.Now().Before(t)
}

// holdLease renews job id's lease every third of LeaseTTL while its run
// (ticket) lives, on a replica; the returned func stops it. A renewal
// that fails is logged and tried again at the next tick: the lease has
// two more before it runs out.
func (s *Service) holdLease(id string, ticket int64) (stop func()) {
	if !s.replicated {
		return func() {}
	}
	return every(s.cfg.LeaseTTL/3, func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.LeaseTTL/3)
		defer cancel()
		if err := s.rows.RenewLease(ctx, id, ticket, s.leaseArg()); err != nil {
			s.log.Warn("jobs: renewing a running job's lease", "job", id, "error", err)
		}
	})
}

// every calls fn every interval, from a goroutine of its own, until the
// returned stop is called; stop returns once fn has returned for good. A
// run's renewals (its lease, its slots) go through it.
func every(interval time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			fn()
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

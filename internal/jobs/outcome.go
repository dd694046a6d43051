package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// outcome is how a run ended, as it is recorded in the job's row — and,
// until the row has it, in the job's folder (outcomeFile), so that the
// outcome of a run whose write the database did not take (an outage, a
// shutdown, a crash between the two) is not lost: whoever settles the job
// next (this process's next try, a rescuer on another replica, Open after
// a restart) records it instead of worker_crashed.
type outcome struct {
	// Ticket and Attempt name the run: a kept outcome is applied only to
	// the run that made it.
	Ticket  int64 `json:"ticket"`
	Attempt int   `json:"attempt"`
	// Result and Outputs are a success's; Error a failure's.
	Result  json.RawMessage `json:"result,omitempty"`
	Outputs []File          `json:"outputs,omitempty"`
	Error   *toolerr.Error  `json:"error,omitempty"`
	// Progress is the run's last progress report.
	Progress Progress `json:"progress"`
}

// outcomeFile is the name of a job's kept outcome in its folder, beside
// in/ and out/: not a job file, never served.
const outcomeFile = "outcome.json"

func (s *Service) outcomePath(id string) string { return filepath.Join(s.jobDir(id), outcomeFile) }

// keepOutcome writes oc for job id in its folder, whole or not at all
// (a temporary file synced and renamed), on the files volume the replicas
// share.
func (s *Service) keepOutcome(id string, oc *outcome) error {
	b, err := json.Marshal(oc)
	if err != nil {
		return fmt.Errorf("encoding job %s's outcome: %w", id, err)
	}
	tmp := s.outcomePath(id) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("keeping job %s's outcome: %w", id, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.outcomePath(id))
	}
	if err == nil {
		err = syncDir(s.jobDir(id))
	}
	if err != nil {
		// Gone already once renamed; otherwise a leftover only takes room.
		os.Remove(tmp) //nolint:errcheck // see above
		return fmt.Errorf("keeping job %s's outcome: %w", id, err)
	}
	return nil
}

// keptOutcome returns the outcome kept for job r's current run, nil when
// there is none (or it is another run's, or unreadable, or an output it
// names is gone).
func (s *Service) keptOutcome(r *jobRow) *outcome {
	b, err := os.ReadFile(s.outcomePath(r.id))
	if err != nil {
		return nil
	}
	var oc outcome
	if err := json.Unmarshal(b, &oc); err != nil || oc.Ticket != r.ticket || oc.Attempt != r.attempts {
		return nil
	}
	for _, f := range oc.Outputs {
		if _, err := os.Stat(filepath.Join(s.outDir(r.id), f.Name)); err != nil {
			return nil
		}
	}
	return &oc
}

// dropOutcome removes job id's kept outcome once its row has it.
func (s *Service) dropOutcome(id string) {
	if err := os.Remove(s.outcomePath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("jobs: removing a recorded outcome", "job", id, "error", err)
	}
}

// record writes outcome oc of running job cur in tx: its progress, and a
// success with its outputs, a cancellation asked for, or a failure. It
// returns the final state. The outputs of a run that did not succeed go
// at once; once tx commits, the kept outcome goes.
func (s *Service) record(ctx context.Context, tx *txn, cur *jobRow, oc *outcome) (State, error) {
	p := oc.Progress
	if err := s.rows.SaveProgress(ctx, tx.Tx, cur.id, p.Done, p.Total, p.Message); err != nil {
		return "", fmt.Errorf("saving job %s's progress: %w", cur.id, err)
	}
	id := cur.id
	tx.onCommit = append(tx.onCommit, func() { s.dropOutcome(id) })
	if oc.Error == nil {
		now := fmtTime(s.cfg.Now())
		for _, f := range oc.Outputs {
			if err := s.rows.InsertOutputFile(ctx, tx.Tx, id, store.JobFileRecord{Name: f.Name, MediaType: f.MediaType,
				SizeBytes: f.SizeBytes, SHA256: f.SHA256, CreatedAt: now}); err != nil {
				return "", fmt.Errorf("inserting job %s's output: %w", id, err)
			}
		}
		// A succeeded job never runs again: its secrets go before its
		// row says so (should the write fail, the kept outcome still
		// makes it succeed).
		s.wipeSecrets(id)
		return Succeeded, s.finalize(ctx, tx, cur, Succeeded, oc.Result, nil)
	}
	// A run that did not succeed keeps no outputs, whether or not this
	// write is the one the database takes: they go before it says so.
	if err := os.RemoveAll(s.outDir(id)); err != nil {
		s.log.Warn("jobs: removing a run's outputs", "job", id, "error", err)
	}
	if cur.cancelRequested {
		return Cancelled, s.finalize(ctx, tx, cur, Cancelled, nil, nil)
	}
	return Failed, s.finalize(ctx, tx, cur, Failed, nil, oc.Error)
}

// settle records the end of job r, found running with nobody running it
// (a crash: code worker_crashed): the outcome its run kept, when it kept
// one before its row could take it, else an interruption (interrupted).
func (s *Service) settle(ctx context.Context, tx *txn, r *jobRow, code toolerr.Code) (State, error) {
	if oc := s.keptOutcome(r); oc != nil {
		s.log.Warn("jobs: recording the outcome a run kept but could not write", "job", r.id, "attempt", r.attempts)
		return s.record(ctx, tx, r, oc)
	}
	return s.interrupted(ctx, tx, r, code)
}

// Outcome retries: the first is at once, then the wait doubles up to
// outcomeRetryMax.
const (
	outcomeRetryMin = 100 * time.Millisecond
	outcomeRetryMax = 5 * time.Second
)

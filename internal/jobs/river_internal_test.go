package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

// Cancel tells this process's handler directly. Another process would rely
// on River alone: JobCancelTx marks the running ticket, River's notifier
// (riversqlite polls its river_notification table) tells the client that
// runs it, and River cancels the work context. This checks that path
// without the direct signal.
func TestRiverCancelsARunningTicket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	started := make(chan struct{}, 1)
	s, err := Open(ctx, Config{Store: st, DataDir: dir, PollInterval: 50 * time.Millisecond,
		Handlers: map[string]Handler{"hold": {Run: func(ctx context.Context, run *Run) (json.RawMessage, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	// Refused as busy on a loaded machine (helpers_test.go, submit): again.
	j, err := s.Submit(ctx, Submission{Owner: "o", Type: "hold", Input: json.RawMessage(`{}`)})
	for attempt := 1; errors.Is(err, store.ErrBusy) && attempt < 10; attempt++ {
		j, err = s.Submit(ctx, Submission{Owner: "o", Type: "hold", Input: json.RawMessage(`{}`)})
	}
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the job did not start")
	}
	err = s.withTx(ctx, func(tx *txn) error {
		r, err := s.getRow(ctx, tx, j.ID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ?`, j.ID); err != nil {
			return err
		}
		return s.cancelTicket(ctx, tx, r.ticket)
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := s.Get(ctx, j.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		if got.State == Cancelled {
			return
		}
		if got.State.Final() || time.Now().After(deadline) {
			t.Fatalf("the job is %s; River did not cancel its running ticket", got.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A process can die after River handed it a ticket and before the worker
// claimed the job: the job is queued in our table and its ticket running in
// River's, where River's rescuer would leave it for RescueStuckJobsAfter.
// Open gives such a job a new ticket, and it runs.
func TestRecoverQueuedJobWithATakenTicket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	started := make(chan string, 2)
	hold := Handler{Run: func(ctx context.Context, run *Run) (json.RawMessage, error) {
		started <- run.JobID
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	quick := Handler{Run: func(ctx context.Context, run *Run) (json.RawMessage, error) { return nil, nil }}
	cfg := Config{Store: st, DataDir: dir, MaxWorkers: 1, PollInterval: 50 * time.Millisecond,
		Handlers: map[string]Handler{"hold": hold, "quick": quick}}
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(ctx, Submission{Owner: "o", Type: "hold", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	<-started // the one worker is busy
	queued, err := s.Submit(ctx, Submission{Owner: "o", Type: "quick", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Close(stopped); err != nil {
		t.Fatal(err)
	}
	// What River's fetch does to a ticket, done to the queued job's.
	var ticket int64
	if err := st.ReadDB().QueryRow(`SELECT ticket FROM jobs WHERE id = ?`, queued.ID).Scan(&ticket); err != nil {
		t.Fatal(err)
	}
	res, err := st.DB().Exec(`UPDATE river_job SET state = 'running', attempt = 1, attempted_at = ? WHERE id = ? AND state = 'available'`,
		time.Now().UTC().Format(time.RFC3339Nano), ticket)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("marking the ticket running: %v (%d rows)", err, n)
	}

	s, err = Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := s.Get(ctx, queued.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		if got.State == Succeeded {
			break
		}
		if got.State.Final() || time.Now().After(deadline) {
			t.Fatalf("the queued job is %s", got.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var now int64
	if err := st.ReadDB().QueryRow(`SELECT ticket FROM jobs WHERE id = ?`, queued.ID).Scan(&now); err != nil || now == ticket {
		t.Fatalf("the job kept ticket %d (%v)", now, err)
	}
}

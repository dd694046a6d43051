package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// openControl opens e's store again and the jobs subsystem on it for
// control only, as `toolhost jobs` does beside a serving process (its own
// connections, as another process's would be).
func (e *env) openControl(t *testing.T) *jobs.Service {
	t.Helper()
	st, err := store.Open(context.Background(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := jobs.OpenControl(context.Background(), jobs.Config{Store: st, DataDir: e.dir, Now: e.clock.Now})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctl.Close(context.Background())
		st.Close()
	})
	return ctl
}

// An operator lists, shows and cancels the jobs of a serving process from
// a control-only Service: beside the process's lock on SQLite, across
// owners, a queued job at once and a running one through River, which
// tells the serving process's client (a notification on PostgreSQL, its
// poll of cancellations on SQLite).
func TestOperatorControl(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		block := newBlocker()
		served := e.open(t, map[string]jobs.Handler{"hold": block.handler(false)},
			func(c *jobs.Config) { c.MaxWorkers = 1 })
		ctx := context.Background()
		running := submit(t, served, alice, "hold")
		block.wait(t)
		e.clock.Advance(time.Second) // the test's clock stands still otherwise
		queued := submit(t, served, bob, "hold", upload("a.pdf", pdfFixture(t)))

		// No lock: the serving process holds the folder's on SQLite.
		ctl := e.openControl(t)

		for _, tc := range []struct {
			name   string
			filter jobs.ListFilter
			want   []string
		}{
			{"every job, newest first", jobs.ListFilter{}, []string{queued.ID, running.ID}},
			{"one owner's", jobs.ListFilter{Owner: alice}, []string{running.ID}},
			{"one state", jobs.ListFilter{State: jobs.Queued}, []string{queued.ID}},
			{"a limit", jobs.ListFilter{Limit: 1}, []string{queued.ID}},
			{"none", jobs.ListFilter{Owner: alice, State: jobs.Failed}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				list, err := ctl.List(ctx, tc.filter)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, j := range list {
					got = append(got, j.ID)
				}
				if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) || (len(got) > 1 && got[1] != tc.want[1]) {
					t.Fatalf("List(%+v) = %v, want %v", tc.filter, got, tc.want)
				}
			})
		}
		if _, err := ctl.List(ctx, jobs.ListFilter{State: "stuck"}); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("List of no state: %v", err)
		}

		j, err := ctl.Show(ctx, queued.ID)
		if err != nil || j.Owner != bob || j.State != jobs.Queued || len(j.Files) != 1 || j.Files[0].Name != "a.pdf" {
			t.Fatalf("Show(queued) = %+v, %v", j, err)
		}
		if _, err := ctl.Show(ctx, "job_none"); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Show of no job: %v", err)
		}
		if _, err := ctl.Submit(ctx, jobs.Submission{Owner: alice, Type: "hold", Input: []byte(`{}`)}); !errors.Is(err, jobs.ErrUnknownType) {
			t.Fatalf("Submit on a control Service: %v", err)
		}

		// Queued: cancelled at once, whoever owns it.
		if j, err := ctl.CancelAny(ctx, queued.ID); err != nil || j.State != jobs.Cancelled {
			t.Fatalf("CancelAny(queued) = %+v, %v", j, err)
		}
		if j, err := served.Get(ctx, queued.ID, bob); err != nil || j.State != jobs.Cancelled {
			t.Fatalf("the serving process reads the queued job %+v, %v", j, err)
		}

		// Running: the serving process stops it, told by River alone.
		// Running, or cancelled already: on PostgreSQL River's notification
		// may beat the read that follows the cancel.
		if j, err := ctl.CancelAny(ctx, running.ID); err != nil || (j.State != jobs.Running && j.State != jobs.Cancelled) {
			t.Fatalf("CancelAny(running) = %+v, %v", j, err)
		}
		got := waitState(t, served, running.ID, alice, jobs.Cancelled)
		if got.Error != nil {
			t.Fatalf("the cancelled job: %+v", got.Error)
		}
		if _, err := ctl.CancelAny(ctx, running.ID); err != nil {
			t.Fatalf("CancelAny of a cancelled job: %v", err)
		}

		if err := ctl.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Close(ctx); err != nil {
			t.Fatalf("Close again: %v", err)
		}
		if _, err := ctl.List(ctx, jobs.ListFilter{}); !errors.Is(err, jobs.ErrClosed) {
			t.Fatalf("List after Close: %v", err)
		}
	})
}

// A submission's Idempotency-Key names its job for IdempotencyWindow: the
// same key and owner again, at once or concurrently, gets that job and
// stores nothing; another owner's key is another job's; after the window
// the key names a new job.
func TestIdempotentSubmit(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"quick": quick()}, nil)
		ctx := context.Background()
		send := func(owner, key string) (*jobs.Job, error) {
			// Refused as busy on a loaded machine (helpers_test.go,
			// submit): sent again, as a client retries the 503.
			for attempt := 1; ; attempt++ {
				j, err := svc.Submit(ctx, jobs.Submission{Owner: owner, Type: "quick", Input: []byte(`{}`), IdempotencyKey: key,
					Files: jobs.Uploads(upload("a.pdf", pdfFixture(t))), Accept: []string{"application/pdf"}})
				if !errors.Is(err, store.ErrBusy) || attempt == 10 {
					return j, err
				}
			}
		}
		mustSend := func(owner, key string) *jobs.Job {
			t.Helper()
			j, err := send(owner, key)
			if err != nil {
				t.Fatalf("Submit(%s, %q): %v", owner, key, err)
			}
			return j
		}

		first := mustSend(alice, "k1")
		again := mustSend(alice, "k1")
		if first.Replayed || !again.Replayed || again.ID != first.ID {
			t.Fatalf("the same key twice: %s (replayed %v), then %s (replayed %v)", first.ID, first.Replayed, again.ID, again.Replayed)
		}
		if j, err := svc.Idempotent(ctx, alice, "k1"); err != nil || j.ID != first.ID || !j.Replayed {
			t.Fatalf("Idempotent(alice, k1) = %+v, %v", j, err)
		}
		for _, tc := range []struct {
			name, owner, key string
			want             error
		}{
			{"an unknown key", alice, "k0", jobs.ErrNotFound},
			{"another owner's key", bob, "k1", jobs.ErrNotFound},
			{"a key with a control character", alice, "k\n1", jobs.ErrInvalid},
		} {
			if _, err := svc.Idempotent(ctx, tc.owner, tc.key); !errors.Is(err, tc.want) {
				t.Errorf("Idempotent, %s: %v, want %v", tc.name, err, tc.want)
			}
		}
		if _, err := send(alice, string(make([]byte, 256))); !errors.Is(err, jobs.ErrInvalid) {
			t.Fatalf("Submit with a 256-byte key: %v", err)
		}

		other := mustSend(bob, "k1")
		if other.Replayed || other.ID == first.ID {
			t.Fatalf("another owner's key gave %s (replayed %v)", other.ID, other.Replayed)
		}

		// Concurrent: one job, the others replay it.
		const n = 8
		got := make(chan *jobs.Job, n)
		errs := make(chan error, n)
		for range n {
			go func() {
				j, err := send(alice, "k2")
				got <- j
				errs <- err
			}()
		}
		ids := map[string]int{}
		made := 0
		for range n {
			if err := <-errs; err != nil {
				t.Fatalf("a concurrent Submit: %v", err)
			}
			j := <-got
			ids[j.ID]++
			if !j.Replayed {
				made++
			}
		}
		if len(ids) != 1 || made != 1 {
			t.Fatalf("%d concurrent submissions with one key: jobs %v, %d made", n, ids, made)
		}

		// Past the window the key names a new job, which later
		// submissions replay.
		e.clock.Advance(jobs.IdempotencyWindow)
		if _, err := svc.Idempotent(ctx, alice, "k1"); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Idempotent past the window: %v", err)
		}
		fresh := mustSend(alice, "k1")
		if fresh.Replayed || fresh.ID == first.ID {
			t.Fatalf("a key past the window gave %s (replayed %v)", fresh.ID, fresh.Replayed)
		}
		if j := mustSend(alice, "k1"); j.ID != fresh.ID || !j.Replayed {
			t.Fatalf("the key after its reuse gave %s (replayed %v), want %s", j.ID, j.Replayed, fresh.ID)
		}

		// Every job made is stored once, with one folder: the replays
		// left nothing behind.
		if rows, dirs := e.countJobs(t); rows != 4 || dirs != 4 {
			t.Fatalf("%d job rows and %d folders, want 4 of each", rows, dirs)
		}
	})
}

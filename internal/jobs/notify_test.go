package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// replicas is two Services on one PostgreSQL store. Replica b has one
// worker and keeps it busy with a job of its own, so every other job runs
// on replica a, opened by start; the poll of followed jobs is an hour on
// both, so that every event b's subscribers get came by notification.
type replicas struct {
	db      string
	a, b    *jobs.Service
	started chan string   // a's step job reported half and waits
	proceed chan struct{} // closed: the step job reports done and succeeds
	start   func()        // opens a
}

func newReplicas(t *testing.T) *replicas {
	envA := newEnvOn(t, storetest.Postgres(t))
	envB := &env{dir: t.TempDir(), db: envA.db, clock: envA.clock}
	r := &replicas{db: envA.db, started: make(chan string, 4), proceed: make(chan struct{})}
	step := jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		run.Progress(jobs.Progress{Done: 1, Total: 2, Message: "half"})
		r.started <- run.JobID
		select {
		case <-r.proceed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		run.Progress(jobs.Progress{Done: 2, Total: 2, Message: "done"})
		return json.RawMessage(`{"ok":true}`), nil
	}}
	notOnB := jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		t.Errorf("replica b ran job %s, which was a's to run", run.JobID)
		return nil, nil
	}}
	holding, release := make(chan struct{}, 1), make(chan struct{})
	hold := jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		holding <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return json.RawMessage(`{}`), nil
	}}
	hourPoll := func(c *jobs.Config) { c.EventPoll = time.Hour }
	r.b = envB.open(t, map[string]jobs.Handler{"hold": hold, "step": notOnB}, func(c *jobs.Config) {
		hourPoll(c)
		c.MaxWorkers = 1
	})
	t.Cleanup(func() { close(release) }) // before b's Close, which waits for it
	if _, err := r.b.Submit(context.Background(), jobs.Submission{Owner: alice, Type: "hold", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holding:
	case <-time.After(waitFor):
		t.Fatal("replica b never ran its holding job")
	}
	r.start = func() {
		r.a = envA.open(t, map[string]jobs.Handler{"step": step}, hourPoll)
		t.Cleanup(func() {
			select {
			case <-r.proceed:
			default:
				close(r.proceed)
			}
		})
	}
	return r
}

// waitStarted waits for a's step job to report half.
func (r *replicas) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-r.started:
	case <-time.After(waitFor):
		t.Fatal("replica a never started the step job")
	}
}

// next is the next event of a stream; false when it ended.
func next(t *testing.T, events <-chan jobs.Event) (jobs.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-events:
		return ev, ok
	case <-time.After(waitFor):
		t.Fatal("no event came")
		return jobs.Event{}, false
	}
}

// brief is an event as the assertions compare it: its state, or its
// progress message.
func brief(ev jobs.Event) string {
	if ev.Kind == jobs.EventProgress {
		return "progress " + ev.Progress.Message
	}
	return string(ev.State)
}

// drain reads events until the stream ends, checking that their versions
// do not go back, and returns them in brief.
func drain(t *testing.T, events <-chan jobs.Event, seen []string) []string {
	t.Helper()
	var last int64
	for {
		ev, ok := next(t, events)
		if !ok {
			return seen
		}
		if ev.Version < last {
			t.Fatalf("event version %d after %d", ev.Version, last)
		}
		last = ev.Version
		seen = append(seen, brief(ev))
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A subscriber on one replica follows a job another replica runs: the
// running state, the progress and the final state come by PostgreSQL
// notification (the poll is an hour), each state change once, in order.
func TestEventsAcrossReplicas(t *testing.T) {
	r := newReplicas(t)
	ctx := context.Background()
	// Submitted to b, whose one worker is busy: it waits for a.
	j, err := r.b.Submit(ctx, jobs.Submission{Owner: alice, Type: "step", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	early, err := r.b.Subscribe(ctx, j.ID, alice)
	if err != nil {
		t.Fatal(err)
	}
	r.start()

	// The early subscriber sees the job queued, then a's run start.
	var seen []string
	for len(seen) == 0 || seen[len(seen)-1] != "progress half" {
		ev, ok := next(t, early)
		if !ok {
			t.Fatalf("the stream ended after %v", seen)
		}
		seen = append(seen, brief(ev))
	}
	r.waitStarted(t)
	// A late subscriber starts from the running job.
	late, err := r.b.Subscribe(ctx, j.ID, alice)
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := next(t, late); ev.State != jobs.Running {
		t.Fatalf("a late subscriber's first event: %+v", ev)
	}
	close(r.proceed)

	want := []string{"queued", "running", "progress half", "progress done", "succeeded"}
	if got := drain(t, early, seen); !equal(got, want) {
		t.Fatalf("the early subscriber saw %v, want %v", got, want)
	}
	if got := drain(t, late, []string{"running"}); !equal(got, []string{"running", "progress done", "succeeded"}) {
		t.Fatalf("the late subscriber saw %v", got)
	}
	final, err := r.b.Get(ctx, j.ID, alice)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != jobs.Succeeded || string(final.Result) != `{"ok":true}` || final.Attempts != 1 {
		t.Fatalf("the job on b: %+v", final)
	}
}

// The listening connection ended by the server (as a PostgreSQL restart
// ends it) is replaced, and the events come again by notification.
func TestEventsAfterTheListenerReconnects(t *testing.T) {
	r := newReplicas(t)
	ctx := context.Background()
	r.start()
	j, err := r.a.Submit(ctx, jobs.Submission{Owner: alice, Type: "step", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	events, err := r.b.Subscribe(ctx, j.ID, alice)
	if err != nil {
		t.Fatal(err)
	}
	r.waitStarted(t)

	st, err := store.Open(ctx, r.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pid := jobs.EventListenerPID(r.b)
	if pid == 0 {
		t.Fatal("replica b has no listening connection")
	}
	var ended bool
	if err := st.DB().QueryRowContext(ctx, `SELECT pg_terminate_backend(?)`, int64(pid)).Scan(&ended); err != nil || !ended {
		t.Fatalf("ending b's listening connection %d: %v, %v", pid, ended, err)
	}
	deadline := time.Now().Add(waitFor)
	for now := jobs.EventListenerPID(r.b); now == 0 || now == pid; now = jobs.EventListenerPID(r.b) {
		if time.Now().After(deadline) {
			t.Fatal("replica b did not listen again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(r.proceed)
	got := drain(t, events, nil)
	count := map[string]int{}
	for _, ev := range got {
		count[ev]++
	}
	if len(got) < 2 || got[len(got)-2] != "progress done" || got[len(got)-1] != "succeeded" ||
		count["running"] != 1 || count["succeeded"] != 1 {
		t.Fatalf("after the reconnection b's subscriber saw %v", got)
	}
}

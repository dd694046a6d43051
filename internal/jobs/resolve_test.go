package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// liveTypes is a Config.Resolve whose job types change while the service
// runs, as the server's live tool catalogue does.
type liveTypes struct {
	mu       sync.Mutex
	handlers map[string]jobs.Handler
	asked    map[string]int
}

func newLiveTypes() *liveTypes {
	return &liveTypes{handlers: map[string]jobs.Handler{}, asked: map[string]int{}}
}

func (l *liveTypes) resolve(jobType string) (jobs.Handler, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked[jobType]++
	h, ok := l.handlers[jobType]
	return h, ok
}

func (l *liveTypes) set(jobType string, h *jobs.Handler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h == nil {
		delete(l.handlers, jobType)
		return
	}
	l.handlers[jobType] = *h
}

func (l *liveTypes) times(jobType string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.asked[jobType]
}

// Job types are resolved when they are needed, not fixed at Open: a type
// that appears after Open is taken and runs; a queued job whose type has
// gone when its turn comes fails once with unknown_tool (not requeued), and
// runs on Retry once the type is back; a name outside the type pattern is
// never asked for.
func TestResolveLive(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		e := newEnvOn(t, backend)
		live := newLiveTypes()
		svc := e.open(t, nil, func(c *jobs.Config) {
			c.Resolve = live.resolve
			c.MaxWorkers = 1
		})

		// A type with a hyphen (tools.job@1's pattern) unknown at first, then
		// registered while the service runs.
		sub := jobs.Submission{Owner: alice, Type: "late-type", Input: json.RawMessage(`{"tool":"x"}`)}
		if _, err := svc.Submit(ctx, sub); !errors.Is(err, jobs.ErrUnknownType) {
			t.Fatalf("Submit before the type exists: %v, want ErrUnknownType", err)
		}
		q := quick()
		live.set("late-type", &q)
		j, err := svc.Submit(ctx, sub)
		if err != nil {
			t.Fatalf("Submit once the type exists: %v", err)
		}
		if got := waitState(t, svc, j.ID, alice, jobs.Succeeded); string(got.Result) != `{"ok":true}` || got.Attempts != 1 {
			t.Fatalf("late-type job %+v", got)
		}

		// A handler without Run is no handler.
		live.set("norun", &jobs.Handler{})
		if _, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "norun", Input: json.RawMessage(`{}`)}); !errors.Is(err, jobs.ErrUnknownType) {
			t.Fatalf("Submit of a type whose handler has no Run: %v, want ErrUnknownType", err)
		}
		// A name that is no job type does not reach Resolve.
		before := live.times("PDF!")
		if _, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "PDF!", Input: json.RawMessage(`{}`)}); !errors.Is(err, jobs.ErrUnknownType) {
			t.Fatalf("Submit of a bad type name: %v, want ErrUnknownType", err)
		}
		if live.times("PDF!") != before {
			t.Error("Resolve was asked for a name outside the type pattern")
		}

		// One worker: a blocking job holds it while a job of "gone" waits
		// queued; its type goes away before its turn.
		block := newBlocker()
		hold := block.handler(false)
		live.set("hold", &hold)
		live.set("gone", &q)
		held, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "hold", Input: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if id := block.wait(t); id != held.ID {
			t.Fatalf("started %s, want %s", id, held.ID)
		}
		gone, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "gone", Input: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		live.set("gone", nil)
		if _, err := svc.Cancel(ctx, held.ID, alice); err != nil {
			t.Fatal(err)
		}
		waitState(t, svc, held.ID, alice, jobs.Cancelled)
		got := waitState(t, svc, gone.ID, alice, jobs.Failed)
		if got.Error == nil || got.Error.Code != toolerr.UnknownTool || got.Error.Retryable || got.Attempts != 0 {
			t.Fatalf("job of a type gone: error %+v, attempts %d; want unknown_tool, not retryable, never started", got.Error, got.Attempts)
		}
		// Failed for good: no requeue, no second ticket.
		if again, err := svc.Get(ctx, gone.ID, alice); err != nil || again.State != jobs.Failed {
			t.Fatalf("job of a type gone, read again: %+v %v", again, err)
		}

		// The type is back: Retry runs it with the handler resolved now.
		live.set("gone", &q)
		if _, err := svc.Retry(ctx, gone.ID, alice); err != nil {
			t.Fatal(err)
		}
		if got := waitState(t, svc, gone.ID, alice, jobs.Succeeded); got.Attempts != 1 || got.Error != nil {
			t.Fatalf("retried job %+v", got)
		}
	})
}

// Handlers and Resolve are two ways of saying the same thing: Open takes
// one of them, not both.
func TestResolveAndHandlers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	st, err := store.Open(ctx, e.dir+"/toolhost.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	live := newLiveTypes()
	svc, err := jobs.Open(ctx, jobs.Config{Store: st, DataDir: e.dir, Resolve: live.resolve,
		Handlers: map[string]jobs.Handler{"pdf": stamp()}})
	if err == nil {
		svc.Close(ctx)
	}
	if !errors.Is(err, jobs.ErrConfig) {
		t.Fatalf("Open with Handlers and Resolve: %v, want ErrConfig", err)
	}
}

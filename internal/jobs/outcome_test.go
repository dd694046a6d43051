package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// slotLog is a jobs.SlotKeeper that records what it is asked.
type slotLog struct {
	mu       sync.Mutex
	renewed  []string
	released []string
}

func (k *slotLog) RenewSlots(_ context.Context, slots string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.renewed = append(k.renewed, slots)
	return nil
}

func (k *slotLog) ReleaseSlots(_ context.Context, slots string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.released = append(k.released, slots)
	return nil
}

func (k *slotLog) wasReleased(slots string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Contains(k.released, slots)
}

// gated is a handler that says it started, waits for its gate, and then
// writes one output file and succeeds.
type gated struct {
	started chan string
	gate    chan struct{}
}

func newGated() *gated { return &gated{started: make(chan string, 4), gate: make(chan struct{})} }

func (g *gated) handler() jobs.Handler {
	return jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		g.started <- run.JobID
		<-g.gate
		if err := os.WriteFile(filepath.Join(run.OutDir, "out.txt"), []byte("made while the database was down\n"), 0o600); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"ok":true}`), nil
	}}
}

// A run that ends while PostgreSQL is down loses neither its outcome nor
// its files (issue 27, item 2): the process keeps trying to write the
// outcome until the database is back; a process that stops meanwhile
// leaves the outcome kept beside the job, and the replica that settles
// the job records it instead of worker_crashed. The job's slots are
// released where it ends, in either process.
func TestOutcomeSurvivesAnOutage(t *testing.T) {
	pg := storetest.StartServer(t)
	e := newEnvOn(t, storetest.Backend{Name: "postgres", Target: pg.URL()})
	ctx := context.Background()
	g := newGated()
	keeper := &slotLog{}
	edit := func(c *jobs.Config) {
		c.RescueAfter, c.LeaseTTL = replicaRescue, replicaLease
		c.Slots, c.SlotRenewal = keeper, 100*time.Millisecond
	}
	// A is closed while the database is down, which it reports: its
	// Close is the test's, not e.open's.
	st, err := store.Open(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jobs.Open(ctx, jobs.Config{Store: st, DataDir: e.dir, Handlers: map[string]jobs.Handler{"gated": g.handler()},
		SigningKey: bytes.Repeat([]byte("k"), 32), PollInterval: 50 * time.Millisecond, Logger: testLogger(),
		RescueAfter: replicaRescue, LeaseTTL: replicaLease, Slots: keeper, SlotRenewal: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close(ctx)
		st.Close()
	})
	submitHolding := func(svc *jobs.Service, slots string) *jobs.Job {
		t.Helper()
		j, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "gated", Input: json.RawMessage(`{}`), Slots: slots})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	waitStarted := func() string {
		t.Helper()
		select {
		case id := <-g.started:
			return id
		case <-time.After(waitFor):
			t.Fatal("the job did not start")
			return ""
		}
	}
	checkSucceeded := func(svc *jobs.Service, id, slots string) {
		t.Helper()
		j := waitState(t, svc, id, alice, jobs.Succeeded)
		if j.Error != nil || len(j.Files) != 1 || j.Files[0].Name != "out.txt" {
			t.Fatalf("job %s: %+v", id, j)
		}
		if b := readFile(t, svc, id, "out.txt", alice); string(b) != "made while the database was down\n" {
			t.Errorf("job %s's output: %q", id, b)
		}
		if !keeper.wasReleased(slots) {
			t.Errorf("job %s ended without releasing its slots %q", id, slots)
		}
	}

	// 1. The run ends during the outage; the process waits it out.
	first := submitHolding(a, "slots-1")
	if id := waitStarted(); id != first.ID {
		t.Fatalf("started %s, want %s", id, first.ID)
	}
	// While it runs, its slots are renewed.
	for deadline := time.Now().Add(waitFor); ; time.Sleep(20 * time.Millisecond) {
		keeper.mu.Lock()
		renewed := slices.Contains(keeper.renewed, "slots-1")
		keeper.mu.Unlock()
		if renewed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a running job's slots were never renewed")
		}
	}
	pg.Stop()
	g.gate <- struct{}{}
	time.Sleep(2 * time.Second) // a few failed writes
	pg.Start()
	checkSucceeded(a, first.ID, "slots-1")

	// 2. The run ends during the outage and its process stops before the
	// database is back: another replica settles the job with the outcome
	// the run kept, not worker_crashed.
	second := submitHolding(a, "slots-2")
	if id := waitStarted(); id != second.ID {
		t.Fatalf("started %s, want %s", id, second.ID)
	}
	pg.Stop()
	g.gate <- struct{}{}
	time.Sleep(500 * time.Millisecond)
	stop, cancel := context.WithTimeout(ctx, time.Second)
	a.Close(stop) // the outcome cannot be written: it stays kept (Close says River could not stop cleanly)
	cancel()
	pg.Start()
	b := e.open(t, map[string]jobs.Handler{"gated": g.handler()}, edit)
	checkSucceeded(b, second.ID, "slots-2")
}

package wasmtool_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// recorder is an Observer that writes down what it is told, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
	// timeouts is the deadline each phase was entered with.
	timeouts map[string]time.Duration
}

func (r *recorder) observer() *wasmtool.Observer {
	r.timeouts = map[string]time.Duration{}
	add := func(e string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, e)
	}
	return &wasmtool.Observer{
		Phase: func(phase string, timeout time.Duration) {
			r.mu.Lock()
			r.timeouts[phase] = timeout
			r.mu.Unlock()
			add(phase)
		},
		Abandoned: func(phase string) { add("abandoned:" + phase) },
		Released:  func() { add("released") },
	}
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// A load that runs to its end tells its observer of the wait for a slot
// and of every phase, in order and once each, with its deadline, and of
// no abandon.
func TestObserverFollowsTheLoad(t *testing.T) {
	l := phaseLoader(t, wasmtool.Config{CompileTimeout: 40 * time.Second, DescribeTimeout: 3 * time.Second})
	path := filepath.Join(t.TempDir(), "ping.wasm")
	if err := os.WriteFile(path, testkit.WAT(t, "ping"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	tool, err := l.LoadFile(wasmtool.WithObserver(context.Background(), rec.observer()), path)
	if err != nil {
		t.Fatal(err)
	}
	tool.Close(context.Background())
	// ping has no _initialize: host may skip the image phase.
	want := []string{wasmtool.PhaseQueued, wasmtool.PhaseRead, wasmtool.PhaseQueued, wasmtool.PhaseInstrument,
		wasmtool.PhaseCompile, wasmtool.PhaseDescribe}
	got := slices.DeleteFunc(rec.seen(), func(e string) bool { return e == wasmtool.PhaseImage })
	if !slices.Equal(got, want) {
		t.Errorf("events %v, want %v (image optional)", rec.seen(), want)
	}
	if d := rec.timeouts[wasmtool.PhaseCompile]; d != 40*time.Second {
		t.Errorf("the compile phase was entered with deadline %v, want 40s", d)
	}
	if d := rec.timeouts[wasmtool.PhaseDescribe]; d < 3*time.Second {
		t.Errorf("the describe phase was entered with deadline %v, want at least 3s", d)
	}
	if d := rec.timeouts[wasmtool.PhaseQueued]; d != 0 {
		t.Errorf("the wait for a slot has deadline %v", d)
	}
}

// A compile abandoned at its deadline is reported abandoned in its phase
// before Load returns, and released once wazero's compiler has ended and
// given its slot back.
func TestObserverAbandonedCompile(t *testing.T) {
	l := phaseLoader(t, wasmtool.Config{CompileTimeout: time.Millisecond, MaxLoads: 1})
	var rec recorder
	_, err := l.Load(wasmtool.WithObserver(context.Background(), rec.observer()), manyFunctions(t, 20_000), nil)
	wantReason(t, err, wasmtool.LoadTimeout, wasmtool.PhaseCompile)
	got := rec.seen()
	if !slices.Contains(got, "abandoned:"+wasmtool.PhaseCompile) {
		t.Fatalf("events when Load returned %v, want the compile abandoned", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Released comes just after the slot is given back.
	for end := time.Now().Add(10 * time.Second); !slices.Contains(rec.seen(), "released") && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	got = rec.seen()
	if n := len(got); n == 0 || got[n-1] != "released" || slices.Index(got, "released") != n-1 {
		t.Errorf("events once the slot is back %v, want one released, last", got)
	}
	if i := slices.Index(got, "released"); i >= 0 && i < slices.Index(got, "abandoned:"+wasmtool.PhaseCompile) {
		t.Errorf("released before abandoned: %v", got)
	}
}

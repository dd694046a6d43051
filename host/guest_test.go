package host_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

func envelope(params string) []byte {
	return []byte(`{"operation":"count","parameters":` + params + `,"tool_code":"counter"}`)
}

const counterWant = `{"calls":1,"primes":1229,"echo":"COUNT"}`

// A Go guest's package state is fresh on every call, with or without the
// pre-initialised image, sequentially and in parallel; the image gives the
// same bytes as running _initialize per call.
func TestGoGuestIsolation(t *testing.T) {
	wasm := testkit.Go(t, "testdata/guests/counter")
	for _, cfg := range []struct {
		name  string
		image bool
	}{{"pre-initialised", true}, {"initialised per call", false}} {
		t.Run(cfg.name, func(t *testing.T) {
			r := newRuntimeWith(t, host.Config{}, hosttest.Switches{NoPreinitialise: !cfg.image})
			m, err := r.Load(context.Background(), wasm)
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := m.Preinitialised(); ok != cfg.image {
				t.Fatalf("Preinitialised = %v (%v), want %v", ok, why, cfg.image)
			}
			var wg sync.WaitGroup
			outs := make([]string, 12)
			fuel := make([]int64, 12)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := m.Call(context.Background(), "compute", envelope(`{"operation":"count"}`), host.Limits{})
					if err != nil {
						outs[i] = err.Error()
						return
					}
					outs[i], fuel[i] = string(res.Output), res.FuelUsed
				}()
			}
			wg.Wait()
			for i := range outs {
				if outs[i] != counterWant || fuel[i] != fuel[0] {
					t.Fatalf("call %d = %s with fuel %d (call 0: %d); want %s and equal fuel", i, outs[i], fuel[i], fuel[0], counterWant)
				}
			}
		})
	}
}

func TestGoGuestSoftDeadline(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m, err := r.Load(context.Background(), testkit.Go(t, "testdata/guests/counter"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = m.Call(context.Background(), "compute", envelope(`{"operation":"count","spin":0}`), host.Limits{
		SoftDeadline: start.Add(50 * time.Millisecond),
		HardDeadline: start.Add(10 * time.Second),
	})
	var he *host.Error
	if !isCode(err, host.CodeExecutionLimit) || !asHostError(err, &he) || !he.Raised || !he.Retryable {
		t.Fatalf("spinning past the soft deadline = %+v, want the guest's own retryable execution_limit", err)
	}
}

func asHostError(err error, target **host.Error) bool {
	e, ok := err.(*host.Error)
	if ok {
		*target = e
	}
	return ok
}

// The same module loaded twice, at once, shares its compiled code: closing
// one Module leaves the other whole (wazero keeps one compiled module per
// content in a runtime, and closing a handle deletes it for all).
func TestSameModuleLoadedTwice(t *testing.T) {
	wasm := testkit.Go(t, "testdata/guests/counter")
	r := newRuntime(t, host.Config{})
	mods := make([]*host.Module, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range mods {
		wg.Go(func() { mods[i], errs[i] = r.Load(context.Background(), wasm) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	if err := mods[0].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := mods[1].Call(context.Background(), "compute", envelope(`{"operation":"count"}`), host.Limits{})
	if err != nil || string(res.Output) != counterWant {
		t.Fatalf("the other module after one was closed: %v %v", res, err)
	}
	if err := mods[1].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Loaded again after both were closed, it compiles afresh.
	m, err := r.Load(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if res, err := m.Call(context.Background(), "compute", envelope(`{"operation":"count"}`), host.Limits{}); err != nil || string(res.Output) != counterWant {
		t.Fatalf("reloaded: %v %v", res, err)
	}
}

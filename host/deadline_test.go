package host_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
)

// cleanupMargin is how long past its deadline a stopped guest may take to
// give its call back: the guest stops at its next yield or host call, and
// the host then closes the instance.
const cleanupMargin = 1500 * time.Millisecond

// hostileDeadline is the hard deadline these tests give a call.
const hostileDeadline = 500 * time.Millisecond

// A guest looping in host calls that each do work (allocating, copying,
// logging, random bytes) is stopped at its hard deadline like one looping
// in its own code, and holds no more memory than its limit.
func TestHostCallLoopsEndAtTheHardDeadline(t *testing.T) {
	const limit = 64 << 20
	r := newRuntime(t, host.Config{MaxMemoryBytes: 256 << 20})
	for _, name := range []string{"host_alloc_loop", "host_input_set_loop", "host_log_loop", "host_random_loop"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, r, name)
			began := time.Now()
			res, err := m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: limit, HardDeadline: began.Add(hostileDeadline)})
			took := time.Since(began)
			t.Logf("%s ended after %v (hard deadline %v): %v", name, took.Round(time.Millisecond), hostileDeadline, err)
			if !isCode(err, host.CodeExecutionTimeout) {
				t.Fatalf("Call = %v, want execution_timeout", err)
			}
			if took > hostileDeadline+cleanupMargin {
				t.Errorf("the call ended %v after it began, past its hard deadline %v plus %v", took, hostileDeadline, cleanupMargin)
			}
			if res == nil || res.MemoryPeakBytes == 0 || res.MemoryPeakBytes > limit {
				t.Errorf("result %+v: the peak is not within the %d-byte limit", res, limit)
			}
		})
	}
}

// Host work is charged to fuel: the same loops, with no deadline, run out
// of fuel after a few iterations, and they use the same fuel every time.
func TestHostCallLoopsRunOutOfFuel(t *testing.T) {
	r := newRuntime(t, host.Config{})
	for _, name := range []string{"host_alloc_loop", "host_input_set_loop", "host_log_loop", "host_random_loop"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, r, name)
			var fuel [2]int64
			for i := range fuel {
				began := time.Now()
				// 10⁷ fuel is a few thousand iterations of the guest's own
				// 5-unit call, but about 19 of 4 MiB each.
				res, err := m.Call(context.Background(), "compute", nil, host.Limits{Fuel: 10_000_000, HardDeadline: soon(20 * time.Second)})
				t.Logf("%s ran out of fuel after %v: %v", name, time.Since(began).Round(time.Millisecond), err)
				if !isCode(err, host.CodeExecutionLimit) {
					t.Fatalf("Call = %v, want execution_limit (fuel)", err)
				}
				if res == nil || res.FuelUsed <= 10_000_000 {
					t.Fatalf("result %+v: want FuelUsed past the budget", res)
				}
				fuel[i] = res.FuelUsed
			}
			if fuel[0] != fuel[1] {
				t.Errorf("fuel %d then %d: host charges are not deterministic", fuel[0], fuel[1])
			}
		})
	}
}

// The copy input_set makes counts toward the memory limit: a 4 MiB block
// and its 4 MiB copy do not fit in 6 MiB.
func TestInputSetCopyCountsTowardTheMemoryLimit(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "host_input_set_loop")
	res, err := m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: 6 << 20, HardDeadline: soon(5 * time.Second)})
	if !isCode(err, host.CodeMemoryLimit) {
		t.Fatalf("Call = %v, %v; want memory_limit", res, err)
	}
}

// A start function runs while wazero creates the instance, before the host
// holds it; the call's hard deadline still ends it, in pure WebAssembly or
// in host calls, unless its own fuel (10⁹, host work included) runs out
// first: execution_timeout or execution_limit, within the deadline either
// way. A per-call _initialize is under the call's deadline and fuel.
func TestStartFunctionEndsAtTheHardDeadline(t *testing.T) {
	r := newRuntimeWith(t, host.Config{}, hosttest.Switches{NoPreinitialise: true})
	for _, name := range []string{"start_loop", "start_host_loop", "image_loop", "init_host_loop"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, r, name)
			began := time.Now()
			_, err := m.Call(context.Background(), "compute", nil, host.Limits{HardDeadline: began.Add(hostileDeadline)})
			took := time.Since(began)
			t.Logf("%s: the call ended after %v (hard deadline %v): %v", name, took.Round(time.Millisecond), hostileDeadline, err)
			if !isCode(err, host.CodeExecutionTimeout) && !isCode(err, host.CodeExecutionLimit) {
				t.Fatalf("Call = %v, want execution_timeout or execution_limit", err)
			}
			if took > hostileDeadline+cleanupMargin {
				t.Errorf("the call ended %v after it began, past %v plus %v", took, hostileDeadline, cleanupMargin)
			}
		})
	}
	// With no deadline, the start function's own fuel ends it, and the
	// trap is told to be fuel exhaustion although the host held no handle
	// on the instance yet.
	if _, err := load(t, r, "start_loop").Call(context.Background(), "compute", nil, host.Limits{}); !isCode(err, host.CodeExecutionLimit) || !strings.Contains(err.Error(), "fuel exhausted") {
		t.Fatalf("start function without a deadline ended with %v, want execution_limit (fuel)", err)
	}
	// Cancelling the call ends a start function too, as execution_limit.
	m := load(t, r, "start_loop")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := m.Call(ctx, "compute", nil, host.Limits{}); !isCode(err, host.CodeExecutionLimit) {
		t.Fatalf("cancelled start function ended with %v, want execution_limit", err)
	}
}

// Load runs a reactor's _initialize (and its start function) once in an
// image template; one that does not end is refused within Load's context
// deadline (or sooner, when the template's fuel runs out first), in pure
// WebAssembly or in host calls.
func TestLoadRefusesAnInitialiserPastItsDeadline(t *testing.T) {
	r := newRuntime(t, host.Config{})
	const deadline = 400 * time.Millisecond
	for _, name := range []string{"image_loop", "init_host_loop", "start_host_loop"} {
		t.Run(name, func(t *testing.T) {
			wasm := hostile(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			began := time.Now()
			m, err := r.Load(ctx, wasm)
			took := time.Since(began)
			t.Logf("%s: Load refused after %v (context deadline %v): %v", name, took.Round(time.Millisecond), deadline, err)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Load succeeded")
			}
			if !errors.Is(err, host.ErrModule) {
				t.Errorf("Load = %v, want ErrModule", err)
			}
			// At its deadline, the refusal is the deadline's — unless the
			// template's fuel ran out first, which on a loaded machine can
			// be within a millisecond of it (seen in CI: fuel out, Load
			// back after 401 ms of 400).
			outOfFuel := strings.Contains(err.Error(), "ran out of fuel")
			if took >= deadline && !errors.Is(err, context.DeadlineExceeded) && !outOfFuel {
				t.Errorf("Load = %v at its deadline, want it to wrap context.DeadlineExceeded", err)
			}
			if took > deadline+cleanupMargin {
				t.Errorf("Load took %v, past its %v deadline plus %v", took, deadline, cleanupMargin)
			}
		})
	}
}

// Without a deadline of its own, Load still ends the template within the
// image timeout (10 s), or sooner when the template's 10¹⁰ fuel runs out
// first (on a fast machine); before, nothing but that fuel stopped it.
func TestLoadEndsTheTemplateAtTheImageTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes the 10 s image timeout")
	}
	const imageTimeout = 10 * time.Second
	r := newRuntime(t, host.Config{})
	began := time.Now()
	m, err := r.Load(context.Background(), hostile(t, "image_loop"))
	took := time.Since(began)
	t.Logf("image_loop: Load refused after %v: %v", took.Round(time.Millisecond), err)
	if err == nil {
		m.Close(context.Background())
		t.Fatal("Load succeeded")
	}
	if !errors.Is(err, host.ErrModule) || took > imageTimeout+cleanupMargin {
		t.Errorf("Load = %v after %v, want ErrModule within %v", err, took, imageTimeout+cleanupMargin)
	}
}

// Two host-call loops at once end at their deadlines, and the runtime
// serves the next call at once: nothing they did holds it up.
func TestConcurrentHostCallLoopsGiveBackTheRuntime(t *testing.T) {
	r := newRuntime(t, host.Config{})
	loops := []*host.Module{load(t, r, "host_alloc_loop"), load(t, r, "host_random_loop")}
	echo := load(t, r, "echo")
	var wg sync.WaitGroup
	errs := make([]error, len(loops))
	began := time.Now()
	for i, m := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: 64 << 20, HardDeadline: began.Add(hostileDeadline)})
		}()
	}
	wg.Wait()
	took := time.Since(began)
	for i, err := range errs {
		if !isCode(err, host.CodeExecutionTimeout) {
			t.Errorf("loop %d = %v, want execution_timeout", i, err)
		}
	}
	if took > hostileDeadline+cleanupMargin {
		t.Errorf("the loops gave their calls back after %v", took)
	}
	res, err := echo.Call(context.Background(), "compute", []byte("next"), host.Limits{HardDeadline: soon(time.Second)})
	if err != nil || string(res.Output) != "next" {
		t.Fatalf("the next call = %v, %v", res, err)
	}
	t.Logf("two loops ended after %v; the next call answered %v later", took.Round(time.Millisecond), (time.Since(began) - took).Round(time.Microsecond))
}

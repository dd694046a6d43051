package host_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

// hostile returns the module of testdata/hostile/NAME.wat.
func hostile(t testing.TB, name string) []byte { return testkit.WAT(t, name) }

func newRuntime(t testing.TB, cfg host.Config) *host.Runtime {
	t.Helper()
	return newRuntimeWith(t, cfg, hosttest.Switches{})
}

// newRuntimeWith is newRuntime with hosttest's switches s.
func newRuntimeWith(t testing.TB, cfg host.Config, s hosttest.Switches) *host.Runtime {
	t.Helper()
	r, err := hosttest.NewRuntime(context.Background(), cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func load(t testing.TB, r *host.Runtime, name string) *host.Module {
	t.Helper()
	m, err := r.Load(context.Background(), hostile(t, name))
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	return m
}

func TestHostileModules(t *testing.T) {
	r := newRuntime(t, host.Config{MaxMemoryBytes: 256 << 20})
	tests := []struct {
		name   string
		module string
		limits host.Limits
		soft   time.Duration // soft deadline after the call starts
		hard   time.Duration // hard deadline after the call starts
		code   string
		raised bool
	}{
		{name: "infinite loop hits the hard deadline", module: "loop", hard: 200 * time.Millisecond, code: host.CodeExecutionTimeout},
		{name: "infinite loop runs out of fuel", module: "loop", limits: host.Limits{Fuel: 1_000_000}, code: host.CodeExecutionLimit},
		{name: "checkpoint after the soft deadline", module: "checkpoint", soft: 50 * time.Millisecond, hard: 5 * time.Second, code: host.CodeExecutionLimit, raised: true},
		{name: "memory.grow bomb", module: "memory_bomb", limits: host.Limits{MemoryBytes: 64 << 20}, code: host.CodeMemoryLimit},
		{name: "table.grow bomb", module: "table_bomb", limits: host.Limits{Fuel: 10_000_000}, hard: 5 * time.Second, code: host.CodeExecutionLimit},
		{name: "alloc bomb", module: "alloc_bomb", limits: host.Limits{MemoryBytes: 200 << 20}, code: host.CodeMemoryLimit},
		{name: "unbounded recursion", module: "recursion", code: host.CodeExecutionFailed},
		{name: "output over the cap", module: "output_bomb", limits: host.Limits{MaxOutputBytes: 1 << 20}, code: host.CodeOutputLimitExceeded},
		{name: "trap", module: "trap", code: host.CodeExecutionFailed},
		{name: "bad pointer", module: "bad_pointer", code: host.CodeExecutionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := load(t, r, tt.module)
			// Twice: the second call runs on whatever the first left in
			// the pool (nothing, if it was discarded as it must be).
			for attempt := range 2 {
				limits := tt.limits
				if tt.soft > 0 {
					limits.SoftDeadline = soon(tt.soft)
				}
				if tt.hard > 0 {
					limits.HardDeadline = soon(tt.hard)
				}
				res, err := m.Call(context.Background(), "compute", nil, limits)
				var he *host.Error
				if !errors.As(err, &he) {
					t.Fatalf("call %d = %v, %v; want a *host.Error %s", attempt+1, res, err, tt.code)
				}
				if he.Code != tt.code || he.Raised != tt.raised {
					t.Fatalf("call %d error = %+v, want code %s raised %v", attempt+1, he, tt.code, tt.raised)
				}
			}
		})
	}
}

// While a guest spins without checkpoints, the host's garbage collector
// still completes: the guest is interruptible and stalls no one.
func TestLoopDoesNotStallGC(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "loop")
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "compute", nil, host.Limits{HardDeadline: soon(3 * time.Second)})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the guest start spinning
	gcDone := make(chan struct{})
	go func() { runtime.GC(); close(gcDone) }()
	select {
	case <-gcDone:
	case err := <-done:
		t.Fatalf("the guest stopped before the GC was tried: %v", err)
	}
	select {
	case <-gcDone:
	case <-time.After(2 * time.Second):
		t.Fatal("runtime.GC did not complete while a guest was looping")
	}
	if err := <-done; !isCode(err, host.CodeExecutionTimeout) {
		t.Fatalf("loop ended with %v, want execution_timeout", err)
	}
}

// A call whose context is cancelled while the guest spins ends at the
// guest's next yield, as execution_limit (not a timeout: no deadline
// passed, and not fuel exhaustion).
func TestCancelInterruptsLoop(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "loop")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := m.Call(ctx, "compute", nil, host.Limits{})
	if !isCode(err, host.CodeExecutionLimit) {
		t.Fatalf("cancelled loop ended with %v, want execution_limit", err)
	}
	if f := (*host.Error)(nil); errors.As(err, &f) && strings.Contains(f.Error(), "fuel exhausted") {
		t.Fatalf("cancelled loop reported as out of fuel: %v", err)
	}
}

func TestLoadRefusals(t *testing.T) {
	r := newRuntime(t, host.Config{})
	tests := []struct {
		name string
		wasm []byte
		want error
	}{
		{name: "import the host does not provide", wasm: hostile(t, "bad_import"), want: host.ErrImport},
		{name: "not wasm", wasm: []byte("\x00asm\x02\x00\x00\x00garbage"), want: host.ErrModule},
		{name: "empty", wasm: nil, want: host.ErrModule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := r.Load(context.Background(), tt.wasm); !errors.Is(err, tt.want) {
				t.Fatalf("Load = %v, want %v", err, tt.want)
			}
		})
	}
	m := load(t, r, "no_compute")
	if m.HasExport("compute") || !m.HasExport("run") {
		t.Errorf("exports %v", m.Exports())
	}
	if _, err := m.Call(context.Background(), "compute", nil, host.Limits{}); !isCode(err, host.CodeExecutionFailed) {
		t.Errorf("calling a missing export = %v", err)
	}
}

// Every call gets a fresh instance: a global the guest increments reads the
// same on every call, sequential or parallel.
func TestFreshInstancePerCall(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "counter")
	var wg sync.WaitGroup
	outputs := make([]string, 16)
	errs := make([]error, 16)
	for i := range outputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := m.Call(context.Background(), "compute", nil, host.Limits{})
			errs[i] = err
			if err == nil {
				outputs[i] = string(res.Output)
			}
		}()
	}
	wg.Wait()
	for i := range outputs {
		if errs[i] != nil || outputs[i] != "1" {
			t.Fatalf("call %d = %q, %v; want \"1\" on every call", i, outputs[i], errs[i])
		}
	}
}

func TestEchoAndLimits(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m := load(t, r, "echo")
	in := []byte(`{"operation":"x","text":"héllo"}`)
	res, err := m.Call(context.Background(), "compute", in, host.Limits{MaxInputBytes: len(in), MaxOutputBytes: len(in)})
	if err != nil || string(res.Output) != string(in) {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if res.FuelUsed <= 0 {
		t.Errorf("FuelUsed = %d", res.FuelUsed)
	}
	// Fuel is deterministic: the same input uses the same fuel.
	again, err := m.Call(context.Background(), "compute", in, host.Limits{})
	if err != nil || again.FuelUsed != res.FuelUsed {
		t.Errorf("fuel %d then %d (%v)", res.FuelUsed, again.FuelUsed, err)
	}
	if _, err := m.Call(context.Background(), "compute", in, host.Limits{MaxInputBytes: len(in) - 1}); !isCode(err, host.CodeInputLimitExceeded) {
		t.Errorf("input over the limit = %v", err)
	}
	if _, err := m.Call(context.Background(), "compute", in, host.Limits{MaxOutputBytes: len(in) - 1}); !isCode(err, host.CodeOutputLimitExceeded) {
		t.Errorf("output over the limit = %v", err)
	}
}

func TestClosedRuntime(t *testing.T) {
	r, err := host.NewRuntime(context.Background(), host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := load(t, r, "echo")
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := m.Call(context.Background(), "compute", nil, host.Limits{}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Call after Close = %v", err)
	}
}

func soon(d time.Duration) time.Time { return time.Now().Add(d) }

func isCode(err error, code string) bool {
	var he *host.Error
	return errors.As(err, &he) && he.Code == code
}

// Compiled modules land in the cache folder, and a second runtime on the
// same folder loads them from it.
func TestCompilationCache(t *testing.T) {
	dir := t.TempDir()
	wasm := hostile(t, "echo")
	for round := range 2 {
		r, err := host.NewRuntime(context.Background(), host.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Load(context.Background(), wasm)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		res, err := m.Call(context.Background(), "compute", []byte("cached"), host.Limits{})
		if err != nil || string(res.Output) != "cached" {
			t.Fatalf("round %d: %v, %v", round, res, err)
		}
		r.Close(context.Background())
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			t.Fatalf("round %d: the cache folder is empty (%v)", round, err)
		}
	}
}

package executor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// hostRunner runs each job in a fresh instance of a real WASM module on
// the real host, under the job's deadlines, as the WASM engine does
// (without its schema work, which plays no part in how long a lane is
// held).
type hostRunner struct{ m *host.Module }

func (h hostRunner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	res, err := h.m.Call(ctx, "compute", job.Parameters, host.Limits{
		MemoryBytes:  64 << 20,
		SoftDeadline: job.Soft,
		HardDeadline: job.Hard,
	})
	var he *host.Error
	if errors.As(err, &he) {
		return nil, toolerr.New(toolerr.Code(he.Code))
	}
	if err != nil {
		return nil, err
	}
	return &engine.Outcome{Result: res.Output}, nil
}

// Two items looping in host calls (alloc + reset of 4 MiB, WASI
// random_get) hold both lanes only until their hard deadline: they end
// execution_timeout within it plus a cleanup margin, and an item queued
// behind them gets a lane and answers right after.
func TestHostCallLoopsGiveTheirLanesBack(t *testing.T) {
	const hard = 1500 * time.Millisecond // the least the platform allows: soft plus its 1 s output reserve
	const margin = 1500 * time.Millisecond
	rt, err := host.NewRuntime(context.Background(), host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	loadModule := func(name string) hostRunner {
		m, err := rt.Load(context.Background(), testkit.WAT(t, name))
		if err != nil {
			t.Fatalf("Load(%s) = %v", name, err)
		}
		t.Cleanup(func() { m.Close(context.Background()) })
		return hostRunner{m}
	}
	short := func(op *policy.Operation) {
		op.EngineTimeoutMS, op.SoftTimeoutMS, op.HardTimeoutMS = 300, 400, int64(hard/time.Millisecond)
	}
	snap := registry.NewSnapshot(1, []*registry.Service{
		service(t, "alloc_loop", loadModule("host_alloc_loop"), operation("spin", short)),
		service(t, "random_loop", loadModule("host_random_loop"), operation("spin", short)),
		service(t, "echo", loadModule("echo"), operation("ping", nil)),
	}, nil)
	e, err := executor.New(executor.Config{Lanes: 2, Snapshot: func() *registry.Snapshot { return snap }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown() = %v", err)
		}
	})

	began := time.Now()
	var wg sync.WaitGroup
	loops := make([]*executor.BatchResult, 2)
	for i, code := range []string{"alloc_loop", "random_loop"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Compute(context.Background(), batch(item("c", code, params{Operation: "spin"})))
			if err != nil {
				t.Errorf("Compute(%s) = %v", code, err)
			}
			loops[i] = res
		}()
	}
	// Queue the echo once both loops hold a lane.
	for deadline := time.Now().Add(5 * time.Second); e.Pool().Active < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the loops never held both lanes: %+v", e.Pool())
		}
	}
	echo, err := e.Compute(context.Background(), batch(item("c", "echo", params{Operation: "ping"})))
	answered := time.Since(began)
	wg.Wait()
	loopsEnded := time.Since(began)
	if err != nil {
		t.Fatalf("Compute(echo) = %v", err)
	}
	if r := echo.Results[0]; !r.Succeeded {
		t.Errorf("echo = %+v error %+v, want success", r, r.Error)
	}
	for i, res := range loops {
		if res == nil {
			continue
		}
		if r := res.Results[0]; r.Error == nil || r.Error.Code != toolerr.ExecutionTimeout {
			t.Errorf("loop %d = %+v error %+v, want execution_timeout", i, r, r.Error)
		}
	}
	t.Logf("both loops held their lanes %v (hard deadline %v); the queued echo answered after %v",
		loopsEnded.Round(time.Millisecond), hard, answered.Round(time.Millisecond))
	if answered > hard+margin || loopsEnded > hard+margin {
		t.Errorf("the echo answered after %v and the loops ended after %v, past the %v hard deadline plus %v", answered, loopsEnded, hard, margin)
	}
	if p := e.Pool(); p.Active != 0 || p.Degraded != 0 {
		t.Errorf("pool after the loops = %+v, want every lane free", p)
	}
}

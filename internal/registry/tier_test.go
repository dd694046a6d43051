package registry_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// tieredConfig is config with a tiered loader on a runtime of its own
// (host.Config hc, hosttest's switches hs), which closes after the
// registry and the loader's abandoned work.
func tieredConfig(t *testing.T, dir string, hc host.Config, hs hosttest.Switches, wc wasmtool.Config) (registry.Config, *logBuffer) {
	t.Helper()
	cfg, logs := config(t, dir)
	rt, err := hosttest.NewRuntime(context.Background(), hc, hs)
	if err != nil {
		t.Fatal(err)
	}
	wc.Platform, wc.Tiered = policy.DefaultPlatform(), true
	l, err := wasmtool.NewLoader(rt, wc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		l.Wait(ctx)
		rt.Close(context.Background())
	})
	cfg.Loader = l
	return cfg, logs
}

// waitTier waits until the service code's tier is want.
func waitTier(t *testing.T, svc *registry.Service, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute) // a cold compile under the race detector
	for {
		tier, failure := svc.Tier()
		if tier == want {
			return
		}
		if failure != "" || time.Now().After(deadline) {
			t.Fatalf("tier %s (failure %q), want %s", tier, failure, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A module loaded on a cold cache is published on the interpreter tier and
// promoted in the background: the same snapshot, generation and service
// then run the same item on the compiled tier, with the same result and
// fuel, and the log says when the swap happened.
func TestTieredPromotion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "counter.wasm"), testkit.Go(t, "testdata/guests/counter"))
	age(t, filepath.Join(dir, "counter.wasm"))
	// A cold cache, so that the first item runs on the interpreter; under
	// the race detector, where a cold compile takes minutes, the shared
	// cache with InterpretFirst (the swap may then come first: skipped).
	hc, hs := host.Config{CacheDir: t.TempDir()}, hosttest.Switches{}
	if raceEnabled {
		hc, hs = host.Config{CacheDir: cacheDir}, hosttest.Switches{InterpretFirst: true}
	}
	cfg, logs := tieredConfig(t, dir, hc, hs, wasmtool.Config{})
	r := open(t, cfg)
	s := r.Snapshot()
	svc, ok := s.Service("counter")
	if !ok {
		t.Fatalf("not published: %v %+v", codes(s), s.Failures())
	}
	if tier, failure := svc.Tier(); tier != registry.TierInterpreter || failure != "" {
		t.Fatalf("a cold module is published on the %q tier (%q), want interpreter", tier, failure)
	}
	const params = `{"operation":"count","spin":10}`
	first, err := svc.Runner.Run(context.Background(), job(t, svc, params))
	if err != nil {
		t.Fatal(err)
	}
	if tier, _ := svc.Tier(); tier != registry.TierInterpreter {
		t.Skip("swapped during the first item: nothing to compare")
	}
	waitTier(t, svc, registry.TierCompiled)
	second, err := svc.Runner.Run(context.Background(), job(t, svc, params))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Result, second.Result) || *first.FuelUsed != *second.FuelUsed {
		t.Errorf("interpreter: %s with fuel %d; compiled: %s with fuel %d", first.Result, *first.FuelUsed, second.Result, *second.FuelUsed)
	}
	if now := r.Snapshot(); now != s {
		t.Errorf("the swap published generation %d (was %d)", now.Generation(), s.Generation())
	}
	// Logged once Promote has returned, just after the swap.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logs.String(), "swapped to its compiled tier"); {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say when the swap happened:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A promotion that fails (here: its compile outlasts its deadline) leaves
// the interpreter serving the module, says why through Service.Tier, and
// is logged.
func TestTieredPromotionFails(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "codec.wasm"), bundled(t, "codec"))
	age(t, filepath.Join(dir, "codec.wasm"))
	cfg, logs := tieredConfig(t, dir, host.Config{CacheDir: cacheDir}, hosttest.Switches{InterpretFirst: true},
		wasmtool.Config{PromoteTimeout: time.Nanosecond})
	idle := make(chan struct{}, 1)
	cfg.PromotionsIdle = func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	}
	r := open(t, cfg)
	svc, ok := r.Snapshot().Service("hash")
	if !ok {
		t.Fatal("not published")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		tier, failure := svc.Tier()
		if failure != "" {
			if tier != registry.TierInterpreter || failure != "load_timeout/compile" {
				t.Fatalf("after a failed promotion: tier %s, failure %q", tier, failure)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failure reported: tier %s", tier)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, err := svc.Runner.Run(context.Background(), job(t, svc, `{"operation":"digest","text":"abc","algorithm":"sha256"}`))
	if err != nil || !strings.Contains(string(out.Result), "ba7816bf") {
		t.Fatalf("the interpreter after a failed promotion: %v", err)
	}
	select { // the last promotion ended
	case <-idle:
	case <-time.After(time.Minute):
		t.Error("PromotionsIdle was not called")
	}
	if !strings.Contains(logs.String(), "the interpreter keeps serving it") {
		t.Errorf("the failure is not logged:\n%s", logs)
	}
}

package registry_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// loadOf returns the loads of file in r.Loading().
func loadsOf(r *registry.Registry, file string) []registry.Load {
	var out []registry.Load
	for _, l := range r.Loading() {
		if l.File == file {
			out = append(out, l)
		}
	}
	return out
}

// readLoading calls r.Loading from a few goroutines until the test ends,
// so that the race detector sees it beside the loads it reports on.
func readLoading(t *testing.T, r *registry.Registry) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, l := range r.Loading() {
					if strings.ContainsAny(l.File, `/\`) {
						t.Errorf("a load names a path: %+v", l)
					}
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

// awaitLoad polls r.Loading every few milliseconds until ok holds for a
// load of file, recording the phases it passed through.
func awaitLoad(t *testing.T, r *registry.Registry, file, what string, ok func(registry.Load) bool) (registry.Load, []string) {
	t.Helper()
	var phases []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, l := range loadsOf(r, file) {
			if len(phases) == 0 || phases[len(phases)-1] != l.Phase {
				phases = append(phases, l.Phase)
			}
			if ok(l) {
				return l, phases
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: loads %+v, phases seen %v, failures %+v", what, r.Loading(), phases, r.Snapshot().Failures())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// awaitNoLoad polls until no load of file is listed and returns when
// that was seen.
func awaitNoLoad(t *testing.T, r *registry.Registry, file string) time.Time {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(loadsOf(r, file)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s is still loading: %+v", file, r.Loading())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

// A load is listed from when its file has settled, with the phase it is
// in and that phase's deadline, until its refusal is published; then it
// is gone and the refusal is in the failures.
func TestLoadingFollowsALoad(t *testing.T) {
	dir := t.TempDir()
	const deadline = 2 * time.Second
	cfg, _ := boundedConfig(t, dir, wasmtool.Config{ImageTimeout: deadline, MaxLoads: 4})
	cfg.Static = false
	cfg.BatchWait = 100 * time.Millisecond
	r := open(t, cfg)
	if l := r.Loading(); len(l) != 0 {
		t.Fatalf("loads before any file: %+v", l)
	}
	readLoading(t, r)
	dropped := time.Now()
	writeFile(t, filepath.Join(dir, "loop.wasm"), testkit.WAT(t, "image_loop"))

	l, phases := awaitLoad(t, r, "loop.wasm", "the image phase", func(l registry.Load) bool { return l.Phase == wasmtool.PhaseImage })
	if _, failed := failureOf(r.Snapshot(), "loop.wasm"); failed {
		t.Errorf("refused while still listed in its image phase: %+v", r.Snapshot().Failures())
	}
	if l.Abandoned || l.PhaseTimeout != deadline || l.Since.Before(dropped) || l.PhaseSince.Before(l.Since) {
		t.Errorf("the image phase's load: %+v (dropped at %v)", l, dropped)
	}
	order := []string{wasmtool.PhaseQueued, wasmtool.PhaseRead, wasmtool.PhaseInstrument, wasmtool.PhaseImage, wasmtool.PhaseCompile}
	last := 0
	for _, p := range phases {
		i := slices.Index(order, p)
		if i < 0 || (i < last && p != wasmtool.PhaseQueued) {
			t.Errorf("phases seen out of order: %v", phases)
			break
		}
		last = max(last, i)
	}
	t.Logf("phases seen: %v", phases)

	refused := importFailed("loop.wasm", "load_timeout/image")
	waitFor(t, r, "the refusal", func(s *registry.Snapshot) bool { return hasFailure(s, refused) })
	awaitNoLoad(t, r, "loop.wasm")
	if !hasFailure(r.Snapshot(), refused) {
		t.Errorf("no longer loading, and not refused: %+v", r.Snapshot().Failures())
	}
}

func failureOf(s *registry.Snapshot, file string) (registry.Failure, bool) {
	for _, f := range s.Failures() {
		if f.File == file {
			return f, true
		}
	}
	return registry.Failure{}, false
}

// A compile that outlasts its deadline is refused at the deadline, and
// listed as abandoned while wazero's compiler runs on in its slot: the
// refusal is published while the load is still listed, and the listing
// ends when the slot is given back.
func TestLoadingShowsAnAbandonedCompile(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir)
	// No compilation cache: the module is compiled, not read back.
	rt, err := host.NewRuntime(context.Background(), host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	loader, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform(),
		CompileTimeout: 50 * time.Millisecond, MaxLoads: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := loader.Wait(ctx); err != nil {
			t.Errorf("the abandoned compile never ended: %v", err)
		}
	})
	cfg.Loader, cfg.Static, cfg.BatchWait = loader, false, 100*time.Millisecond
	r := open(t, cfg)
	readLoading(t, r)
	// Four functions of 1,460 loops in a row: at the module's
	// dominator-depth limit, accepted, about a second of compiling
	// (docs/host.md).
	writeFile(t, filepath.Join(dir, "slow.wasm"), testkit.Funcs(4, testkit.RunBody("loop", 1460)))

	refused := importFailed("slow.wasm", "load_timeout/compile")
	var both bool
	l, _ := awaitLoad(t, r, "slow.wasm", "an abandoned compile, refused", func(l registry.Load) bool {
		both = l.Abandoned && hasFailure(r.Snapshot(), refused)
		return both
	})
	if l.PhaseTimeout != 0 {
		t.Errorf("an abandoned load has a deadline: %+v", l)
	}
	abandoned := time.Now()
	gone := awaitNoLoad(t, r, "slow.wasm")
	t.Logf("listed as abandoned (phase %s) for %v after its refusal", l.Phase, gone.Sub(abandoned).Round(time.Millisecond))
	if !hasFailure(r.Snapshot(), refused) {
		t.Errorf("failures %+v", r.Snapshot().Failures())
	}
	// The slot is back: the loader has nothing running.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := loader.Wait(ctx); err != nil {
		t.Errorf("the load was no longer listed, but its work still held a slot: %v", err)
	}
}

// A load superseded by a new version of its file is stopped, not left to
// run on to its end: with two modules whose _initialize loops (image
// deadline a minute, so that each runs until host's image budget ends
// it), the second one replaced while in its image phase is gone from the
// listing, and its new version published, while the first one, dropped
// half a second earlier, still loads.
func TestSupersededLoadIsStopped(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := boundedConfig(t, dir, wasmtool.Config{ImageTimeout: time.Minute, MaxLoads: 4})
	cfg.Static = false
	cfg.BatchWait = 100 * time.Millisecond
	r := open(t, cfg)
	readLoading(t, r)
	inImage := func(l registry.Load) bool { return l.Phase == wasmtool.PhaseImage }
	writeFile(t, filepath.Join(dir, "first.wasm"), testkit.WAT(t, "image_loop"))
	awaitLoad(t, r, "first.wasm", "the first module's image phase", inImage)
	time.Sleep(500 * time.Millisecond)
	path := filepath.Join(dir, "second.wasm")
	writeFile(t, path, testkit.WAT(t, "image_loop"))
	awaitLoad(t, r, "second.wasm", "the second module's image phase", inImage)
	writeFile(t, path, pingWASM(t))
	deadline := time.Now().Add(60 * time.Second)
	for {
		loads := r.Loading()
		if !slices.ContainsFunc(loads, func(l registry.Load) bool { return l.File == "second.wasm" }) {
			if !slices.ContainsFunc(loads, func(l registry.Load) bool { return l.File == "first.wasm" }) {
				t.Errorf("the superseded load ran on as long as the first module's (failures %+v)", r.Snapshot().Failures())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the superseded load is still listed: %+v", loads)
		}
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, r, "the new version", func(s *registry.Snapshot) bool {
		svc, ok := s.Service("ping")
		return ok && svc.Source == "second.wasm"
	})
	if f, failed := failureOf(r.Snapshot(), "second.wasm"); failed {
		t.Errorf("the superseded load's outcome was recorded: %+v", f)
	}
	waitFor(t, r, "the first module's refusal", func(s *registry.Snapshot) bool {
		return hasFailure(s, importFailed("first.wasm", "load_timeout/image"))
	})
	awaitNoLoad(t, r, "first.wasm")
}

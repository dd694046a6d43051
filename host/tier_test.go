package host_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

// tierItem is one call of the differential test.
type tierItem struct {
	name, export string
	input        []byte
	lim          host.Limits
}

// tierOutcome is what a call gave, in full: what must be equal on both
// tiers.
type tierOutcome struct {
	output        []byte
	code, message string
	raised        bool
	fuel          int64
	peak          uint64
	log           []byte
}

func (o tierOutcome) String() string {
	return fmt.Sprintf("output %q, error %s %q (raised %v), fuel %d, peak %d, log %q", o.output, o.code, o.message, o.raised, o.fuel, o.peak, o.log)
}

func (o tierOutcome) equal(p tierOutcome) bool {
	return bytes.Equal(o.output, p.output) && o.code == p.code && o.message == p.message &&
		o.raised == p.raised && o.fuel == p.fuel && o.peak == p.peak && bytes.Equal(o.log, p.log)
}

func callOutcome(t *testing.T, m *host.Module, it tierItem) tierOutcome {
	t.Helper()
	res, err := m.Call(context.Background(), it.export, it.input, it.lim)
	var o tierOutcome
	if res != nil {
		o.output, o.fuel, o.peak, o.log = res.Output, res.FuelUsed, res.MemoryPeakBytes, res.Log
	}
	if err != nil {
		var he *host.Error
		if !errors.As(err, &he) {
			t.Fatalf("%s: %v is not a *host.Error", it.name, err)
		}
		o.code, o.raised = he.Code, he.Raised
		if he.Raised {
			o.message = he.Message
		}
	}
	return o
}

// TestTiersAgree is the tiered start's differential test: the same items,
// on the same module, give the same bytes, errors, fuel, memory peak and
// log on the interpreter tier and, after Module.Optimise swapped it in, on
// the compiled tier — a bundled Go module (successes, a tool's own error,
// an item that runs out of fuel), the Go counter guest, an Extism plugin
// without an image, and hand-written modules that trap, loop and recurse.
// Fuel is counted by the instrumented module itself, so it must match
// exactly.
func TestTiersAgree(t *testing.T) {
	env := func(tool, op, params string) []byte {
		return []byte(`{"operation":"` + op + `","parameters":` + params + `,"tool_code":"` + tool + `"}`)
	}
	cases := []struct {
		name  string
		wasm  func(t *testing.T) []byte
		items []tierItem
	}{
		{"codec", func(t *testing.T) []byte { return testkit.Go(t, "plugins-src/codec") }, []tierItem{
			{"hash", "compute", env("hash", "digest", `{"operation":"digest","text":"abc","algorithm":"sha256"}`), host.Limits{}},
			{"hmac", "compute", env("hash", "digest", `{"operation":"digest","text":"abc","algorithm":"sha512","hmac_key":"k"}`), host.Limits{}},
			{"base64", "compute", env("base64", "encode", `{"operation":"encode","text":"héllo wörld"}`), host.Limits{}},
			{"tool error", "compute", env("base64", "decode", `{"operation":"decode","text":"!!!"}`), host.Limits{}},
			{"out of fuel", "compute", env("hash", "digest", `{"operation":"digest","text":"abc","algorithm":"sha256"}`), host.Limits{Fuel: 50_000}},
			{"memory limit", "compute", env("hash", "digest", `{"operation":"digest","text":"abc","algorithm":"sha256"}`), host.Limits{MemoryBytes: 1 << 20}},
		}},
		{"counter", func(t *testing.T) []byte { return testkit.Go(t, "testdata/guests/counter") }, []tierItem{
			{"count", "compute", envelope(`{"operation":"count"}`), host.Limits{}},
			{"spin", "compute", envelope(`{"operation":"count","spin":1000}`), host.Limits{}},
		}},
		{"vowels", func(t *testing.T) []byte { return testkit.Extism(t, "vowels") }, []tierItem{
			{"count", "count_vowels", []byte("Hello, tiered world"), host.Limits{}},
			{"out of fuel", "count_vowels", []byte("Hello, tiered world"), host.Limits{Fuel: 1_000}},
		}},
		{"trap", func(t *testing.T) []byte { return hostile(t, "trap") }, []tierItem{
			{"trap", "compute", nil, host.Limits{}},
		}},
		{"loop", func(t *testing.T) []byte { return hostile(t, "loop") }, []tierItem{
			{"out of fuel", "compute", nil, host.Limits{Fuel: 5_000_000}},
		}},
		{"echo", func(t *testing.T) []byte { return hostile(t, "echo") }, []tierItem{
			{"echo", "compute", []byte("echo me"), host.Limits{}},
		}},
	}
	// The shared test cache keeps the optimised compiles fast;
	// InterpretFirst starts every module on the interpreter regardless.
	r := newRuntimeWith(t, host.Config{CacheDir: testkit.CacheDir()}, hosttest.Switches{InterpretFirst: true})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := r.Load(host.WithTiering(context.Background()), c.wasm(t))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			if tier := m.Tier(); tier != host.TierInterpreter {
				t.Fatalf("Tier after a tiered load = %s, want %s", tier, host.TierInterpreter)
			}
			var interpreted []tierOutcome
			for _, it := range c.items {
				interpreted = append(interpreted, callOutcome(t, m, it))
			}
			if err := m.Optimise(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tier := m.Tier(); tier != host.TierCompiled {
				t.Fatalf("Tier after Optimise = %s, want %s", tier, host.TierCompiled)
			}
			for i, it := range c.items {
				compiled := callOutcome(t, m, it)
				if !compiled.equal(interpreted[i]) {
					t.Errorf("%s:\ninterpreter %v\ncompiled    %v", it.name, interpreted[i], compiled)
				}
				// Twice: the compiled tier's pooled instance, reset, too.
				if again := callOutcome(t, m, it); !again.equal(compiled) {
					t.Errorf("%s again: %v, first %v", it.name, again, compiled)
				}
			}
			checkOutcomes(t, c.name, interpreted)
		})
	}
}

// checkOutcomes checks that the differential test's items end as meant,
// so that it compares what it says it compares.
func checkOutcomes(t *testing.T, module string, out []tierOutcome) {
	t.Helper()
	want := map[string][]string{
		"codec":   {"", "", "", "raised", host.CodeExecutionLimit, host.CodeMemoryLimit},
		"counter": {"", ""},
		"vowels":  {"", host.CodeExecutionLimit},
		"trap":    {host.CodeExecutionFailed},
		"loop":    {host.CodeExecutionLimit},
		"echo":    {""},
	}[module]
	for i, w := range want {
		got := out[i].code
		if out[i].raised {
			got = "raised"
		}
		if got != w {
			t.Errorf("%s item %d ended %q, want %q: %v", module, i, got, w, out[i])
		}
		if w == "" && len(out[i].output) == 0 {
			t.Errorf("%s item %d has no output", module, i)
		}
	}
}

// Items in flight on the interpreter tier finish there when the compiled
// tier is swapped in, and every item gives the same result: none is lost
// or failed by the swap. Run with -race.
func TestTierSwapUnderLoad(t *testing.T) {
	r := newRuntimeWith(t, host.Config{CacheDir: testkit.CacheDir()}, hosttest.Switches{InterpretFirst: true})
	m, err := r.Load(host.WithTiering(context.Background()), testkit.Go(t, "testdata/guests/counter"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	want, err := m.Call(context.Background(), "compute", envelope(`{"operation":"count","spin":100}`), host.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var mu sync.Mutex
	tiers := map[string]int{}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tier := m.Tier()
				res, err := m.Call(context.Background(), "compute", envelope(`{"operation":"count","spin":100}`), host.Limits{})
				if err != nil || !bytes.Equal(res.Output, want.Output) || res.FuelUsed != want.FuelUsed {
					errs <- fmt.Errorf("an item during the swap: %v %v, want %s with fuel %d", res, err, want.Output, want.FuelUsed)
					return
				}
				mu.Lock()
				tiers[tier]++
				mu.Unlock()
			}
		})
	}
	if err := m.Optimise(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Some items on the compiled tier, then stop.
	for {
		mu.Lock()
		n := tiers[host.TierCompiled]
		mu.Unlock()
		if n >= 8 || len(errs) > 0 {
			break
		}
		res, err := m.Call(context.Background(), "compute", envelope(`{"operation":"count","spin":100}`), host.Limits{})
		if err != nil || !bytes.Equal(res.Output, want.Output) {
			t.Fatalf("after the swap: %v %v", res, err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m.Tier() != host.TierCompiled || tiers[host.TierInterpreter] == 0 {
		t.Errorf("tier %s, items by tier %v: want items on both", m.Tier(), tiers)
	}
}

// A module whose optimised code is marked as cached loads on the compiled
// tier at once, under WithTiering; without a cache folder, or the first
// time, it starts on the interpreter.
func TestTierSkippedWhenWarm(t *testing.T) {
	dir := t.TempDir()
	wasm := hostile(t, "echo")
	r := newRuntime(t, host.Config{CacheDir: dir})
	m, err := r.Load(host.WithTiering(context.Background()), wasm)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tier() != host.TierInterpreter {
		t.Fatalf("cold: Tier = %s, want %s", m.Tier(), host.TierInterpreter)
	}
	if err := m.Optimise(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	if st := r.CacheStats(); st.CodeHits != 0 || st.CodeMisses != 1 {
		t.Errorf("cold: CacheStats = %+v, want one code miss and no hit", st)
	}
	r2 := newRuntime(t, host.Config{CacheDir: dir})
	m2, err := r2.Load(host.WithTiering(context.Background()), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close(context.Background())
	if m2.Tier() != host.TierCompiled {
		t.Fatalf("warm: Tier = %s, want %s", m2.Tier(), host.TierCompiled)
	}
	if st := r2.CacheStats(); st.CodeHits != 1 || st.CodeMisses != 0 {
		t.Errorf("warm: CacheStats = %+v, want one code hit and no miss", st)
	}
	// Without WithTiering, the compiled tier, as before.
	m3Runtime := newRuntime(t, host.Config{})
	m3, err := m3Runtime.Load(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close(context.Background())
	if m3.Tier() != host.TierCompiled {
		t.Fatalf("untiered: Tier = %s", m3.Tier())
	}
	if st := m3Runtime.CacheStats(); st != (host.CacheStats{}) {
		t.Errorf("without a cache folder: CacheStats = %+v, want none counted", st)
	}
	// Optimise after Close refuses; on the compiled tier it does nothing.
	if err := m3.Optimise(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An Optimise whose context ends before its compile does discards the
// compile: the interpreter keeps serving, and the module still works.
func TestOptimiseCancelled(t *testing.T) {
	r := newRuntime(t, host.Config{})
	m, err := r.Load(host.WithTiering(context.Background()), hostile(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Optimise(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Optimise with an ended context = %v", err)
	}
	if m.Tier() != host.TierInterpreter {
		t.Fatalf("Tier = %s", m.Tier())
	}
	res, err := m.Call(context.Background(), "compute", []byte("x"), host.Limits{})
	if err != nil || string(res.Output) != "x" {
		t.Fatalf("after a cancelled Optimise: %v %v", res, err)
	}
	m.Close(context.Background())
	if err := m.Optimise(context.Background()); !errors.Is(err, host.ErrClosed) {
		t.Fatalf("Optimise after Close = %v, want ErrClosed", err)
	}
}

// TestInterpreterBudget: the interpreter tiers serving at once stay within
// Config.MaxInterpretedBytes. A tiered load that does not fit beside them
// is compiled at once (as without tiering) and gives the same outcome; a
// tier swapped out or a module closed gives its share back, and the next
// load fits again.
func TestInterpreterBudget(t *testing.T) {
	wasm := hostile(t, "echo")
	ctx := host.WithTiering(context.Background())
	unbounded := newRuntime(t, host.Config{MaxInterpretedBytes: -1})
	m, err := unbounded.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	one := unbounded.Interpreted()
	if m.Tier() != host.TierInterpreter || one <= 0 {
		t.Fatalf("unbounded: Tier %s, Interpreted %d", m.Tier(), one)
	}
	m.Close(context.Background())
	if n := unbounded.Interpreted(); n != 0 {
		t.Fatalf("after Close: Interpreted %d", n)
	}

	r := newRuntime(t, host.Config{MaxInterpretedBytes: one})
	load := func(want string) *host.Module {
		t.Helper()
		m, err := r.Load(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(context.Background()) })
		if m.Tier() != want {
			t.Fatalf("Tier %s with %d of %d bytes interpreted, want %s", m.Tier(), r.Interpreted(), one, want)
		}
		return m
	}
	first := load(host.TierInterpreter)
	second := load(host.TierCompiled)
	item := tierItem{name: "echo", export: "compute", input: []byte("budget")}
	if a, b := callOutcome(t, first, item), callOutcome(t, second, item); !a.equal(b) {
		t.Errorf("interpreted %v, compiled at once %v", a, b)
	}
	if err := first.Optimise(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := r.Interpreted(); n != 0 {
		t.Fatalf("after the swap: Interpreted %d", n)
	}
	load(host.TierInterpreter)
}

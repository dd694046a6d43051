package guesttest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

// The compute path measured through the real host: modules built with
// this SDK, pre-initialised, one fresh instance per item.
//
//	go test ./internal/guesttest -run '^$' -bench WASM -benchtime 50x
//
// Each benchmark reports the median call time (µs-call/op: the compute
// export alone), the median instantiation time (µs-inst/op) and the fuel
// of one item (fuel/op). The modules are the bundled codec package (tool
// code included) and internal/guesttest/testdata/echo, whose service
// returns its text:
// what it costs is the SDK's own work.
//
// TOOLHOST_BENCH_FRESH=1 gives every item a new instance from the
// pre-initialised image instead of a pooled instance reset to it.
//
// TOOLHOST_BENCH_BASELINE=dir measures the same items on dir/codec.wasm
// and dir/echo.wasm too (sdk=baseline: built with another SDK, say the
// previous one), in the same runtime, so that the two compare on one host
// build: fuel especially, whose cost model is the host's.

// benchModule is a module and the items measured on it.
type benchModule struct {
	name  string // the module's file name in a baseline directory
	pkg   string // its package, for testkit.GoPath
	items []benchItem
}

type benchItem struct {
	name, code, params string
}

func benchModules() []benchModule {
	const unit = "The quick brown fox jumps over the lazy dog; "
	text := func(n int) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }
	const para = "« Le cœur a ses raisons que la raison ne connaît point. » — Pascal, \"Pensées\", 1670.\n" +
		"Ünïcödé text: naïve café, Straße, smörgåsbord, 東京, Москва, 😀.\n\tIndented line.\n"
	prose := strings.Repeat(para, 128<<10/len(para))
	return []benchModule{
		{"codec.wasm", "plugins-src/codec", []benchItem{
			{"hash_tiny", "hash", `{"operation":"digest","text":"abc","algorithm":"sha256","encoding":"hex"}`},
			{"base64_encode_1KiB", "base64", `{"operation":"encode","text":` + quote(text(1<<10)) + `}`},
			{"base64_encode_96KiB", "base64", `{"operation":"encode","text":` + quote(text(96<<10)) + `}`},
			{"base64_decode_128KiB", "base64", `{"operation":"decode","text":` + quote(base64.StdEncoding.EncodeToString([]byte(text(96<<10)))) + `}`},
			{"hash_127KiB", "hash", `{"operation":"digest","text":` + quote(text(127<<10)) + `,"algorithm":"sha256"}`},
		}},
		{"echo.wasm", "internal/guesttest/testdata/echo", []benchItem{
			{"echo_tiny", "echo", `{"operation":"echo","text":"abc"}`},
			{"echo_128KiB_ascii", "echo", `{"operation":"echo","text":` + quote(text(128<<10)) + `}`},
			{"echo_128KiB_prose", "echo", `{"operation":"echo","text":` + quote(prose) + `}`},
		}},
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func BenchmarkWASMCompute(b *testing.B) {
	ctx := context.Background()
	// TOOLHOST_BENCH_FRESH=1: a new instance per item from the image
	// (hosttest.Switches.FreshInstances) instead of a pooled one reset to it.
	rt, err := hosttest.NewRuntime(ctx, host.Config{}, hosttest.Switches{FreshInstances: os.Getenv("TOOLHOST_BENCH_FRESH") == "1"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	baseline := os.Getenv("TOOLHOST_BENCH_BASELINE")
	for _, sdk := range []string{"current", "baseline"} {
		if sdk == "baseline" && baseline == "" {
			continue
		}
		b.Run("sdk="+sdk, func(b *testing.B) {
			for _, mod := range benchModules() {
				path := filepath.Join(baseline, mod.name)
				if sdk == "current" {
					path = testkit.GoPath(b, mod.pkg)
				}
				wasm, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				m, err := rt.Load(ctx, wasm)
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close(ctx)
				if ok, err := m.Preinitialised(); !ok {
					b.Fatalf("%s not pre-initialised: %v", path, err)
				}
				for _, item := range mod.items {
					b.Run(item.name, func(b *testing.B) { benchItemOn(b, m, item) })
				}
			}
		})
	}
}

func benchItemOn(b *testing.B, m *host.Module, item benchItem) {
	var op struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal([]byte(item.params), &op); err != nil {
		b.Fatal(err)
	}
	// The host's canonical form: members sorted, so tool_code comes last.
	envelope := []byte(`{"operation":"` + op.Operation + `","parameters":` + item.params + `,"tool_code":"` + item.code + `"}`)
	ctx := context.Background()
	var calls, inits []time.Duration
	var fuel int64
	for b.Loop() {
		res, err := m.Call(ctx, "compute", envelope, host.Limits{})
		if err != nil {
			b.Fatalf("%s: %v", item.name, err)
		}
		calls = append(calls, res.CallTime)
		inits = append(inits, res.InstantiateTime)
		fuel = res.FuelUsed
	}
	b.ReportMetric(float64(median(calls).Nanoseconds())/1e3, "µs-call/op")
	b.ReportMetric(float64(median(inits).Nanoseconds())/1e3, "µs-inst/op")
	b.ReportMetric(float64(fuel), "fuel/op")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

package instrument

import (
	"reflect"
	"testing"
)

var modes = []struct {
	name string
	mode int
}{{"auto", modeAuto}, {"global", modeGlobal}, {"local", modeLocal}}

// outcome is what a metered call leaves behind.
type outcome struct {
	results []uint64
	trapped bool
	fuel    int64 // the global after the call
}

// TestModesAgree checks that both metering modes charge the same fuel at the
// same points: the same results, the same fuel after a return and after a
// fuel trap.
func TestModesAgree(t *testing.T) {
	calls := []struct {
		file   string
		fn     string
		args   []uint64
		budget int64
	}{
		{"loop.wasm", "sum", []uint64{1000}, plenty},
		{"loop.wasm", "sum", []uint64{1000}, 5000},
		{"loop.wasm", "fib", []uint64{15}, plenty},
		{"loop.wasm", "fib", []uint64{15}, 3000},
		{"loop.wasm", "indirect", []uint64{100}, plenty},
		{"loop.wasm", "indirect", []uint64{100}, 1000},
		{"loop.wasm", "nested", []uint64{30, 40}, plenty},
		{"loop.wasm", "nested", []uint64{30, 40}, 10000},
		{"loop.wasm", "spin", nil, 12345},
		{"loop.wasm", "bump", nil, plenty},
		{"features.wasm", "bulk", []uint64{300}, plenty},
		{"features.wasm", "bulk", []uint64{3000}, 60},
		{"features.wasm", "swap", []uint64{1, 2}, plenty},
		{"features.wasm", "refs", nil, plenty},
		{"features.wasm", "fill", []uint64{65536}, plenty},
		{"features.wasm", "fill", []uint64{65536}, 1000},
		{"segments.wasm", "clamp", []uint64{500}, plenty},
		{"segments.wasm", "clamp", []uint64{500}, 5},
		{"segments.wasm", "chain", []uint64{15}, plenty},
		{"segments.wasm", "chain", []uint64{15}, 9},
		{"segments.wasm", "grow", []uint64{0}, 1005},
		{"segments.wasm", "count", []uint64{100}, 500},
		{"segments.wasm", "spin", nil, 999},
	}
	for _, c := range calls {
		var first outcome
		for i, md := range modes {
			out, _, err := rewrite(readTestdata(t, c.file), Options{}, md.mode)
			if err != nil {
				t.Fatal(err)
			}
			in := instantiate(t, out)
			res, _, err := in.metered(c.budget, c.fn, c.args...)
			got := outcome{results: res, trapped: err != nil, fuel: in.fuel()}
			if i == 0 {
				first = got
				continue
			}
			if !reflect.DeepEqual(got, first) {
				t.Errorf("%s %s%v budget %d: %s mode %+v, auto %+v", c.file, c.fn, c.args, c.budget, md.name, got, first)
			}
		}
	}
}

// TestGoModuleModesAgree runs the Go runtime's _initialize (calls, loops,
// memory.grow, bulk memory) and the exported loops in both modes.
func TestGoModuleModesAgree(t *testing.T) {
	orig := goLoopModule(t)
	type run struct {
		init int64
		used []int64
	}
	var first run
	for i, md := range modes {
		out, _, err := rewrite(orig, Options{}, md.mode)
		if err != nil {
			t.Fatal(err)
		}
		in, init := goInstance(t, out, true)
		got := run{init: init}
		for _, c := range []struct {
			fn string
			n  uint64
		}{{"loop", 1000}, {"add", 1000}, {"hash", 3}} {
			_, used, err := in.metered(plenty, c.fn, c.n)
			if err != nil {
				t.Fatalf("%s mode: %s(%d): %v", md.name, c.fn, c.n, err)
			}
			got.used = append(got.used, used)
		}
		if i == 0 {
			first = got
			t.Logf("_initialize %d fuel; loop(1000), add(1000), hash(3): %v", got.init, got.used)
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Errorf("%s mode %+v, auto %+v", md.name, got, first)
		}
	}
}

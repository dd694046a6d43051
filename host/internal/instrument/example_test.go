package instrument_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/toolhost/toolhost/host/internal/instrument"
	"github.com/toolhost/toolhost/internal/testkit"
)

// The host's side of fuel: rewrite, compile, set the budget before a call,
// read the global after it.
func ExampleRewrite() {
	path, err := testkit.CompileWAT("testdata/features.wat")
	if err != nil {
		log.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	out, info, err := instrument.Rewrite(wasm, instrument.Options{MaxMemoryPages: 16})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("memory: %d pages, at most %d (declared max: %v)\n",
		info.Memory.Limits.Min, info.Memory.Limits.Max, info.Memory.Declared.HasMax)

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		log.Fatal(err)
	}
	fuel := mod.ExportedGlobal(instrument.FuelGlobal).(api.MutableGlobal)
	fill := mod.ExportedFunction("fill")

	for _, budget := range []int64{1000, 100} {
		fuel.Set(uint64(budget))
		_, err := fill.Call(ctx, 6400) // 3 instructions, memory.fill (10 + 6400/64)
		left := int64(fuel.Get())
		switch {
		case err == nil:
			fmt.Printf("budget %d: returned, used %d\n", budget, budget-left)
		case left < 0:
			fmt.Printf("budget %d: out of fuel\n", budget)
		default:
			fmt.Printf("budget %d: trapped: %v\n", budget, err)
		}
	}
	// Output:
	// memory: 1 pages, at most 16 (declared max: false)
	// budget 1000: returned, used 113
	// budget 100: out of fuel
}

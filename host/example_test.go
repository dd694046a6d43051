package host_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit"
)

// Example runs a tool module as an embedder or a tool author's test does:
// NewRuntime, Load, Call. The module is testdata/guests/counter, a tool
// written with the guest SDK and built as any tool is:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o counter.wasm ./testdata/guests/counter
//
// Its compute counts its calls in a package variable, yet both calls
// answer 1: every call starts from the module's pristine state.
func Example() {
	ctx := context.Background()
	rt, err := host.NewRuntime(ctx, host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	wasm, err := os.ReadFile(counterModule())
	if err != nil {
		log.Fatal(err)
	}
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		log.Fatal(err) // a refusal wraps host.ErrModule, ErrImport or ErrExport
	}
	defer m.Close(ctx)

	// compute's input is the item's envelope (docs/guest-abi.md); the zero
	// Limits are the defaults (memory, fuel, input and output bytes).
	item := []byte(`{"operation":"count","parameters":{"operation":"count"},"tool_code":"counter"}`)
	for range 2 {
		res, err := m.Call(ctx, "compute", item, host.Limits{})
		if err != nil {
			log.Fatal(err) // a *host.Error with a Code
		}
		fmt.Println(string(res.Output))
	}
	// Output:
	// {"calls":1,"primes":1229,"echo":"COUNT"}
	// {"calls":1,"primes":1229,"echo":"COUNT"}
}

// counterModule builds testdata/guests/counter for wasip1, once per test
// binary, and returns the module's path.
func counterModule() string {
	path, err := testkit.BuildGo("testdata/guests/counter")
	if err != nil {
		log.Fatal(err)
	}
	return path
}

// Command counter is a test guest: its package state changes on every
// compute, so a reused instance would answer differently. Built by the
// host's tests with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
package main

import (
	"strings"

	"github.com/toolhost/toolhost/guest"
)

// calls counts computes in this instance; primes is built by init, so it is
// part of the pre-initialised image.
var (
	calls  int
	primes = sieve(10000)
)

func sieve(n int) []int {
	composite := make([]bool, n)
	var out []int
	for i := 2; i < n; i++ {
		if !composite[i] {
			out = append(out, i)
			for j := i * i; j < n; j += i {
				composite[j] = true
			}
		}
	}
	return out
}

type input struct {
	Operation string `json:"operation"`
	Spin      *int   `json:"spin,omitempty" minimum:"0" doc:"checkpoints to pass before answering"`
}

type output struct {
	Calls  int    `json:"calls"`
	Primes int    `json:"primes"`
	Echo   string `json:"echo"`
}

func init() {
	texts := map[string]guest.Text{}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		texts[lang] = guest.Text{Name: "Counter", Description: "Counts its own calls."}
	}
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[input, output]{
			Code: "counter", Name: "Counter", Description: "Counts its own calls.",
			Texts: texts, Category: "test", IconKey: "counter",
			UI:            guest.UI{Kind: "custom", ComponentKey: "counter", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/counter", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "count", Deterministic: true}},
			Compute: func(ctx *guest.Context, in input) (output, error) {
				calls++
				if in.Spin != nil {
					for i := 0; ; i++ {
						if err := ctx.Checkpoint(); err != nil {
							return output{}, err
						}
						if *in.Spin > 0 && i >= *in.Spin {
							break
						}
					}
				}
				return output{Calls: calls, Primes: len(primes), Echo: strings.ToUpper(ctx.Operation())}, nil
			},
		}},
	})
}

func main() {}

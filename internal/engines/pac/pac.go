// Package pac is the pac_allocator native tool package: the periodic
// investment plan (PAC, "piano di accumulo") of the seed contract. Its one
// service, pac_allocator, has two operations:
//
//   - value: the market values and weights of holdings and cash, exactly,
//     in decimal arithmetic;
//   - plan: buy orders that invest a contribution and the cash toward target
//     weights, under lot sizes, minimum orders, fees and a maximum number of
//     orders, without selling. It is a MILP solved by the CBC solver (the
//     engine "cbc") inside the item's claimed engine window; every reported
//     amount is recomputed exactly from the solver's integer lot counts.
//
// Domain answers — needs_input, invalid, infeasible, no_solution — are
// result documents, platform successes; only a failure of the platform or
// of the engine itself is an error. docs/tools/pac_allocator.md is the
// reference of the operations, the model and the statuses.
package pac

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Identity of the package and its service.
const (
	// Name is the native package's name and its service's tool code.
	Name = "pac_allocator"
	// Engine is the solver executable, looked up on PATH.
	Engine = "cbc"

	contractVersion       = "1.0.0"
	implementationVersion = "1.0.0"
)

// The service's tools-platform fields (ADR-027): a sync tool, answered
// inline, open to anonymous callers at the lowest allowance.
const (
	// QuotaClass is the quota class of the service: solver work.
	QuotaClass = "tools-solve"
	// Cost is the weight of one run in QuotaClass: a plan may hold the
	// solver for 30 s, several times a plain transform's work.
	Cost = 5
)

// Operation names.
const (
	OpValue = "value"
	OpPlan  = "plan"
)

// Package returns the pac_allocator native package. It panics if the
// declaration derived from the Go types is refused, which a test rules out.
func Package() *native.Package {
	return &native.Package{
		Name:        Name,
		Declaration: declaration(),
		Engines:     []string{Engine},
		Compute:     Compute,
	}
}

// service is the declaration of the one service. Its Compute only marks it
// as computed in a worker (native.InWorker); Compute below does the work.
func service() *guest.Service[Input, Output] {
	return &guest.Service[Input, Output]{
		Code:           Name,
		Name:           "PAC allocator",
		Description:    "Values a portfolio and plans the buy orders of a periodic investment toward target weights.",
		NameKey:        "tools.pacAllocator.name",
		DescriptionKey: "tools.pacAllocator.description",
		Texts: map[string]guest.Text{
			"en": {Name: "PAC allocator", Description: "Values a portfolio and plans the buy orders of a periodic investment toward target weights."},
			"it": {Name: "Allocatore PAC", Description: "Valorizza un portafoglio e pianifica gli ordini di acquisto di un piano di accumulo verso i pesi obiettivo."},
			"fr": {Name: "Allocateur PAC", Description: "Valorise un portefeuille et planifie les ordres d'achat d'un investissement programmé vers les pondérations cibles."},
			"es": {Name: "Asignador PAC", Description: "Valora una cartera y planifica las órdenes de compra de una inversión periódica hacia los pesos objetivo."},
		},
		Category:      "finance",
		IconKey:       "pie_chart",
		UI:            guest.UI{Kind: "custom", ComponentKey: "pac-allocator", Version: "1.0.0"},
		Documentation: guest.Documentation{Path: "tools/pac_allocator", Version: "1.0.0"},
		Operations: []guest.Operation{
			{
				// value does no engine work: small budgets. The server
				// bound is 2 + 5 + 3 + 2 + 2 = 14 s ≤ 15 s.
				Name: OpValue, Deterministic: true,
				EngineTimeoutMS: 1000, SoftTimeoutMS: 2000, HardTimeoutMS: 3000,
				QueueTimeoutMS: 5000, CleanupTimeoutMS: 2000,
				RequestTimeoutMS: 15000, ClientTimeoutMS: 20000,
				MemoryLimitBytes: 256 << 20,
			},
			{
				// plan: the seed's declaration, the platform's time
				// budgets. Not deterministic: a solve cut by its time
				// limit depends on the machine's speed.
				Name: OpPlan, Deterministic: false,
				MaxParameterBytes: 256 << 10, MaxResultBytes: 512 << 10,
				EngineTimeoutMS: 30000, SoftTimeoutMS: 44000, HardTimeoutMS: 45000,
				QueueTimeoutMS: 5000, CleanupTimeoutMS: 5000,
				RequestTimeoutMS: 59000, ClientTimeoutMS: 65000,
			},
		},
		Platform: &guest.Platform{Execution: "sync", QuotaClass: QuotaClass, Cost: Cost},
		Compute:  native.InWorker[Input, Output],
	}
}

// declaration is the package declaration, derived once.
var declaration = sync.OnceValue(func() []byte {
	doc, err := guest.Package{
		ContractVersion:       contractVersion,
		ImplementationVersion: implementationVersion,
		Services:              []guest.Declaration{service()},
	}.Declaration()
	if err != nil {
		panic("pac: the declaration is refused: " + err.Error())
	}
	return doc
})

// Compute computes one item of the pac_allocator service. The parameters
// have passed the input schema; Compute decodes them strictly into Input
// all the same. A domain answer is a result document; an error is a
// checkpoint's execution_limit, invalid_parameters for a call that does
// not match the declaration, or a failure of the engine (execution_failed).
// Compute keeps no state between calls and is safe for concurrent use with
// distinct contexts; a plan item runs one cbc process in a temporary
// directory it removes before returning.
func Compute(ctx *native.Context, call native.Call) ([]byte, error) {
	if call.ToolCode != Name || (call.Operation != OpValue && call.Operation != OpPlan) {
		return nil, toolerr.Raised(toolerr.InvalidParameters, false, toolerr.NewIssue("unknown_operation", "operation"))
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(call.Parameters))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() {
		return nil, toolerr.Raised(toolerr.InvalidParameters, false)
	}
	if in.Operation != call.Operation {
		return nil, toolerr.Raised(toolerr.InvalidParameters, false, toolerr.NewIssue("operation_mismatch", "operation"))
	}
	if err := ctx.Checkpoint(); err != nil {
		return nil, err
	}
	var out Output
	var err error
	switch call.Operation {
	case OpValue:
		out = value(&in)
	case OpPlan:
		out, err = plan(ctx, &in)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Checkpoint(); err != nil {
		return nil, err
	}
	// Slices are never nil, so none is written null.
	return native.EncodeResult(out, 0)
}

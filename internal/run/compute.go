// The seed-000 compute route's use case: a batch of items, each checked
// and pinned in one snapshot, admitted whole before any runs, then run
// under the spec's per-principal batch limits.

package run

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// BatchOutcome is a compute batch that ran: one outcome per item, in
// submission order. It is a plain value; the seed-000 compute answer
// written from it is the routes' (internal/api, answer_seed_batch.go).
type BatchOutcome struct {
	// RequestID is the caller's request_id.
	RequestID string
	Items     []ItemOutcome
	// Succeeded and Failed count platform outcomes, not domain readiness:
	// a tool's valid "infeasible" answer is a success.
	Succeeded, Failed int
	// Processing runs from the request's start until every item had an
	// outcome; nil when the batch was given no start.
	Processing *time.Duration
}

// ItemOutcome is one compute item's outcome: its pins as the caller sent
// them, and what became of it. A success carries Result; a failure
// carries Error (without the tool's own message: dropMessage), and
// ExecutionID only when the item's job was started.
type ItemOutcome struct {
	CorrelationID, ToolCode, ContractVersion, ImplementationVersion, SchemaFingerprint string

	Succeeded   bool
	ExecutionID string
	Result      json.RawMessage
	Error       *toolerr.Error

	Metrics   Metrics
	Resources Resources
}

// Metrics are an item's measured durations. A nil one was not observed,
// never an invented zero. They can overlap: Execution contains Startup
// and the engine's phases (executor.Metrics says what each measures, and
// converts to Metrics as it is).
type Metrics struct {
	QueueWait                                                          *time.Duration
	Startup, InputValidation, Compute, OutputValidation, Serialization *time.Duration
	Execution, Cleanup, Total                                          *time.Duration
}

// Resources are what an item's job reported: its memory enforcement,
// limit and peak (nil when no sandbox was started or none was reported)
// and the WASM fuel it used (nil for a native job).
type Resources struct {
	Memory   *engine.Memory
	FuelUsed *int64
}

// itemOutcome is the outcome of it, which the executor answered with r.
func itemOutcome(it *executor.Item, r *executor.ItemResult) ItemOutcome {
	return ItemOutcome{
		CorrelationID: it.CorrelationID, ToolCode: it.ToolCode, ContractVersion: it.ContractVersion,
		ImplementationVersion: it.ImplementationVersion, SchemaFingerprint: it.SchemaFingerprint,
		Succeeded: r.Succeeded, ExecutionID: r.ExecutionID, Result: r.Result, Error: r.Error,
		Metrics: Metrics(r.Metrics), Resources: Resources(r.Resources),
	}
}

// ComputeAnswer is a batch that ran: its outcome and the rate-limit
// fields of its admission.
type ComputeAnswer struct {
	Result *BatchOutcome
	Limits RateLimits
}

// Compute is POST /tools/compute for o: the items prepared in one
// snapshot (PrepareBatch; Loading while a code may still be loading),
// the batch admitted whole (AdmitBatch), then run (Batch) under the
// per-principal limits keyed by the caller, as requestID. Every item keeps
// its place and its own outcome; a refusal of the batch is a *Refusal.
func (a *App) Compute(ctx context.Context, o Origin, requestID string, in []BatchItem, start time.Time) (*ComputeAnswer, error) {
	snap := a.cfg.Snapshot()
	items := a.PrepareBatch(snap, in)
	if err := BatchLoading(snap, items); err != nil {
		return nil, err
	}
	ad, err := a.AdmitBatch(ctx, o, snap, items)
	if err != nil {
		return nil, err
	}
	defer ad.Release()
	res, err := a.Batch(ctx, Origin{Caller: o.Caller, RequestID: requestID}, o.Caller.Key, items, start)
	if err != nil {
		return nil, withLimits(err, ad.Limits)
	}
	return &ComputeAnswer{Result: res, Limits: ad.Limits}, nil
}

// batchLimits are the seed-000 contract's per-principal batch limits of
// one process: at most max_concurrent_batches_per_principal batches of a
// principal hold items in the executor at once, with at most
// max_pending_items_per_principal items between them. A batch takes its
// slot and its items before the executor admits it, and gives each item
// back when the executor lets go of it (executor.Batch.Settled): before
// its answer, or later for an item still running when the client left;
// the slot goes with the last. The zero value is ready to use; it is safe
// for concurrent use.
type batchLimits struct {
	mu   sync.Mutex
	load map[string]*principalLoad // principals with items held; none empty
}

// principalLoad is one principal's batches and items in the executor.
type principalLoad struct {
	batches, pending int
}

// take takes a batch slot and n items for principal, or reports false
// when the principal's limits in p refuse them (queue_full). Each item is
// given back by settle.
func (l *batchLimits) take(p policy.Platform, principal string, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ld := l.load[principal]
	if ld == nil {
		ld = &principalLoad{}
	}
	if ld.batches >= p.MaxConcurrentBatchesPerPrincipal || ld.pending+n > p.MaxPendingItemsPerPrincipal {
		return false
	}
	if l.load == nil {
		l.load = make(map[string]*principalLoad)
	}
	l.load[principal] = ld
	ld.batches++
	ld.pending += n
	return true
}

// settle gives back one item of a batch of principal that take took, and
// the batch's slot with its last item (executor.Batch.Settled's last: the
// batch's other items were given back before).
func (l *batchLimits) settle(principal string, last bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ld := l.load[principal]
	ld.pending--
	if last {
		ld.batches--
	}
	if ld.batches == 0 && ld.pending == 0 {
		delete(l.load, principal)
	}
}

// batchLimits returns a's per-principal batch limits.
func (a *App) batchLimits() *batchLimits { return &a.batches }

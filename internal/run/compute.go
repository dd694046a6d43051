// The seed-000 compute route's use case: a batch of items, each checked
// and pinned in one snapshot, admitted whole before any runs, then run
// under the spec's per-principal batch limits.

package run

import (
	"context"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
)

// BatchResult is a compute batch's outcome, one result per item in
// submission order.
type BatchResult = executor.BatchResult

// ComputeAnswer is a batch that ran: its outcome and the rate-limit
// fields of its admission.
type ComputeAnswer struct {
	Result *BatchResult
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
// back when the executor lets go of it (executor.Batch.Settled): after
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
// when the principal's limits in p refuse them (queue_full). The returned
// settle gives one item back; it must be called exactly n times, as
// executor.Batch.Settled is.
func (l *batchLimits) take(p policy.Platform, principal string, n int) (settle func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ld := l.load[principal]
	if ld == nil {
		ld = &principalLoad{}
	}
	if ld.batches >= p.MaxConcurrentBatchesPerPrincipal || ld.pending+n > p.MaxPendingItemsPerPrincipal {
		return nil, false
	}
	if l.load == nil {
		l.load = make(map[string]*principalLoad)
	}
	l.load[principal] = ld
	ld.batches++
	ld.pending += n
	left := n // guarded by l.mu
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		ld.pending--
		if left--; left > 0 {
			return
		}
		ld.batches--
		if ld.batches == 0 && ld.pending == 0 {
			delete(l.load, principal)
		}
	}, true
}

// limitsOf holds each App's batchLimits, keyed weakly so that an App's
// entry goes with it. It stands in for a field of App, declared in
// app.go, which this change does not own: there, the field
// `batches batchLimits` and `return &a.batches` below replace it.
var limitsOf sync.Map // weak.Pointer[App] → *batchLimits

// batchLimits returns a's per-principal batch limits.
func (a *App) batchLimits() *batchLimits {
	key := weak.Make(a)
	if l, ok := limitsOf.Load(key); ok {
		return l.(*batchLimits)
	}
	l, loaded := limitsOf.LoadOrStore(key, new(batchLimits))
	if !loaded {
		runtime.AddCleanup(a, func(key weak.Pointer[App]) { limitsOf.Delete(key) }, key)
	}
	return l.(*batchLimits)
}

// The seed-000 compute route's use case: a batch of items, each checked
// and pinned in one snapshot, admitted whole before any runs, then run
// under the spec's per-principal batch limits.

package run

import (
	"context"
	"time"

	"github.com/toolhost/toolhost/internal/executor"
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

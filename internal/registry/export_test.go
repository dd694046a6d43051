package registry

import (
	"context"
	"time"
)

// HoldRuns makes every WASM item, once counted on its module, call hold
// before it starts. It returns the function that removes the hook.
func HoldRuns(hold func()) (restore func()) {
	runHook.Store(&hold)
	return func() { runHook.Store(nil) }
}

// OpenModules counts the modules whose Tool is not closed yet.
func (r *Registry) OpenModules() int {
	r.modMu.Lock()
	defer r.modMu.Unlock()
	return r.open
}

// ScanOnce is one scan of the live folder, without waiting for files being
// written, published when anything changed; it waits for the loads it
// started. It returns when the earliest pending file will have settled.
func (r *Registry) ScanOnce(ctx context.Context) (time.Time, error) { return r.rescan(ctx, -1) }

package executor

import (
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// BatchResult is an admitted batch's outcome: one result per item, in
// submission order, whatever order the items finished in.
type BatchResult struct {
	Results []ItemResult
}

// ItemResult is the outcome of one item, a plain value: how a surface
// answers it is the surface's business. A success carries Result; a
// failure carries Error, and ExecutionID only when the item's job was
// started.
type ItemResult struct {
	// Succeeded is a platform outcome, not domain readiness: a tool's
	// valid "infeasible" answer is a success.
	Succeeded   bool
	ExecutionID string
	// Result is a success's result document, valid JSON within the
	// operation's max_result_bytes, as the engine returned it.
	Result []byte
	// Error is a failure's error: the executor's refusal, or the engine's
	// error copied as it is (a tool's own keeps its code, flag and
	// message).
	Error *toolerr.Error

	Metrics   Metrics
	Resources Resources
}

// Metrics are an item's measured durations. A nil one was not observed,
// never an invented zero. They can overlap: Execution contains Startup
// and the engine's phases.
type Metrics struct {
	// QueueWait runs from the batch's admission to lane acquisition.
	QueueWait *time.Duration
	// Startup, InputValidation, Compute, OutputValidation and
	// Serialization are the engine's measured phases; InputValidation is
	// the caller's check (Item.InputValidation) when the engine measured
	// none.
	Startup, InputValidation, Compute, OutputValidation, Serialization *time.Duration
	// Execution runs from lane acquisition until cleanup begins (so it
	// holds startup and the sandbox's phases). When the engine did not
	// report its cleanup, it runs until the engine's Run returned.
	Execution *time.Duration
	// Cleanup is the engine's confirmed teardown (engine.Phases.Cleanup),
	// nil when it did not report one or the cleanup was not confirmed.
	Cleanup *time.Duration
	// Total runs from the batch's admission to the item's outcome.
	Total *time.Duration
}

// Resources are what a started job reported about its resources.
type Resources struct {
	// Memory is the job's memory enforcement, limit and peak; nil when no
	// sandbox was started or the engine reported none.
	Memory *engine.Memory
	// FuelUsed is the WASM fuel consumed; nil for native jobs.
	FuelUsed *int64
}

// PoolSnapshot describes the executor of this process at one instant. It
// is diagnostics, not a guarantee: the counts move as soon as it is taken.
type PoolSnapshot struct {
	// Available is false once Shutdown began or every lane is quarantined.
	Available bool `json:"available"`
	// Lanes is the configured number of lanes; Active of them run a job,
	// Degraded are quarantined after an unconfirmed cleanup.
	Lanes    int `json:"lanes"`
	Active   int `json:"active"`
	Degraded int `json:"degraded"`
	// Queued items wait for a lane.
	Queued int `json:"queued"`
	// Pending items hold admission credit: admitted and not yet finished.
	Pending int `json:"pending"`
	// Waiting batches wait for that credit ([Batch.Wait]): not admitted
	// yet, not counted in Pending.
	Waiting int `json:"waiting"`
	// Completed counts every admitted item that reached a terminal state,
	// cancellation included; Failed is the subset without a platform
	// success. Both start at zero with the executor.
	Completed uint64 `json:"completed"`
	Failed    uint64 `json:"failed"`

	Resources PoolResources `json:"resources"`
}

// PoolResources are the pool's memory accounting, in bytes.
type PoolResources struct {
	// MemoryCapacityBytes is lanes × the platform's per-job memory limit.
	MemoryCapacityBytes int64 `json:"memory_capacity_bytes"`
	// MemoryReservedBytes sums the memory limits of the jobs the executor
	// tracks: running jobs and jobs whose cleanup was not confirmed.
	MemoryReservedBytes int64 `json:"memory_reserved_bytes"`
}

// durations holds the durations measured of one item: its metrics point
// into one allocation rather than one each. An item has at most nine.
type durations struct {
	v [9]time.Duration
	n int
}

// put returns d from the arena (from the heap once it is full).
func (a *durations) put(d time.Duration) *time.Duration {
	if a.n == len(a.v) {
		v := d // on the heap only here
		return &v
	}
	p := &a.v[a.n]
	a.n++
	*p = d
	return p
}

// phase is a copy of a measured phase (one the engine reported, say)
// from the arena, or nil when it was not measured.
func (a *durations) phase(d *time.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return a.put(*d)
}

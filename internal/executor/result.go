package executor

import (
	"encoding/json"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The two values of [ItemResult.Status].
const (
	StatusSuccess = "success"
	StatusError   = "error"
)

// BatchResult is the answer to one admitted batch: one result per item, in
// submission order, whatever order the items finished in.
type BatchResult struct {
	RequestID string       `json:"request_id"`
	Results   []ItemResult `json:"results"`
	// SuccessCount and FailedCount count platform outcomes, not domain
	// readiness: a tool's valid "infeasible" answer is a success.
	SuccessCount int `json:"success_count"`
	FailedCount  int `json:"failed_count"`
	// ServerProcessingMS runs from Batch.Start until every item had an
	// outcome; null when the batch carried no Start.
	ServerProcessingMS *float64 `json:"server_processing_ms"`
}

// ItemResult is the outcome of one item. Status "success" carries Result
// and ExecutionID; "error" carries Error, and ExecutionID only when the
// item's job was started. The identity fields are the item's own pins,
// copied.
type ItemResult struct {
	CorrelationID         string `json:"correlation_id"`
	ToolCode              string `json:"tool_code"`
	ContractVersion       string `json:"contract_version"`
	ImplementationVersion string `json:"implementation_version"`
	SchemaFingerprint     string `json:"schema_fingerprint"`

	Status      string          `json:"status"`
	ExecutionID string          `json:"execution_id,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *toolerr.Error  `json:"error,omitempty"`

	Metrics   Metrics   `json:"metrics"`
	Resources Resources `json:"resources"`
}

// Metrics are an item's measured durations in milliseconds. A nil field
// was not observed and encodes as null, never as an invented zero. Phases
// can overlap: execution_ms contains startup_ms and the engine's phases.
type Metrics struct {
	// QueueWaitMS runs from the batch's admission to lane acquisition.
	QueueWaitMS *float64 `json:"queue_wait_ms"`
	// StartupMS, InputValidationMS, ComputeMS, OutputValidationMS and
	// SerializationMS are the engine's measured phases.
	StartupMS          *float64 `json:"startup_ms"`
	InputValidationMS  *float64 `json:"input_validation_ms"`
	ComputeMS          *float64 `json:"compute_ms"`
	OutputValidationMS *float64 `json:"output_validation_ms"`
	SerializationMS    *float64 `json:"serialization_ms"`
	// ExecutionMS runs from lane acquisition until cleanup begins (so it
	// holds startup and the sandbox's phases). When the engine did not
	// report its cleanup, it runs until the engine's Run returned.
	ExecutionMS *float64 `json:"execution_ms"`
	// CleanupMS is the engine's confirmed teardown (engine.Phases.Cleanup),
	// null when it did not report one or the cleanup was not confirmed.
	CleanupMS *float64 `json:"cleanup_ms"`
	// TotalMS runs from the batch's admission to the item's outcome.
	TotalMS *float64 `json:"total_ms"`
}

// Resources are what a started job reported about its resources.
type Resources struct {
	// Memory is the job's memory enforcement, limit and peak; null when no
	// sandbox was started or the engine reported none.
	Memory *engine.Memory `json:"memory"`
	// FuelUsed is the WASM fuel consumed; omitted for native jobs.
	FuelUsed *int64 `json:"fuel_used,omitempty"`
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

// millis returns d in float milliseconds.
func millis(d time.Duration) *float64 {
	ms := float64(d) / float64(time.Millisecond)
	return &ms
}

// msArena holds the measured durations of one item: its metrics point
// into one allocation rather than one each. An item has at most nine.
type msArena struct {
	v [9]float64
	n int
}

// millis is [millis] from the arena (from the heap once it is full).
func (a *msArena) millis(d time.Duration) *float64 {
	if a.n == len(a.v) {
		return millis(d)
	}
	p := &a.v[a.n]
	a.n++
	*p = float64(d) / float64(time.Millisecond)
	return p
}

// phase is [phase] from the arena.
func (a *msArena) phase(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	return a.millis(*d)
}

// phase returns a measured engine phase in milliseconds, or nil.
func phase(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	return millis(*d)
}

// Package executor is the per-process executor of compute batches: it
// admits a batch whole or not at all, checks each item against the live
// registry snapshot, queues items for a fixed number of lanes and runs
// each through its service's [engine.Runner] under absolute deadlines. It
// knows nothing of WASM or worker processes: every engine is a Runner.
//
// # Admission
//
// [Executor.Compute] decides admission once per batch, before any item
// runs, under one lock, on the process's capacity alone. A batch is
// refused whole with queue_full (retryable) when it holds no item or when
// its items would take the process past max_pending_items_per_process.
// It is refused with service_unavailable after [Executor.Shutdown], when
// every lane is quarantined, or before a registry snapshot is published.
// A refused batch runs nothing. Who asks is not the executor's concern:
// the seed-000 contract's batch limits (max_batch_items, and the
// per-principal max_concurrent_batches_per_principal and
// max_pending_items_per_principal) are the compute route's, kept by
// package run, which learns when the executor lets go of each item
// ([Batch.Settled]).
//
// A batch with [Batch.Wait] that finds the process's pending items full is
// not refused: it waits, in arrival order, until credit freed by ending
// items is handed to it (a batch is admitted under the lock that releases
// the credit, so no later arrival overtakes it), and gives up with
// queue_timeout once the platform's queue_timeout_ms from its arrival has
// passed (its items' lane wait counts from that arrival too, so a run
// waits one queue budget in all), with its context or request deadline,
// or with service_unavailable at Shutdown. At most
// Config.AdmissionWaiters batches wait; past them it is refused with
// queue_full as any batch.
//
// # Items
//
// Each admitted item runs in its own goroutine, resolved in the snapshot
// the batch was admitted with, and its result lands at its submission
// index. A batch of one item whose engine is [Prompt] (the WASM engine:
// its Run returns once its context ends) runs inline instead, on the
// caller's goroutine, under one context — the job's, which ends at the
// earlier of the hard deadline and [Batch.Deadline], with the caller's
// context or with Shutdown — where a batch on goroutines has three and a
// goroutine; its admission, credit, queue, lane, deadlines and outcomes
// are the same, and Compute returns the caller's context's error, or the
// request deadline's, when either ended before the item's outcome. Before it queues: unknown_tool; tool_unavailable for a service
// whose policy could not be clamped; version_mismatch (retryable, one
// issue per stale pin) when contract_version, implementation_version or
// schema_fingerprint differs from the live definition; invalid_parameters
// unless the parameters are an object whose string "operation" the
// service declares; input_limit_exceeded past the platform's or the
// operation's max_parameter_bytes or the JSON depth. None of these starts
// a job.
//
// An item then waits, first come first served, for a lane until the
// batch's admission time plus the operation's queue_timeout_ms, and no
// longer than the batch's context: queue_timeout (retryable) when that
// passes, service_unavailable when the last lane is quarantined. With a
// lane, it gets a fresh random execution id and absolute deadlines
// counted from lane acquisition, soft = lane + soft_timeout_ms and hard =
// lane + hard_timeout_ms (startup included), and Run is called with a
// context that ends at the hard deadline, with the batch's context
// (client gone, request deadline) or with Shutdown. An engine's
// *toolerr.Error is copied as it is: a tool's own error keeps its code,
// flag and message, and no failure becomes a domain answer. A success
// needs a result that is valid JSON within max_result_bytes
// (invalid_output, output_limit_exceeded otherwise).
//
// # Tickets and lanes
//
// Every admitted item holds admission credit (one of the process's
// pending items) that it returns exactly once, when it owns no job: at
// once if it ends before a job starts (cancellation included), else after
// its engine's Run has returned, which an engine does only once its
// sandbox is gone; the batch's caller is then told ([Batch.Settled]). A
// lane is returned after that same confirmed end; when Run returns
// cleanup_failed (or panics) the lane is quarantined instead and counted
// as degraded, and its job's memory stays reserved. The item's credit is still returned: the lost capacity is the
// lane. When every lane is quarantined the pool refuses all work.
//
// # Cancellation and shutdown
//
// When the batch's context ends (or its Deadline passes), Compute returns
// its error at once (an inline run once its engine has returned, which a
// Prompt engine does at once); its items are cancelled and end in the
// background, keeping their credit until their engines confirm the end. An item cancelled before its job
// started ends with queue_timeout at a deadline, else
// service_unavailable. Shutdown closes admission, cancels every item and
// waits for them within its context and the platform's cleanup budget;
// items whose engines have not returned keep their lanes held.
//
// # Metrics
//
// An item's outcome is a plain value ([ItemResult]): success or error, the
// result or the error, its measured durations and resources. How a surface
// writes it (the seed-000 compute answer's milliseconds and nulls, the
// run document) is the surface's. Durations are measured, and nil when
// not observed, never an invented zero: QueueWait from admission to lane
// acquisition; Startup, InputValidation, Compute, OutputValidation and
// Serialization from the engine's phases; Cleanup from the engine's
// confirmed cleanup phase (engines clean up inside Run); Execution from
// lane acquisition until cleanup began (until Run returned when the engine
// reports no cleanup); Total from admission to the item's outcome.
//
// [Executor.Pool] reports lanes, active, queued, pending, degraded,
// completed (every admitted item that ended, cancellation included) and
// failed (those without a platform success), and the memory capacity
// (lanes × memory limit) and reservation (limits of running and
// quarantined jobs).
package executor

package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// fieldOperation is the parameters member that selects the operation.
const fieldOperation = "operation"

// runItem takes one admitted item to its outcome: checks, queue, job.
// It returns only once the item owns no job, so that its caller may
// release the item's admission credit.
func (e *Executor) runItem(r *run, it Item) ItemResult {
	measured := new(durations)
	var res ItemResult
	fail := func(err *toolerr.Error) ItemResult {
		res.Succeeded = false
		res.Error = err
		res.Metrics.Total = measured.put(time.Since(r.admitted))
		return res
	}

	if it.Refusal != nil {
		copied := *it.Refusal
		res.Metrics.InputValidation = measured.phase(it.InputValidation)
		return fail(&copied)
	}
	svc, terr := lookup(r.snap, it.ToolCode)
	if terr != nil {
		return fail(terr)
	}
	if terr := svc.Definition.CheckPins(it.ContractVersion, it.ImplementationVersion, it.SchemaFingerprint); terr != nil {
		return fail(terr)
	}
	eff, terr := e.operation(svc, it)
	if terr != nil {
		return fail(terr)
	}

	if h := e.hooks.beforeQueue; h != nil {
		h(it)
	}
	if e.halted(r) {
		return fail(e.cancelled(r))
	}
	queueDeadline := r.arrived.Add(ms(eff.QueueTimeoutMS))
	if r.inline && !r.deadline.IsZero() && r.deadline.Before(queueDeadline) {
		queueDeadline = r.deadline // a batch on goroutines has it in its context
	}
	if terr := e.acquire(r, queueDeadline); terr != nil {
		return fail(terr)
	}
	laneStart := time.Now()
	res.Metrics.QueueWait = measured.put(laneStart.Sub(r.admitted))
	if e.halted(r) {
		// The lane came as the item was cancelled: no job was started, so
		// the lane goes back at once.
		e.releaseLane(0)
		return fail(e.cancelled(r))
	}

	job := engine.Job{
		ExecutionID: newExecutionID(),
		ToolCode:    svc.Code(),
		Operation:   eff,
		Parameters:  it.Parameters,
		Checked:     it.Checked,
		Soft:        laneStart.Add(ms(eff.SoftTimeoutMS)),
		Hard:        laneStart.Add(ms(eff.HardTimeoutMS)),
		Files:       it.Files,
		OutDir:      it.OutDir,
	}
	res.ExecutionID = job.ExecutionID
	end := e.call(r, svc.Runner, job)
	elapsed := time.Since(laneStart)
	if !end.confirmed {
		e.log.Warn("lane quarantined: job cleanup not confirmed", "tool_code", job.ToolCode, "execution_id", job.ExecutionID)
	}

	if out := end.out; out != nil {
		res.Metrics.Startup = measured.phase(out.Phases.Startup)
		res.Metrics.InputValidation = measured.phase(out.Phases.InputValidation)
		res.Metrics.Compute = measured.phase(out.Phases.Compute)
		res.Metrics.OutputValidation = measured.phase(out.Phases.OutputValidation)
		res.Metrics.Serialization = measured.phase(out.Phases.Serialization)
		res.Resources = Resources{Memory: out.Memory, FuelUsed: out.FuelUsed}
	}
	if res.Metrics.InputValidation == nil {
		res.Metrics.InputValidation = measured.phase(it.InputValidation) // checked before the engine
	}
	// Execution runs from lane acquisition until cleanup begins: when the
	// engine observed its cleanup, that is the end of Run less the cleanup.
	if end.out != nil && end.out.Phases.Cleanup != nil && *end.out.Phases.Cleanup <= elapsed {
		res.Metrics.Cleanup = measured.phase(end.out.Phases.Cleanup)
		elapsed -= *end.out.Phases.Cleanup
	}
	res.Metrics.Execution = measured.put(elapsed)
	if end.err != nil {
		var te *toolerr.Error
		if errors.As(end.err, &te) {
			copied := *te // the engine's error as it is: a tool's own keeps its flag and message
			return fail(&copied)
		}
		e.log.Error("engine returned an error without a platform code", "tool_code", job.ToolCode, "execution_id", job.ExecutionID, "err", end.err)
		return fail(toolerr.New(toolerr.ExecutionFailed))
	}
	switch out := end.out; {
	case out == nil || out.Result == nil:
		e.log.Error("engine returned neither a result nor an error", "tool_code", job.ToolCode, "execution_id", job.ExecutionID)
		return fail(toolerr.New(toolerr.ExecutionFailed))
	case int64(len(out.Result)) > eff.MaxResultBytes:
		return fail(toolerr.New(toolerr.OutputLimitExceeded))
	case !json.Valid(out.Result):
		return fail(toolerr.New(toolerr.InvalidOutput))
	}
	res.Succeeded = true
	res.Result = end.out.Result
	res.Metrics.Total = measured.put(time.Since(r.admitted))
	return res
}

// jobEnd is how an engine's Run ended.
type jobEnd struct {
	out *engine.Outcome
	err error
	// confirmed is false when the engine could not confirm that its
	// sandbox is gone (cleanup_failed), or panicked.
	confirmed bool
}

// call runs job on runner under a context that ends at the job's hard
// deadline, or earlier with the batch (for an inline run, at its request
// deadline too) or Shutdown, with the job's memory reserved; when Run
// returns, it gives the lane back, or quarantines it when the cleanup is
// not confirmed. A panicking engine ends the item with execution_failed
// and, its sandbox being unknown, with an unconfirmed cleanup.
func (e *Executor) call(r *run, runner Engine, job engine.Job) (end jobEnd) {
	deadline := job.Hard
	if r.inline && !r.deadline.IsZero() && r.deadline.Before(deadline) {
		deadline = r.deadline
	}
	ctx, cancel := context.WithDeadline(r.ctx, deadline)
	defer cancel()
	memory := job.Operation.MemoryLimitBytes
	e.mu.Lock()
	e.reserved += memory
	if r.inline {
		// Shutdown cancels what is registered here; once it has begun, the
		// job starts cancelled, as its batch's context would be.
		if e.closed {
			cancel()
		} else {
			e.inline[r] = cancel
		}
	}
	e.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			e.log.Error("engine panicked", "tool_code", job.ToolCode, "execution_id", job.ExecutionID, "panic", v)
			end = jobEnd{err: toolerr.New(toolerr.ExecutionFailed)}
		}
		e.endJob(r, end.confirmed, memory)
	}()
	out, err := runner.Run(ctx, job)
	code, _ := toolerr.CodeOf(err)
	return jobEnd{out: out, err: err, confirmed: code != toolerr.CleanupFailed}
}

// halted reports whether an item must not start a job: its batch's
// context ended, or Shutdown began (whose cancellation of the batch's
// context runs asynchronously), or an inline run's request deadline
// passed.
func (e *Executor) halted(r *run) bool {
	return r.ctx.Err() != nil || e.stop.Err() != nil || r.expired()
}

// cancelled is the outcome of an item halted before its job started:
// service_unavailable after Shutdown, queue_timeout at the request
// deadline, service_unavailable when the client cancelled it (Compute has
// then already returned, and nobody reads it).
func (e *Executor) cancelled(r *run) *toolerr.Error {
	if e.stop.Err() == nil && (errors.Is(r.ctx.Err(), context.DeadlineExceeded) || r.ctx.Err() == nil && r.expired()) {
		return toolerr.New(toolerr.QueueTimeout)
	}
	return toolerr.New(toolerr.ServiceUnavailable)
}

// lookup resolves code in snap: unknown_tool when it is not published,
// tool_unavailable when it is listed but cannot run.
func lookup(snap *registry.Snapshot, code string) (*registry.Service, *toolerr.Error) {
	svc, ok := snap.Service(code)
	if !ok {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if svc.Unavailable != nil || svc.Runner == nil {
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	return svc, nil
}

// operation returns the effective policy of an item's operation:
// input_limit_exceeded past the platform's or the operation's parameter
// bytes or nesting depth, invalid_parameters when the parameters are not an
// object with a string "operation" the service declares. An item whose
// caller named the operation (Item.Operation) is not decoded: its caller
// checked the depth and the shape when it decoded it. Otherwise only the
// operation is read; the engine validates the rest.
func (e *Executor) operation(svc *registry.Service, it Item) (policy.Effective, *toolerr.Error) {
	params := it.Parameters
	if int64(len(params)) > e.platform.MaxParameterBytes {
		return policy.Effective{}, toolerr.New(toolerr.InputLimitExceeded)
	}
	if it.Operation != "" {
		eff, ok := svc.Effective[it.Operation]
		switch {
		case !ok:
			return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueEnum, fieldOperation))
		case int64(len(params)) > eff.MaxParameterBytes:
			return policy.Effective{}, toolerr.New(toolerr.InputLimitExceeded)
		}
		return eff, nil
	}
	doc, err := wire.Decode(params, wire.Limits{MaxDepth: e.platform.MaxJSONDepth})
	switch {
	case errors.Is(err, wire.ErrTooDeep):
		return policy.Effective{}, toolerr.New(toolerr.InputLimitExceeded)
	case err != nil:
		return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueInvalid))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueType))
	}
	v, ok := obj[fieldOperation]
	if !ok {
		return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueRequired, fieldOperation))
	}
	name, ok := v.(string)
	if !ok {
		return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueType, fieldOperation))
	}
	eff, ok := svc.Effective[name]
	if !ok {
		return policy.Effective{}, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueEnum, fieldOperation))
	}
	if int64(len(params)) > eff.MaxParameterBytes {
		return policy.Effective{}, toolerr.New(toolerr.InputLimitExceeded)
	}
	return eff, nil
}

// newExecutionID returns 16 random bytes in hex.
func newExecutionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand aborts the program instead
	return hex.EncodeToString(b[:])
}

// ms converts a policy value in milliseconds to a Duration.
func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

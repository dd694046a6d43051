package run

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// Result is a run that happened: it succeeded with the tool's result
// document, or failed with the tool's own error or the platform's (a
// timeout, a crash, an output over its limit).
type Result struct {
	ExecutionID string
	Tool        string
	// Succeeded reports the outcome; Result is the result document of a
	// success (canonical JSON), Error the error of a failure.
	Succeeded bool
	Result    json.RawMessage
	Error     *toolerr.Error
}

// result is the Result of a run of tool the executor answered with r.
func result(tool string, r *executor.ItemResult) *Result {
	return &Result{ExecutionID: r.ExecutionID, Tool: tool, Succeeded: r.Succeeded, Result: r.Result, Error: r.Error}
}

// Lookup finds the tool id in snap for a run: ToolNotFound when no tool
// has it (Loading while snap is starting), ToolUnavailable (with the registration failure as the reason)
// when its code is quarantined.
func Lookup(snap *registry.Snapshot, id string) (*registry.Service, error) {
	if svc, ok := snap.Service(id); ok {
		return svc, nil
	}
	if f, ok := snap.Quarantined(id); ok {
		return nil, unavailableRefusal(f.Reason)
	}
	return nil, notFound(snap, "No tool has this id.")
}

// Runnable refuses a run of svc through the run API: NotRunnable for a
// page-only tool, ToolUnavailable for one that cannot run here now.
func Runnable(svc *registry.Service) error {
	p := svc.Platform()
	switch {
	case !p.API:
		return withReason(refuse(NotRunnable, "This tool is a page only: it has no run API."), issuePageOnly)
	case !svc.Available():
		return serviceUnavailable(svc)
	}
	return nil
}

// serviceUnavailable is the ToolUnavailable refusal of svc, listed but
// unavailable: its issues are those a compute item of svc carries (one
// engine_missing per missing engine, say).
func serviceUnavailable(svc *registry.Service) *Refusal {
	r := unavailableRefusal(svc.StatusReason())
	if svc.Unavailable != nil && len(svc.Unavailable.Issues) > 0 {
		r.Issues, r.IssueCount = svc.Unavailable.Issues, len(svc.Unavailable.Issues)
	}
	return r
}

// issueCode reports whether s is an issue code: lower-case words joined
// by "_" (a reason such as "engine_missing: qpdf" is not).
func issueCode(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// unavailableRefusal is the ToolUnavailable refusal of a tool the
// catalogue lists unavailable for reason.
func unavailableRefusal(reason string) *Refusal {
	return withReason(refuse(ToolUnavailable, "The tool is unavailable on this server: "+reason+"."), reason)
}

// withReason is r with its reason, which is also its one issue: the code
// a compute item's tool_unavailable carries for the same tool, so every
// surface says why in the same word.
func withReason(r *Refusal, reason string) *Refusal {
	r.Reason = reason
	if issueCode(reason) {
		r.Issues, r.IssueCount = []toolerr.Issue{toolerr.NewIssue(reason)}, 1
	}
	return r
}

// Item turns params — a run's parameters, decoded once by the surface —
// into one executor item of svc, pinned to its live definition: encoded
// once, its depth and size bounded by the platform and the operation,
// validated once against the compiled input schema, its operation named.
// A parameters document the tool would refuse is a *toolerr.Error
// (invalid_parameters with sanitised issues, or input_limit_exceeded):
// a compute batch answers it per item, a run as a refusal (ItemRefusal).
func (a *App) Item(svc *registry.Service, correlationID string, params any) (executor.Item, *toolerr.Error) {
	d := svc.Definition
	it := executor.Item{CorrelationID: correlationID, ToolCode: d.ToolCode, ContractVersion: d.ContractVersion,
		ImplementationVersion: d.ImplementationVersion, SchemaFingerprint: d.Fingerprint}
	terr := a.check(svc, params, &it)
	return it, terr
}

// check fills it's parameters, operation and checked flag from params,
// and the duration of the check (an item refused here was validated too,
// so its input_validation_ms is measured, not null).
func (a *App) check(svc *registry.Service, params any, it *executor.Item) (terr *toolerr.Error) {
	start := time.Now()
	defer func() {
		if it.Checked || terr != nil {
			d := time.Since(start)
			it.InputValidation = &d
		}
	}()
	p := a.cfg.Platform
	b, err := wire.Encode(params, wire.Limits{MaxBytes: int(p.MaxParameterBytes), MaxDepth: p.MaxJSONDepth})
	switch {
	case errors.Is(err, wire.ErrTooDeep), errors.Is(err, wire.ErrTooLarge):
		return toolerr.New(toolerr.InputLimitExceeded)
	case err != nil:
		return toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueInvalid))
	}
	it.Parameters = b
	if !svc.Available() {
		return nil // the executor answers tool_unavailable
	}
	v, err := svc.InputValidator()
	if err != nil {
		a.log.Error("input schema does not compile", "tool_code", svc.Code(), "err", err)
		return toolerr.New(toolerr.ToolUnavailable)
	}
	if err := v.Validate(params, toolerr.InvalidParameters); err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return te
		}
		return toolerr.New(toolerr.InvalidParameters)
	}
	op, _ := params.(map[string]any)["operation"].(string)
	eff, ok := svc.Effective[op]
	switch {
	case !ok: // the schema's operations are the policies': a definition bug
		return toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueEnum, "operation"))
	case int64(len(b)) > eff.MaxParameterBytes:
		return toolerr.New(toolerr.InputLimitExceeded)
	}
	it.Operation, it.Checked = op, true
	return nil
}

// ItemRefusal is the refusal of a run whose parameters Item refused.
func ItemRefusal(e *toolerr.Error) *Refusal {
	if e.Code == toolerr.InputLimitExceeded {
		return refuse(InputTooLarge, "The input is over the tool's limits.")
	}
	if e.Code == toolerr.ToolUnavailable {
		return refuse(ToolUnavailable, "The tool's input schema cannot be used now.")
	}
	return &Refusal{Code: InvalidInput, Detail: "The input does not match the tool's input schema.",
		Issues: e.Issues, IssueCount: e.IssueCount}
}

// Sync runs one item of svc with input for o, through the executor, as
// the run route, the legacy routes and `toolhost run` do: the run must be
// admitted already. A refusal of the whole run (the input, the executor's
// capacity, the request deadline) is a *Refusal; a run that happened is a
// Result, succeeded or failed; ctx's own end is its error.
func (a *App) Sync(ctx context.Context, o Origin, svc *registry.Service, input any, start time.Time) (*Result, error) {
	it, terr := a.Item(svc, "run", input)
	if terr != nil {
		return nil, ItemRefusal(terr)
	}
	r, err := a.execute(ctx, it)
	if err != nil {
		return nil, err
	}
	a.count(svc.Code(), r, time.Since(start))
	if !r.Succeeded {
		a.afterRun(ctx, o, svc, r.Error)
		if ref, ok := fromExecution(r.Error); ok {
			return nil, ref
		}
	}
	return result(svc.Code(), r), nil
}

// execute runs one item through the executor under its request deadline
// and returns its result; an error is ctx's own end or a *Refusal of the
// batch. When the process's pending items are full the item waits for
// them, within the queue budget (executor.Batch.Wait): its callers are
// bounded by the guard's concurrency, so a burst up to it is served, not
// refused.
func (a *App) execute(ctx context.Context, it executor.Item) (*executor.ItemResult, error) {
	items := []executor.Item{it}
	deadline := time.Now().Add(a.cfg.Executor.BatchRequestTimeout(items))
	res, err := a.cfg.Executor.Compute(ctx, executor.Batch{Items: items, Deadline: deadline, Wait: true})
	if err != nil {
		return nil, a.batchError(ctx, err)
	}
	return &res.Results[0], nil
}

// batchError maps an error of the executor's Compute: ctx's own end (the
// client left) as it is, the request deadline (the batch's Deadline) as
// Timeout, a batch-level refusal by its code.
func (a *App) batchError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return refuse(Timeout, "The run did not finish within its request deadline.")
	}
	var te *toolerr.Error
	if errors.As(err, &te) {
		if r, ok := fromExecution(te); ok {
			return r
		}
	}
	a.log.Error("executor failed", "err", err)
	return &Refusal{Code: ServiceUnavailable, RetryAfter: overloadRetry, Detail: "The executor failed to run the batch."}
}

// BatchItem is one item of a seed-000 compute batch: the caller's pins
// and its parameters, decoded once with the request.
type BatchItem struct {
	CorrelationID, ToolCode, ContractVersion, ImplementationVersion, SchemaFingerprint string
	Parameters                                                                         any
}

// PrepareBatch turns a seed-000 compute batch's items into executor
// items resolved in snap, each keeping its place: an item that cannot run
// carries its per-item refusal and fails alone without running —
// tool_unavailable for a quarantined code or a page-only tool,
// version_mismatch for stale pins, invalid_parameters or
// input_limit_exceeded for parameters the tool would refuse; an unknown
// code is left to the executor (unknown_tool), as is a tool listed
// unavailable (tool_unavailable).
func (a *App) PrepareBatch(snap *registry.Snapshot, in []BatchItem) []executor.Item {
	items := make([]executor.Item, len(in))
	for i, bi := range in {
		it := executor.Item{CorrelationID: bi.CorrelationID, ToolCode: bi.ToolCode, ContractVersion: bi.ContractVersion,
			ImplementationVersion: bi.ImplementationVersion, SchemaFingerprint: bi.SchemaFingerprint}
		svc, ok := snap.Service(bi.ToolCode)
		switch {
		case !ok:
			if f, quarantined := snap.Quarantined(bi.ToolCode); quarantined {
				it.Refusal = unavailable(f.Reason)
			}
		case !svc.Platform().API:
			it.Refusal = unavailable(issuePageOnly)
		case !svc.Available():
			// The catalogue lists it unavailable, whatever its pins say.
			it.Refusal = toolerr.New(toolerr.ToolUnavailable)
			if svc.Unavailable != nil {
				it.Refusal = toolerr.New(toolerr.ToolUnavailable, svc.Unavailable.Issues...)
			}
		default:
			if terr := svc.Definition.CheckPins(it.ContractVersion, it.ImplementationVersion, it.SchemaFingerprint); terr != nil {
				it.Refusal = terr
			} else if terr := a.check(svc, bi.Parameters, &it); terr != nil {
				it.Refusal = terr
			}
		}
		items[i] = it
	}
	return items
}

// issuePageOnly is the issue code of a tool_unavailable item whose tool
// is a page only, as the catalogue's status reason says.
const issuePageOnly = "page_only"

// unavailable is the tool_unavailable of an item, with the catalogue's
// reason (a registration failure's code, page_only) as its one issue.
func unavailable(reason string) *toolerr.Error {
	return toolerr.New(toolerr.ToolUnavailable, toolerr.NewIssue(reason))
}

// Batch runs a seed-000 compute batch of items (PrepareBatch) for o under
// the spec's batch limits — max_batch_items, and the per-principal limits
// keyed by principal (batchLimits; empty applies none) — after
// AdmitBatch. Every item keeps its place and its own outcome. A
// batch-level refusal (those limits, the executor's capacity, the request
// deadline) is a *Refusal.
func (a *App) Batch(ctx context.Context, o Origin, principal string, items []executor.Item, start time.Time) (*BatchOutcome, error) {
	b := executor.Batch{Items: items}
	if n := len(items); n < policy.MinBatchItems || n > a.cfg.Platform.MaxBatchItems {
		return nil, a.batchError(ctx, toolerr.New(toolerr.QueueFull))
	}
	if principal != "" {
		limits := a.batchLimits()
		if !limits.take(a.cfg.Platform, principal, len(items)) {
			return nil, a.batchError(ctx, toolerr.New(toolerr.QueueFull))
		}
		b.Settled = func(last bool) { limits.settle(principal, last) }
	}
	b.Deadline = time.Now().Add(a.cfg.Executor.BatchRequestTimeout(items))
	res, err := a.cfg.Executor.Compute(ctx, b)
	if err != nil {
		return nil, a.batchError(ctx, err)
	}
	out := &BatchOutcome{RequestID: o.RequestID, Items: make([]ItemOutcome, len(res.Results))}
	if !start.IsZero() {
		d := time.Since(start)
		out.Processing = &d
	}
	for i := range res.Results {
		r := &res.Results[i]
		if r.Succeeded {
			out.Succeeded++
		} else {
			out.Failed++
		}
		it := &items[i]
		out.Items[i] = itemOutcome(it, r)
		a.dropMessage(o, &out.Items[i])
		var d time.Duration
		if r.Metrics.Total != nil {
			d = *r.Metrics.Total
		}
		a.count(it.ToolCode, r, d)
	}
	return out, nil
}

// maxLoggedMessage bounds the tool message a log record keeps.
const maxLoggedMessage = 512

// dropMessage takes a tool's own error message out of a compute item's
// outcome: the seed-000 sanitizer omits raw messages, so a batch answers
// the code, retryable and the bounded issues alone (docs/errors.md). The
// message goes to the log, bounded, for the operator. The ADR-027 run
// route does not come here and keeps it.
func (a *App) dropMessage(o Origin, r *ItemOutcome) {
	if r.Error == nil || r.Error.Message == "" {
		return
	}
	msg := r.Error.Message
	if len(msg) > maxLoggedMessage {
		msg = strings.ToValidUTF8(msg[:maxLoggedMessage], "")
	}
	if a.log != nil {
		a.log.Info("tool error message withheld from the compute answer", "request_id", o.RequestID,
			"correlation_id", r.CorrelationID, "tool", r.ToolCode, "code", string(r.Error.Code), "message", msg)
	}
	e := *r.Error // the executor's error may be shared; the answer gets its own copy
	e.Message = ""
	r.Error = &e
}

// The outcome labels of a run in the metrics beside the error codes.
const (
	outcomeSuccess = "success"
	outcomeError   = "error" // a failure without a code, which the executor never gives
)

// count counts one finished item of tool in the metrics.
func (a *App) count(tool string, r *executor.ItemResult, d time.Duration) {
	m := a.cfg.Metrics
	if m == nil || r == nil {
		return
	}
	outcome := outcomeSuccess
	switch {
	case r.Error != nil:
		outcome = string(r.Error.Code)
	case !r.Succeeded:
		outcome = outcomeError
	}
	m.CountRun(tool, outcome)
	m.ObserveItemDuration(tool, d)
	var peak *int64
	if r.Resources.Memory != nil {
		peak = r.Resources.Memory.PeakBytes
	}
	ms := phaseMillis.Get().(*[7]float64)
	defer phaseMillis.Put(ms)
	x := &r.Metrics
	m.ObserveItem(tool, metrics.ItemPhases{
		QueueWait: millis(&ms[0], x.QueueWait), Startup: millis(&ms[1], x.Startup), InputValidation: millis(&ms[2], x.InputValidation),
		Compute: millis(&ms[3], x.Compute), OutputValidation: millis(&ms[4], x.OutputValidation),
		Serialization: millis(&ms[5], x.Serialization), Cleanup: millis(&ms[6], x.Cleanup),
	}, r.Resources.FuelUsed, peak)
}

// phaseMillis holds the phases count gives the metrics in milliseconds,
// as metrics.ItemPhases takes them: ObserveItem reads them and keeps no
// pointer, but its parameters escape, so they are pooled rather than
// allocated for every item.
var phaseMillis = sync.Pool{New: func() any { return new([7]float64) }}

// millis sets *to to d in float milliseconds and returns to; nil when d
// was not observed.
func millis(to *float64, d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	*to = float64(*d) / float64(time.Millisecond)
	return to
}

// Local runs one item of the tool code with params for the command line
// (`toolhost run`), through the same item path as a compute item: the
// live definition's pins, the checks PrepareBatch makes (so a page-only
// tool is tool_unavailable with its page_only issue, as on every
// surface), the parameters checked once, the executor. Its outcome is in
// the platform's codes, as a compute item's: unknown_tool for a code no
// tool has, invalid_parameters or input_limit_exceeded for parameters the
// tool would refuse. The command line is not a caller of the guard:
// nothing is admitted or counted against a quota.
func (a *App) Local(ctx context.Context, code string, params any) (*Result, error) {
	snap := a.cfg.Snapshot()
	bi := BatchItem{CorrelationID: "cli", ToolCode: code, Parameters: params}
	if svc, ok := snap.Service(code); ok {
		d := svc.Definition
		bi.ContractVersion, bi.ImplementationVersion, bi.SchemaFingerprint = d.ContractVersion, d.ImplementationVersion, d.Fingerprint
	}
	it := a.PrepareBatch(snap, []BatchItem{bi})[0]
	r, err := a.execute(ctx, it)
	if err != nil {
		return nil, err
	}
	return result(code, r), nil
}

package run

import (
	"errors"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Code is the stable code of a refusal: why a run did not happen. The
// answer dialects map each code to one status and one wire code.
type Code string

// The refusal codes.
const (
	// ToolNotFound: no published tool has the id (or job type).
	ToolNotFound Code = "tool_not_found"
	// Loading: no published tool has the id (or job type) yet, and the
	// tools folder's first scan still loads modules (a server listens
	// before they are loaded): the code may be one of theirs, so its
	// absence is not known yet; retry after RetryAfter. After the first
	// scan the same lookup is ToolNotFound (loading.go).
	Loading Code = "loading"
	// NotRunnable: the tool is a page only; it has no run API.
	NotRunnable Code = "not_runnable"
	// ToolUnavailable: the tool is listed but cannot run here now (a
	// missing engine, a policy that cannot be clamped, a quarantined
	// code, a tool that changed between lookup and run, no jobs on this
	// server); Refusal.Reason says why when it is known.
	ToolUnavailable Code = "tool_unavailable"
	// InvalidInput: the input does not match the tool's input schema;
	// Refusal.Issues locate the mismatches.
	InvalidInput Code = "invalid_input"
	// InputTooLarge: the input is over the platform's or the operation's
	// parameter bytes or nesting depth.
	InputTooLarge Code = "input_too_large"
	// Overloaded: the executor's process capacity (lanes plus pending
	// items, the queue deadline) cannot take the run now; retry after
	// RetryAfter.
	Overloaded Code = "overloaded"
	// ServiceUnavailable: the executor is stopping, or every lane is
	// quarantined.
	ServiceUnavailable Code = "service_unavailable"
	// Timeout: the run did not finish within its request deadline.
	Timeout Code = "timeout"
	// StoreBusy: the credential store could not check the caller in time;
	// retry after RetryAfter.
	StoreBusy Code = "store_busy"
	// Unauthenticated: the credentials do not resolve, or the tool needs
	// a signed-in caller.
	Unauthenticated Code = "unauthenticated"
	// CSRFFailed: a state-changing request with a signed-in session's
	// cookie did not pass the CSRF check.
	CSRFFailed Code = "csrf_failed"
	// Forbidden: the caller lacks the tool's capability.
	Forbidden Code = "forbidden"
	// ChallengeFailed: the guard's challenge hook refused.
	ChallengeFailed Code = "challenge_failed"
	// CostExceedsAllowance: the run costs more than the caller's tier may
	// ever spend at once; waiting will not help.
	CostExceedsAllowance Code = "cost_exceeds_allowance"
	// QuotaExceeded, Concurrency and Throttled: the caller's allowance,
	// its runs in flight, or the target's throttle; retry after
	// RetryAfter.
	QuotaExceeded Code = "quota_exceeded"
	Concurrency   Code = "concurrency"
	Throttled     Code = "throttled"

	// The refusals of a request's body, which the routes read for the
	// use case (Body).

	// InvalidRequest: the body is not the route's document (not JSON, not
	// a run request, a malformed form, a reference to no file input).
	InvalidRequest Code = "invalid_request"
	// UnsupportedMediaType: the body is neither JSON nor a form the route
	// takes, or an upload where the tool takes none.
	UnsupportedMediaType Code = "unsupported_media_type"
	// PayloadTooLarge: the body, one of its parts or one of its files is
	// over its bound.
	PayloadTooLarge Code = "payload_too_large"
	// BodyTimeout: the body did not arrive in time.
	BodyTimeout Code = "body_timeout"
	// FileType: a file is of a type the tool does not take, or a part
	// names no file input of the tool.
	FileType Code = "file_type"
	// FileNotFound: a file reference names nothing the caller may read.
	FileNotFound Code = "file_not_found"

	// The refusals of the jobs routes.

	// JobNotFound: no job (or file) of the caller has the id.
	JobNotFound Code = "job_not_found"
	// JobExpired: the file or the signed link has expired.
	JobExpired Code = "job_expired"
	// JobState: the job's state does not allow the request (a retry of a
	// job that did not fail).
	JobState Code = "job_state"
	// JobSignature: the signed link is not valid.
	JobSignature Code = "job_signature"
	// JobsUnavailable: this server runs no jobs.
	JobsUnavailable Code = "jobs_unavailable"
	// StorageFull: the data folder has no room for the job; nothing was
	// kept. Retryable.
	StorageFull Code = "storage_full"

	// The refusals of the legacy routes.

	// LegacyNotFound: no tool answers the legacy route (or its "tool").
	LegacyNotFound Code = "legacy_not_found"
	// MethodNotAllowed: the legacy path is a tool's, with other methods
	// (Refusal.Allow).
	MethodNotAllowed Code = "method_not_allowed"
)

// Refusal is a run that did not happen, as a typed value: a stable code,
// a sentence for people, and what the answer needs to be useful. Its
// fields are safe to publish: nothing in them comes from the caller's
// input.
type Refusal struct {
	Code Code
	// Detail says what happened, in a sentence.
	Detail string
	// RetryAfter is when a retry can succeed, for a refusal that waiting
	// can lift; 0 otherwise.
	RetryAfter time.Duration
	// Reason is the status reason of an unavailable tool; the tool id of
	// a missing capability.
	Reason string
	// Issues and IssueCount locate an invalid input's mismatches.
	Issues     []toolerr.Issue
	IssueCount int
	// Limits are the rate-limit fields of the quotas the guard consulted.
	Limits guard.RateLimits
	// Allow are the methods a MethodNotAllowed path takes.
	Allow []string
	// InvalidCredentials says, of an Unauthenticated refusal, that the
	// request presented credentials that did not resolve (rather than
	// none): its 401 says error="invalid_token".
	InvalidCredentials bool
}

// Error returns "run: " and the code.
func (r *Refusal) Error() string { return "run: refused: " + string(r.Code) }

// Retryable reports whether waiting can lift the refusal.
func (r *Refusal) Retryable() bool { return r.RetryAfter > 0 }

// AsRefusal returns the *Refusal in err's chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// refuse returns a Refusal of code with detail.
func refuse(code Code, detail string) *Refusal { return &Refusal{Code: code, Detail: detail} }

// fromGuard is the refusal of a guard decision.
func fromGuard(d guard.Decision) *Refusal {
	r := &Refusal{Limits: d.Limits, RetryAfter: time.Duration(d.RetryAfterSeconds) * time.Second}
	switch d.Reason {
	case guard.ReasonUnauthenticated:
		r.Code, r.Detail = Unauthenticated, "This tool needs at least a browser session or a token."
	case guard.ReasonForbidden:
		r.Code, r.Detail = Forbidden, "This tool needs a capability the caller's credential was not granted."
	case guard.ReasonChallenge:
		r.Code, r.Detail = ChallengeFailed, "The request did not pass the challenge."
	case guard.ReasonCostExceedsAllowance:
		r.Code, r.Detail = CostExceedsAllowance, "A run of this tool costs more than the caller's tier may ever spend at once; waiting will not help."
	case guard.ReasonThrottled:
		r.Code, r.Detail = Throttled, "Too many runs of this tool against this target; retry after the Retry-After."
	case guard.ReasonConcurrency:
		r.Code, r.Detail = Concurrency, "Too many runs of this caller, or of its tier, are in flight; retry after the Retry-After."
	case guard.ReasonUnavailable:
		// The shared quota store (Redis) did not answer and the guard
		// enforces: the server's trouble, not the caller's (503).
		r.Code, r.Detail = ServiceUnavailable, "The server cannot count this run against its quotas now; retry after the Retry-After."
	default:
		r.Code, r.Detail = QuotaExceeded, "The caller's allowance for this kind of run is spent; retry after the Retry-After."
	}
	if !d.Reason.Retryable() {
		r.RetryAfter = 0
	}
	return r
}

// overloadRetry is the Retry-After of the executor's capacity refusals.
const overloadRetry = time.Second

// fromExecution is the refusal of an executor error code that means the
// run did not happen (queue_full, queue_timeout, service_unavailable; the
// tool changed or left between lookup and run), and false for any other
// code: the outcome of a run that happened. The input was validated before
// the item reached the executor, so an invalid_parameters from an engine
// is the tool's own error, not a schema mismatch.
func fromExecution(e *toolerr.Error) (*Refusal, bool) {
	switch e.Code {
	case toolerr.QueueFull, toolerr.QueueTimeout:
		return &Refusal{Code: Overloaded, RetryAfter: overloadRetry,
			Detail: "The server cannot take this run now; retry after the Retry-After."}, true
	case toolerr.ServiceUnavailable:
		return &Refusal{Code: ServiceUnavailable, RetryAfter: overloadRetry,
			Detail: "The server is stopping or has no usable lane; retry later."}, true
	case toolerr.UnknownTool, toolerr.ToolUnavailable, toolerr.VersionMismatch:
		return refuse(ToolUnavailable, "The tool changed or left while the run was admitted; retry later."), true
	}
	return nil, false
}

package contracts

import "slices"

// The problem codes of the jobs, legacy and sign-in routes beside those
// tools.run-request@1 lists, and the codes every route shares.
const (
	ProblemJobNotFound     = "tools.job.not_found"
	ProblemJobExpired      = "tools.job.expired"
	ProblemJobState        = "tools.job.state_conflict"
	ProblemJobSignature    = "tools.job.signature_invalid"
	ProblemJobsUnavailable = "tools.job.unavailable"
	ProblemLegacyNotFound  = "legacy_not_found"
	ProblemCSRF            = "auth.csrf"
	ProblemNotFound        = "not_found"
	ProblemMethod          = "method_not_allowed"
	ProblemInternal        = "internal_error"
)

// Dialect is an answer dialect: which routes answer with a problem code.
type Dialect string

// The answer dialects (docs/errors.md, "Refusals and their HTTP answers").
const (
	// DialectTools is ADR-027's: the tools, run, jobs, legacy and
	// sign-in routes.
	DialectTools Dialect = "ADR-027"
	// DialectSeed is the tool-plugin contract's (seed 000): the catalog,
	// compute and diagnostics routes.
	DialectSeed Dialect = "seed 000"
	// DialectBoth marks a code every route may answer.
	DialectBoth Dialect = "every route"
)

// ProblemCode is a problem code an answer can carry: its HTTP status, its
// dialect, and the ADR-027 code whose type URI it shares where the
// dialects name one refusal differently.
type ProblemCode struct {
	Code    string
	Status  int
	Dialect Dialect
	// Type is the ADR-027 code of the same refusal, for a seed-000 code
	// (its problem's type URI); "" when the code is its own type.
	Type string
	// When says when it is answered, for docs/errors.md.
	When string
}

// Problems is the one table of every problem code an answer can carry,
// ordered by status: the answer mappers (internal/api) take their statuses
// from it, the OpenAPI document lists its codes under each status, and
// docs/errors.md prints it (TestErrorsDocument).
var Problems = []ProblemCode{
	{Code: "invalid_json", Status: 400, Dialect: DialectSeed, Type: ProblemInvalidRequest, When: "the body is not strict JSON"},
	{Code: "invalid_body", Status: 400, Dialect: DialectSeed, Type: ProblemInvalidRequest, When: "the body could not be read"},
	{Code: ProblemInvalidRequest, Status: 400, Dialect: DialectTools, When: "not strict JSON, not the route's contract, a malformed form, a reference to no file input"},
	{Code: "unauthorized", Status: 401, Dialect: DialectSeed, Type: ProblemUnauthenticated, When: "no bearer token of an active account"},
	{Code: ProblemUnauthenticated, Status: 401, Dialect: DialectTools, When: "credentials that do not resolve; an anonymous caller of a signed-in tool"},
	{Code: "forbidden", Status: 403, Dialect: DialectSeed, Type: ProblemForbidden, When: "the token lacks a tool's capability"},
	{Code: "challenge_failed", Status: 403, Dialect: DialectSeed, Type: ProblemForbidden, When: "the guard's challenge hook refused"},
	{Code: "cost_exceeds_allowance", Status: 403, Dialect: DialectSeed, Type: ProblemForbidden, When: "the batch costs more than the tier may ever spend at once"},
	{Code: ProblemForbidden, Status: 403, Dialect: DialectTools, When: "a missing capability, a failed challenge, a cost over the tier's burst"},
	{Code: ProblemJobSignature, Status: 403, Dialect: DialectTools, When: "an altered signed URL"},
	{Code: ProblemCSRF, Status: 403, Dialect: DialectBoth, When: "a state-changing request of a signed-in session that fails the CSRF check"},
	{Code: ProblemNotFound, Status: 404, Dialect: DialectBoth, When: "no such route"},
	{Code: ProblemToolNotFound, Status: 404, Dialect: DialectTools, When: "no published tool has the id, or the job type and input tool"},
	{Code: ProblemToolNotRunnable, Status: 404, Dialect: DialectTools, When: "a page-only tool (issue page_only)"},
	{Code: ProblemFileNotFound, Status: 404, Dialect: DialectTools, When: "a reference to a file the caller may not read"},
	{Code: ProblemJobNotFound, Status: 404, Dialect: DialectTools, When: "no such job or file of the caller"},
	{Code: ProblemLegacyNotFound, Status: 404, Dialect: DialectTools, Type: ProblemNotFound, When: "a legacy route, or its tool selector, no tool answers"},
	{Code: ProblemMethod, Status: 405, Dialect: DialectBoth, When: "a method the route does not take (Allow lists those it takes)"},
	{Code: "request_body_timeout", Status: 408, Dialect: DialectSeed, Type: ProblemBodyTimeout, When: "the body did not arrive within the ingress budget"},
	{Code: ProblemBodyTimeout, Status: 408, Dialect: DialectTools, When: "the body, or a part, did not arrive in time"},
	{Code: ProblemJobState, Status: 409, Dialect: DialectTools, When: "a retry of a job that did not fail or was not cancelled"},
	{Code: ProblemJobExpired, Status: 410, Dialect: DialectTools, When: "a file or signed URL past its expiry"},
	{Code: "payload_too_large", Status: 413, Dialect: DialectSeed, Type: ProblemPayloadTooLarge, When: "the body over the platform's cap"},
	{Code: ProblemPayloadTooLarge, Status: 413, Dialect: DialectTools, When: "the body, a field, a file or the input over its bound"},
	{Code: ProblemUnsupportedMediaType, Status: 415, Dialect: DialectTools, When: "a body neither JSON nor a form; an upload to a tool that takes none"},
	{Code: ProblemFileType, Status: 415, Dialect: DialectTools, When: "a file of a type the tool does not take, or a part that names no file input"},
	{Code: "invalid_envelope", Status: 422, Dialect: DialectSeed, When: "the compute envelope fails its contract"},
	{Code: ProblemInvalidInput, Status: 422, Dialect: DialectTools, When: "the input fails the tool's input schema (sanitised issues)"},
	{Code: "quota_exceeded", Status: 429, Dialect: DialectSeed, Type: ProblemQuotaExceeded, When: "the caller's allowance for the batch's quota class is spent"},
	{Code: "concurrency", Status: 429, Dialect: DialectSeed, Type: ProblemConcurrencyExceeded, When: "too many runs of the caller, or its tier, in flight"},
	{Code: "throttled", Status: 429, Dialect: DialectSeed, Type: ProblemThrottled, When: "a throttle (never on batches today)"},
	{Code: "queue_full", Status: 429, Dialect: DialectSeed, Type: ProblemOverloaded, When: "the batch would exceed the batch, process or per-principal capacity"},
	{Code: ProblemOverloaded, Status: 429, Dialect: DialectTools, When: "the executor's capacity cannot take the run now"},
	{Code: ProblemQuotaExceeded, Status: 429, Dialect: DialectTools, When: "the caller's bucket for the quota class is short"},
	{Code: ProblemConcurrencyExceeded, Status: 429, Dialect: DialectTools, When: "too many runs, jobs or uploads of the caller, or its tier, in flight"},
	{Code: ProblemThrottled, Status: 429, Dialect: DialectTools, When: "the per-target throttle of an egress tool; a sign-in past the credential burst"},
	{Code: ProblemInternal, Status: 500, Dialect: DialectBoth, When: "a bug, logged with the request id"},
	{Code: "service_unavailable", Status: 503, Dialect: DialectSeed, Type: ProblemServerUnavailable, When: "the executor is stopping, a lane quarantine, the quota store, or a code still loading"},
	{Code: "request_timeout", Status: 503, Dialect: DialectSeed, Type: ProblemRunTimeout, When: "the batch, or a read, missed its request budget"},
	{Code: "store_busy", Status: 503, Dialect: DialectSeed, Type: ProblemStoreBusy, When: "the credential store did not answer within its budget"},
	{Code: ProblemToolUnavailable, Status: 503, Dialect: DialectTools, When: "listed but cannot run here now; the issues say why"},
	{Code: ProblemRunTimeout, Status: 503, Dialect: DialectTools, When: "the run missed its request deadline"},
	{Code: ProblemServerUnavailable, Status: 503, Dialect: DialectTools, When: "the server is stopping, still loading its tools, or cannot count quotas"},
	{Code: ProblemStoreBusy, Status: 503, Dialect: DialectTools, When: "the credential or job store did not answer within its budget"},
	{Code: ProblemJobsUnavailable, Status: 503, Dialect: DialectTools, When: "the jobs routes of a server without jobs"},
	{Code: ProblemStorageFull, Status: 507, Dialect: DialectTools, When: "no room in the data folder; nothing was kept"},
}

// Problem returns the table's entry of code.
func Problem(code string) (ProblemCode, bool) {
	i := slices.IndexFunc(Problems, func(p ProblemCode) bool { return p.Code == code })
	if i < 0 {
		return ProblemCode{}, false
	}
	return Problems[i], true
}

// ProblemStatus is the HTTP status of code; 500 for a code the table does
// not list (a bug: TestProblemTable holds the mappers to the table).
func ProblemStatus(code string) int {
	if p, ok := Problem(code); ok {
		return p.Status
	}
	return 500
}

// ProblemStatuses are the statuses the table's codes have, ascending, each
// once.
func ProblemStatuses() []int {
	var out []int
	for _, p := range Problems {
		if !slices.Contains(out, p.Status) {
			out = append(out, p.Status)
		}
	}
	slices.Sort(out)
	return out
}

// CodesOf are the table's codes of status, in the table's order.
func CodesOf(status int) []string {
	var out []string
	for _, p := range Problems {
		if p.Status == status {
			out = append(out, p.Code)
		}
	}
	return out
}

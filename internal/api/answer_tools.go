// The ADR-027 answer dialect: problem+json documents with the tools.*
// problem codes of tools.run-request@1, for the tools, run, jobs and
// legacy routes. This file is the one place where a refusal of those
// routes — the application layer's, the jobs subsystem's, a body's —
// becomes an HTTP status and headers.

package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/store"
)

// The problem codes of the jobs routes that the run-request contract does
// not list: they concern a job, not a run.
const (
	ProblemJobNotFound      = "tools.job.not_found"
	ProblemJobExpired       = "tools.job.expired"
	ProblemJobState         = "tools.job.state_conflict"
	ProblemJobSignature     = "tools.job.signature_invalid"
	ProblemJobsUnavailable  = "tools.job.unavailable"
	ProblemJobStorageFull   = contracts.ProblemStorageFull
	problemJobInternalError = "internal_error"
)

// problemStatus is the HTTP status of each problem code.
var problemStatus = map[string]int{
	contracts.ProblemToolNotFound:         http.StatusNotFound,
	contracts.ProblemToolNotRunnable:      http.StatusNotFound,
	contracts.ProblemToolUnavailable:      http.StatusServiceUnavailable,
	contracts.ProblemInvalidRequest:       http.StatusBadRequest,
	contracts.ProblemUnsupportedMediaType: http.StatusUnsupportedMediaType,
	contracts.ProblemInvalidInput:         http.StatusUnprocessableEntity,
	contracts.ProblemPayloadTooLarge:      http.StatusRequestEntityTooLarge,
	contracts.ProblemBodyTimeout:          http.StatusRequestTimeout,
	contracts.ProblemFileType:             http.StatusUnsupportedMediaType,
	contracts.ProblemFileNotFound:         http.StatusNotFound,
	contracts.ProblemOverloaded:           http.StatusTooManyRequests,
	contracts.ProblemRunTimeout:           http.StatusServiceUnavailable,
	contracts.ProblemServerUnavailable:    http.StatusServiceUnavailable,
	contracts.ProblemStoreBusy:            http.StatusServiceUnavailable,
	contracts.ProblemStorageFull:          http.StatusInsufficientStorage,
	contracts.ProblemUnauthenticated:      http.StatusUnauthorized,
	contracts.ProblemForbidden:            http.StatusForbidden,
	contracts.ProblemQuotaExceeded:        http.StatusTooManyRequests,
	contracts.ProblemConcurrencyExceeded:  http.StatusTooManyRequests,
	contracts.ProblemThrottled:            http.StatusTooManyRequests,
	ProblemJobNotFound:                    http.StatusNotFound,
	ProblemJobExpired:                     http.StatusGone,
	ProblemJobState:                       http.StatusConflict,
	ProblemJobSignature:                   http.StatusForbidden,
	ProblemJobsUnavailable:                http.StatusServiceUnavailable,
	problemJobInternalError:               http.StatusInternalServerError,
	problemLegacyNotFound:                 http.StatusNotFound,
	ProblemCSRF:                           http.StatusForbidden,
}

// ProblemStatus is the HTTP status of an ADR-027 problem code; 500 for a
// code this dialect does not know.
func ProblemStatus(code string) int {
	if s, ok := problemStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// toolsProblem writes a problem document with an ADR-027 problem code,
// at the status the dialect gives it.
func toolsProblem(c *gin.Context, code, detail string) {
	writeProblem(c, Problem{Status: ProblemStatus(code), Code: code, Detail: detail})
}

// refusalCodes are the problem codes of the application layer's refusals.
var refusalCodes = map[run.Code]string{
	run.ToolNotFound:         contracts.ProblemToolNotFound,
	run.Loading:              contracts.ProblemServerUnavailable, // the server's state, not the tool's
	run.NotRunnable:          contracts.ProblemToolNotRunnable,
	run.ToolUnavailable:      contracts.ProblemToolUnavailable,
	run.InvalidInput:         contracts.ProblemInvalidInput,
	run.InputTooLarge:        contracts.ProblemPayloadTooLarge,
	run.Overloaded:           contracts.ProblemOverloaded,
	run.ServiceUnavailable:   contracts.ProblemServerUnavailable,
	run.Timeout:              contracts.ProblemRunTimeout,
	run.StoreBusy:            contracts.ProblemStoreBusy,
	run.Unauthenticated:      contracts.ProblemUnauthenticated,
	run.Forbidden:            contracts.ProblemForbidden,
	run.ChallengeFailed:      contracts.ProblemForbidden,
	run.CostExceedsAllowance: contracts.ProblemForbidden,
	run.QuotaExceeded:        contracts.ProblemQuotaExceeded,
	run.Concurrency:          contracts.ProblemConcurrencyExceeded,
	run.Throttled:            contracts.ProblemThrottled,
}

// setRefusalHeaders sets the headers every dialect sends with a refusal:
// the rate-limit fields, Retry-After where waiting helps, and the
// authentication challenge of a 401.
func setRefusalHeaders(c *gin.Context, r *run.Refusal) {
	setLimits(c, r.Limits)
	if r.RetryAfter > 0 {
		c.Header("Retry-After", retryAfter(r.RetryAfter))
	}
	if r.Code == run.Unauthenticated {
		challenge(c, r.InvalidCredentials)
	}
}

// challenge sets the WWW-Authenticate of a 401 (RFC 6750 §3): the Bearer
// scheme, with error="invalid_token" when the request presented
// credentials that did not resolve — none for a caller who presented none.
func challenge(c *gin.Context, invalid bool) {
	if invalid {
		c.Header("WWW-Authenticate", `Bearer realm="toolhost", error="invalid_token"`)
		return
	}
	c.Header("WWW-Authenticate", `Bearer realm="toolhost"`)
}

// retryAfter is a Retry-After value: whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// toolsRefusal answers err in the ADR-027 dialect: a *run.Refusal as its
// problem, the client's departure with nothing, anything else as a logged
// 500.
func (s *Server) toolsRefusal(c *gin.Context, err error) {
	r, ok := run.AsRefusal(err)
	if !ok {
		s.jobsProblem(c, err)
		return
	}
	setRefusalHeaders(c, r)
	code := refusalCodes[r.Code]
	p := Problem{Status: ProblemStatus(code), Code: code, Detail: r.Detail, Issues: r.Issues, IssueCount: r.IssueCount}
	if r.Retryable() {
		p.Retryable = new(true)
	}
	writeProblem(c, p)
}

// jobsProblem is the one place that maps the errors of the jobs subsystem,
// and of the bodies the jobs routes read, to problem documents.
func (s *Server) jobsProblem(c *gin.Context, err error) {
	var fe *jobs.FileError
	var mbe *http.MaxBytesError
	if _, ok := run.AsRefusal(err); ok {
		s.toolsRefusal(c, err)
		return
	}
	switch {
	case c.Request.Context().Err() != nil:
		c.Abort() // the client is gone
	case errors.Is(err, jobs.ErrStorageFull):
		// Nothing of the request was kept; the jobs subsystem logged the
		// folder, which is the operator's business, not the caller's.
		writeProblem(c, Problem{Status: ProblemStatus(ProblemJobStorageFull), Code: ProblemJobStorageFull,
			Detail: "The server has no room to store the job now; nothing was kept. Retry later.", Retryable: new(true)})
	case errors.Is(err, store.ErrBusy):
		// The database was locked past the request's budget (another
		// process, say); the jobs subsystem changed nothing.
		c.Header("Retry-After", "1")
		writeProblem(c, Problem{Status: ProblemStatus(contracts.ProblemStoreBusy), Code: contracts.ProblemStoreBusy,
			Detail: "The job store is busy; nothing was changed. Retry after the Retry-After.", Retryable: new(true)})
	case errors.As(err, &mbe):
		toolsProblem(c, contracts.ProblemPayloadTooLarge, tooLarge(mbe.Limit))
	case errors.Is(err, errUnexpectedPart):
		toolsProblem(c, contracts.ProblemFileType, "A file part names no file input of the tool.")
	case errors.Is(err, errMultipart):
		toolsProblem(c, contracts.ProblemInvalidRequest, "The multipart body is malformed.")
	case errors.As(err, &fe):
		switch {
		case errors.Is(fe.Err, jobs.ErrTooLarge):
			toolsProblem(c, contracts.ProblemPayloadTooLarge, fmt.Sprintf("The file %q is over the tool's limit of %d bytes.", fe.Name, fe.LimitBytes))
		case errors.Is(fe.Err, jobs.ErrFileType):
			toolsProblem(c, contracts.ProblemFileType, fmt.Sprintf("The file %q is %s, which the tool does not take.", fe.Name, fe.MediaType))
		case errors.Is(fe.Err, jobs.ErrReference), errors.Is(fe.Err, jobs.ErrExpired), errors.Is(fe.Err, jobs.ErrNoMediaStore):
			toolsProblem(c, contracts.ProblemFileNotFound, fmt.Sprintf("The file %q references nothing the caller may read.", fe.Name))
		default:
			toolsProblem(c, contracts.ProblemInvalidRequest, fmt.Sprintf("The file %q cannot be taken.", fe.Name))
		}
	case errors.Is(err, jobs.ErrNotFound):
		toolsProblem(c, ProblemJobNotFound, "No such job or file.")
	case errors.Is(err, jobs.ErrExpired):
		toolsProblem(c, ProblemJobExpired, "The file or the link has expired.")
	case errors.Is(err, jobs.ErrState):
		toolsProblem(c, ProblemJobState, "The job's state does not allow this.")
	case errors.Is(err, jobs.ErrSignature):
		toolsProblem(c, ProblemJobSignature, "The signed link is not valid.")
	case errors.Is(err, jobs.ErrUnknownType):
		toolsProblem(c, contracts.ProblemToolNotFound, "No tool runs jobs of this type.")
	case errors.Is(err, jobs.ErrInvalid):
		toolsProblem(c, contracts.ProblemInvalidRequest, "The job submission is not valid.")
	case errors.Is(err, jobs.ErrClosed):
		c.Header("Retry-After", "1")
		writeProblem(c, Problem{Status: ProblemStatus(contracts.ProblemServerUnavailable), Code: contracts.ProblemServerUnavailable,
			Detail: "The server is stopping; retry later.", Retryable: new(true)})
	default:
		s.cfg.Logger.Error("tools route failed", "route", c.FullPath(), "request_id", RequestID(c), "err", err)
		toolsProblem(c, problemJobInternalError, "The server failed to handle the request.")
	}
}

// setLimits sets the rate-limit fields of the quotas a decision consulted.
func setLimits(c *gin.Context, l guard.RateLimits) {
	h := c.Writer.Header()
	for _, v := range l.Policy {
		h.Add("RateLimit-Policy", v)
	}
	for _, v := range l.Limit {
		h.Add("RateLimit", v)
	}
}

// The ADR-027 answer dialect: problem+json documents with the tools.*
// problem codes of tools.run-request@1, for the tools, run, jobs and
// legacy routes. This file is the one place where a refusal of those
// routes — the application layer's, the jobs subsystem's, a body's —
// becomes an HTTP status and headers.

package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
)

// The problem codes of the jobs routes beside the run-request contract's.
const (
	ProblemJobNotFound     = contracts.ProblemJobNotFound
	ProblemJobExpired      = contracts.ProblemJobExpired
	ProblemJobState        = contracts.ProblemJobState
	ProblemJobSignature    = contracts.ProblemJobSignature
	ProblemJobsUnavailable = contracts.ProblemJobsUnavailable
	ProblemJobStorageFull  = contracts.ProblemStorageFull
)

// ProblemStatus is the HTTP status of a problem code, from the one table
// of them (contracts.Problems); 500 for a code it does not list.
func ProblemStatus(code string) int { return contracts.ProblemStatus(code) }

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
	run.InvalidRequest:       contracts.ProblemInvalidRequest,
	run.UnsupportedMediaType: contracts.ProblemUnsupportedMediaType,
	run.PayloadTooLarge:      contracts.ProblemPayloadTooLarge,
	run.BodyTimeout:          contracts.ProblemBodyTimeout,
	run.FileType:             contracts.ProblemFileType,
	run.FileNotFound:         contracts.ProblemFileNotFound,
	run.JobNotFound:          ProblemJobNotFound,
	run.JobExpired:           ProblemJobExpired,
	run.JobState:             ProblemJobState,
	run.JobSignature:         ProblemJobSignature,
	run.JobsUnavailable:      ProblemJobsUnavailable,
	run.StorageFull:          ProblemJobStorageFull,
	run.LegacyNotFound:       contracts.ProblemLegacyNotFound,
	run.MethodNotAllowed:     contracts.ProblemMethod,
	run.CSRFFailed:           ProblemCSRF,
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
// problem (the body's own refusal first, when the reading of a form failed
// and caused err), the client's departure with nothing, anything else as
// a logged 500.
func (s *Server) toolsRefusal(c *gin.Context, err error) {
	r, ok := run.AsRefusal(err)
	if fr := s.formRefusal(c); fr != nil {
		r, ok = fr, true
	}
	switch {
	case !ok && c.Request.Context().Err() != nil:
		c.Abort() // the client is gone
		return
	case !ok:
		s.cfg.Logger.Error("tools route failed", "route", c.FullPath(), "request_id", RequestID(c), "err", err)
		toolsProblem(c, contracts.ProblemInternal, "The server failed to handle the request.")
		return
	}
	setRefusalHeaders(c, r)
	if len(r.Allow) > 0 {
		c.Header("Allow", strings.Join(r.Allow, ", "))
	}
	code := refusalCodes[r.Code]
	p := Problem{Status: ProblemStatus(code), Code: code, Detail: r.Detail, Issues: r.Issues, IssueCount: r.IssueCount}
	if r.Retryable() {
		p.Retryable = new(true)
	}
	writeProblem(c, p)
}

// setLimits sets the rate-limit fields of the quotas a decision consulted.
func setLimits(c *gin.Context, l run.RateLimits) {
	h := c.Writer.Header()
	for _, v := range l.Policy {
		h.Add("RateLimit-Policy", v)
	}
	for _, v := range l.Limit {
		h.Add("RateLimit", v)
	}
}

// The seed-000 answer dialect: the problem documents of the authenticated
// catalog, compute and diagnostics routes, with the contract's codes
// (docs/http.md). This file is the one place where a refusal of those
// routes becomes an HTTP status and headers; per-item outcomes stay in
// the compute envelope.

package api

import (
	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
)

// seedCodes are the seed-000 codes of the application layer's refusals on
// the compute route. A refusal of a batch is an execution error of the
// contract (queue_full, service_unavailable, request_timeout) or the
// guard's reason.
var seedCodes = map[run.Code]string{
	run.Unauthenticated:      "unauthorized",
	run.StoreBusy:            "store_busy",
	run.Forbidden:            "forbidden",
	run.ChallengeFailed:      "challenge_failed",
	run.CostExceedsAllowance: "cost_exceeds_allowance",
	run.QuotaExceeded:        "quota_exceeded",
	run.Concurrency:          "concurrency",
	run.Throttled:            "throttled",
	run.Overloaded:           "queue_full",
	run.ServiceUnavailable:   "service_unavailable",
	run.Loading:              "service_unavailable",
	run.Timeout:              "request_timeout",
}

// seedDetails replace the application layer's sentence where the seed
// routes say more.
var seedDetails = map[run.Code]string{
	run.Overloaded:    "The batch would exceed the batch, process or per-principal capacity; nothing of it ran.",
	run.QuotaExceeded: "The caller's allowance for this kind of run is spent; nothing of the batch ran. Retry after the Retry-After.",
	run.Concurrency:   "Too many runs of this caller, or of its tier, are in flight; nothing of the batch ran. Retry after the Retry-After.",
	run.Timeout:       "The batch did not finish within its request deadline.",
}

// problem writes a seed-000 problem document with code, at the status the
// dialect gives it, and aborts the request.
func problem(c *gin.Context, code, detail string) {
	writeProblem(c, Problem{Status: contracts.ProblemStatus(code), Code: code, Detail: detail})
}

// seedRefusal answers err on a seed-000 route: a *run.Refusal as its
// problem (Retry-After and retryable where waiting helps), the client's
// departure with nothing, anything else as a logged 503.
func (s *Server) seedRefusal(c *gin.Context, err error) {
	r, ok := run.AsRefusal(err)
	switch {
	case c.Request.Context().Err() != nil:
		c.Abort() // the client is gone: nobody reads an answer
		return
	case !ok:
		s.cfg.Logger.Error("compute failed", "request_id", RequestID(c), "err", err)
		r = &run.Refusal{Code: run.ServiceUnavailable, Detail: "The executor failed to run the batch."}
	}
	setRefusalHeaders(c, r)
	code, ok := seedCodes[r.Code]
	if !ok {
		code = "service_unavailable"
	}
	detail := r.Detail
	if d, ok := seedDetails[r.Code]; ok {
		detail = d
	}
	p := Problem{Status: contracts.ProblemStatus(code), Code: code, Detail: detail}
	if r.Retryable() || r.Code == run.ServiceUnavailable {
		p.Retryable = new(r.Retryable() || r.Code == run.ServiceUnavailable)
	}
	writeProblem(c, p)
}

// methodProblem answers a wrong method on a known route: 405
// method_not_allowed, its Allow header set by the caller.
func methodProblem(c *gin.Context) {
	problem(c, "method_not_allowed", "The route does not take this method; Allow lists those it takes.")
}

package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"toolhost/internal/abuse"
	"toolhost/internal/contracts"
	"toolhost/internal/executor"
	"toolhost/internal/guard"
)

// The guard in front of the run, job and legacy routes (ADR-027 "Callers,
// tiers and quotas"): resolveCaller resolves the caller once per request,
// admit asks the guard whether a run may start, and refusals and reported
// decisions go to the abuse log and the metrics. The guard itself is plain
// Go over net/http; this file is the one place its decisions become HTTP.

// AbuseLog records refused and reported runs; *abuse.Log implements it.
// Record is called on the request path of every refusal, so it must not
// wait on a database: *abuse.Log counts in memory and writes off the path,
// answering abuse.ErrDropped (counted, not logged here) when it is full.
type AbuseLog interface {
	Record(ctx context.Context, e abuse.Entry) error
}

// storeBusy answers 503 tools.store.busy with Retry-After: the database is
// locked (by another process, say) and the request's credential is not in
// memory. Anonymous callers and cached credentials never get it.
func storeBusy(c *gin.Context) {
	c.Header("Retry-After", "1")
	writeProblem(c, Problem{Status: http.StatusServiceUnavailable, Code: contracts.ProblemStoreBusy,
		Detail: "The credential store is busy; retry after the Retry-After."})
}

// guardCallerKey is where resolveCaller leaves the guard.Caller.
const guardCallerKey = "toolhost.guard.caller"

// guardCaller returns the request's resolved caller; the anonymous zero
// Caller when resolveCaller did not run.
func guardCaller(c *gin.Context) guard.Caller {
	v, _ := c.Get(guardCallerKey)
	caller, _ := v.(guard.Caller)
	return caller
}

// resolveCaller resolves the caller once per request with the guard:
// a bearer token or the token cookie (user or app), the session cookie
// (session), or nothing (anonymous, keyed by the client address behind
// the trusted proxies only). Credentials that do not resolve are refused
// with 401, never downgraded to anonymous, and abuse-logged.
func (s *Server) resolveCaller(c *gin.Context) {
	caller, err := s.guard.Resolve(c.Request.Context(), presented(c.Request), s.cfg.Credentials)
	if errors.Is(err, guard.ErrUnavailable) {
		s.cfg.Logger.Warn("credential store busy", "route", c.FullPath(), "err", err)
		storeBusy(c)
		return
	}
	if err != nil {
		s.recordAbuse(c, abuse.Entry{IP: caller.IP, Reason: string(guard.ReasonUnauthenticated)})
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.CountRefusal(string(guard.ReasonUnauthenticated))
		}
		c.Header("WWW-Authenticate", `Bearer realm="toolhost"`)
		toolsProblem(c, contracts.ProblemUnauthenticated, "The credentials are not those of an active account, app or session.")
		return
	}
	c.Set(guardCallerKey, caller)
	// The caller key owns jobs and is the executor's principal.
	c.Set(callerKey, caller.Key)
	c.Next()
}

// isAnonymousKey reports whether a caller key is an anonymous caller's,
// which holds its address: the guard's "ip:" keys and the older
// "anonymous:" form.
func isAnonymousKey(key string) bool {
	return strings.HasPrefix(key, "ip:") || strings.HasPrefix(key, anonymousPrefix)
}

// guardRequest is what the guard needs of a run of tool with input.
func guardRequest(tool contracts.Tool, input map[string]any) guard.Request {
	req := guard.Request{Tool: tool.ID, QuotaClass: tool.QuotaClass, Cost: tool.Cost,
		Anonymous: tool.Auth.Anonymous, Egress: tool.Egress, PerTargetPerMinute: tool.Limits.PerTargetPerMinute}
	if tool.Auth.Capability != nil {
		req.Capability = *tool.Auth.Capability
	}
	if tool.Egress {
		req.Target = egressTarget(input)
	}
	return req
}

// egressTarget is the target an egress run is aimed at: the input's
// "host", or the host of its "url", or its "name" (a DNS name); the guard
// normalises it.
func egressTarget(input map[string]any) string {
	for _, k := range []string{"host", "url", "name"} {
		if v, ok := input[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// admit asks the guard whether the caller may run tool with input. The
// decision's rate-limit headers are set on the answer either way. On a
// refusal it writes the problem, logs the refusal and reports false. A
// decision reported in report mode is logged and the run goes on — except
// authentication and capability refusals, which are enforced in every mode:
// they are not quotas being rolled out but the protection of the probes,
// whose workers do not know the caller. The release func (never nil) ends
// the run's concurrency slots; call it when the run ends.
func (s *Server) admit(c *gin.Context, tool contracts.Tool, input map[string]any) (func(), bool) {
	d, release, ok := s.decide(c, guardCaller(c), guardRequest(tool, input))
	if !ok {
		s.refuse(c, d)
	}
	return release, ok
}

// decide asks the guard whether caller may run req and records the
// decision: the rate-limit headers on the answer, the abuse-log row and
// the metrics of a refused or reported decision. It reports false for a
// refusal, with nothing held, and leaves the problem to its caller, which
// writes it in its route's style. The release func (never nil) ends the
// run's concurrency slots.
func (s *Server) decide(c *gin.Context, caller guard.Caller, req guard.Request) (guard.Decision, func(), bool) {
	d, release := s.guard.Admit(c.Request.Context(), caller, req)
	h := c.Writer.Header()
	for _, v := range d.Limits.Policy {
		h.Add("RateLimit-Policy", v)
	}
	for _, v := range d.Limits.Limit {
		h.Add("RateLimit", v)
	}
	if !d.Allowed && d.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(d.RetryAfterSeconds))
	}
	hard := d.Reason == guard.ReasonUnauthenticated || d.Reason == guard.ReasonForbidden
	m := s.cfg.Metrics
	if d.Reason != "" && (!d.Allowed || hard) {
		release()
		s.recordAbuse(c, abuse.Entry{IP: caller.IP, Principal: caller.Principal, Tool: req.Tool, Reason: string(d.Reason)})
		if m != nil {
			m.CountRefusal(string(d.Reason))
			m.CountQuotaDecision(d.Class, d.Column, "refused")
		}
		return d, func() {}, false
	}
	if d.Reported {
		s.recordAbuse(c, abuse.Entry{IP: caller.IP, Principal: caller.Principal, Tool: req.Tool, Reason: string(d.Reason), Reported: true})
	}
	if m != nil {
		decision := "allowed"
		if d.Reported {
			decision = "reported"
		}
		m.CountQuotaDecision(d.Class, d.Column, decision)
	}
	return d, release, true
}

// refuse writes the problem of a refused decision.
func (s *Server) refuse(c *gin.Context, d guard.Decision) {
	switch d.Reason {
	case guard.ReasonUnauthenticated:
		c.Header("WWW-Authenticate", `Bearer realm="toolhost"`)
		toolsProblem(c, contracts.ProblemUnauthenticated, "This tool needs at least a browser session or a token.")
	case guard.ReasonForbidden:
		toolsProblem(c, contracts.ProblemForbidden, "This tool needs a capability the caller's credential was not granted.")
	case guard.ReasonChallenge:
		toolsProblem(c, contracts.ProblemForbidden, "The request did not pass the challenge.")
	case guard.ReasonCostExceedsAllowance:
		// Not a 429: waiting would never help.
		toolsProblem(c, contracts.ProblemForbidden, "A run of this tool costs more than the caller's tier may ever spend at once; waiting will not help.")
	case guard.ReasonThrottled:
		toolsProblem(c, contracts.ProblemThrottled, "Too many runs of this tool against this target; retry after the Retry-After.")
	default: // quota_exceeded, concurrency
		toolsProblem(c, contracts.ProblemQuotaExceeded, "The caller's allowance for this kind of run is spent; retry after the Retry-After.")
	}
}

// recordAbuse counts one event in the abuse log, without waiting on its
// database. A failure is logged without the address and does not change
// the answer; a drop (the log's pending table is full, under a flood) is
// not logged, which would turn the flood into log lines: the log counts it
// (toolhost_abuse_dropped_total).
func (s *Server) recordAbuse(c *gin.Context, e abuse.Entry) {
	if s.cfg.Abuse == nil {
		return
	}
	e.RequestID = RequestID(c)
	if err := s.cfg.Abuse.Record(context.WithoutCancel(c.Request.Context()), e); err != nil && !errors.Is(err, abuse.ErrDropped) {
		s.cfg.Logger.Warn("abuse log", "tool", e.Tool, "reason", e.Reason, "err", err)
	}
}

// countRun counts one finished run of tool in the metrics.
func (s *Server) countRun(tool string, r *executor.ItemResult, d time.Duration) {
	if s.cfg.Metrics == nil || r == nil {
		return
	}
	outcome := r.Status
	if r.Error != nil {
		outcome = string(r.Error.Code)
	}
	s.cfg.Metrics.CountRun(tool, outcome)
	s.cfg.Metrics.ObserveItemDuration(tool, d)
}

// presented is what r presents to the guard.
func presented(r *http.Request) guard.Presented {
	return guard.Presented{Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For"),
		RealIP: r.Header.Get("X-Real-IP"), Authorization: r.Header.Get("Authorization"),
		Cookie: func(name string) string {
			ck, err := r.Cookie(name)
			if err != nil {
				return ""
			}
			return ck.Value
		}}
}

// reasonStatus is the seed-000 status of a guard refusal.
func reasonStatus(r guard.Reason) int {
	switch r {
	case guard.ReasonUnauthenticated:
		return http.StatusUnauthorized
	case guard.ReasonForbidden, guard.ReasonChallenge:
		return http.StatusForbidden
	case guard.ReasonCostExceedsAllowance:
		return http.StatusUnprocessableEntity
	}
	return http.StatusTooManyRequests
}

package api

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"toolhost/internal/catalog"
	"toolhost/internal/executor"
	"toolhost/internal/guard"
	"toolhost/internal/schema"
	"toolhost/internal/toolerr"
	"toolhost/internal/wire"
)

//go:embed contracts/compute-request.json
var computeRequestSchema []byte

// computeEnvelope validates the compute request's envelope: identity
// fields and bounds, never the contents of an item's parameters, which
// keep their own per-item boundary.
var computeEnvelope = func() *schema.Validator {
	doc, err := wire.Decode(computeRequestSchema, wire.Limits{})
	if err != nil {
		panic(fmt.Sprintf("api: compute request schema: %v", err))
	}
	v, err := schema.Compile(doc)
	if err != nil {
		panic(fmt.Sprintf("api: compute request schema: %v", err))
	}
	return v
}()

// envelopeDepth is how deep the compute envelope nests an item's
// parameters.
const envelopeDepth = 3

// Issue codes of the envelope check beyond the schema's.
const issueDuplicateCorrelation = "duplicate_correlation_id"

func (s *Server) compute(c *gin.Context) {
	start := time.Now() // server_processing_ms starts before the body is read
	body, ok := s.readBody(c)
	if !ok {
		return
	}
	// The parameters' own depth is the executor's to check, per item
	// (input_limit_exceeded); the body is refused whole only when it nests
	// far deeper than any item may.
	doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(s.cfg.Platform.MaxRequestBodyBytes), MaxDepth: 2*s.cfg.Platform.MaxJSONDepth + envelopeDepth})
	if err != nil {
		problem(c, http.StatusBadRequest, "invalid_json", jsonRefusal(err))
		return
	}
	batch, perr := s.envelope(doc)
	if perr != nil {
		writeProblem(c, *perr)
		return
	}
	batch.Principal = c.GetString(principalKey)
	batch.Start = start
	if tool, ok := s.lackedCapability(c, batch.Items); !ok {
		// The whole batch is refused before anything runs: a batch that
		// names a tool its token may not run is a caller error, not an
		// item failure.
		problem(c, http.StatusForbidden, "forbidden", "The token lacks the capability the tool "+strconv.Quote(tool)+" needs; nothing of the batch ran.")
		return
	}

	release, ok := s.admitBatch(c, batch.Items)
	if !ok {
		return
	}
	defer release()

	// The batch runs under the largest request budget of its items; the
	// request's context also ends when the client goes away, which
	// cancels the batch.
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.Executor.BatchRequestTimeout(batch.Items))
	defer cancel()
	res, err := s.cfg.Executor.Compute(ctx, batch)
	switch {
	case err == nil:
		for i := range res.Results {
			r := &res.Results[i]
			var d time.Duration
			if r.Metrics.TotalMS != nil {
				d = time.Duration(*r.Metrics.TotalMS * float64(time.Millisecond))
			}
			s.countRun(r.ToolCode, r, d)
		}
		writeJSON(c, http.StatusOK, "application/json", res)
	case c.Request.Context().Err() != nil:
		// The client is gone: nobody reads an answer.
		s.cfg.Logger.Info("compute cancelled by the client", "request_id", batch.RequestID)
		c.Abort()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		problem(c, http.StatusServiceUnavailable, "request_timeout", "The batch did not finish within its request deadline.")
	default:
		var te *toolerr.Error
		if errors.As(err, &te) {
			executionProblem(c, te)
			return
		}
		s.cfg.Logger.Error("compute failed", "request_id", batch.RequestID, "err", err)
		problem(c, http.StatusServiceUnavailable, string(toolerr.ServiceUnavailable), "The executor failed to run the batch.")
	}
}

// readBody reads the request body within the platform's byte cap and
// ingress budget, or writes the refusal: 413 past the cap, 408 when the
// body does not arrive in time.
func (s *Server) readBody(c *gin.Context) ([]byte, bool) {
	if ingress := s.cfg.Platform.IngressTimeoutMS; ingress > 0 {
		// Best effort: a writer that cannot set read deadlines is read
		// under the server's own timeouts.
		_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(time.Duration(ingress) * time.Millisecond))
	}
	limit := s.cfg.Platform.MaxRequestBodyBytes
	if c.Request.ContentLength > limit {
		problem(c, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge(limit))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(c, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge(limit))
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		problem(c, http.StatusRequestTimeout, "request_body_timeout", "The request body did not arrive within the ingress budget.")
		return nil, false
	case err != nil:
		problem(c, http.StatusBadRequest, "invalid_body", "The request body could not be read.")
		return nil, false
	}
	return body, true
}

func tooLarge(limit int64) string {
	return "The request body is over the limit of " + strconv.FormatInt(limit, 10) + " bytes."
}

// jsonRefusal says why a body is not strict JSON, without quoting it.
func jsonRefusal(err error) string {
	var we *wire.Error
	offset := ""
	if errors.As(err, &we) {
		offset = " at byte " + strconv.FormatInt(we.Offset, 10)
	}
	switch {
	case errors.Is(err, wire.ErrDuplicateName):
		return "Duplicate object member name" + offset + "."
	case errors.Is(err, wire.ErrNonFinite):
		return "Number that is not finite" + offset + "."
	case errors.Is(err, wire.ErrTooDeep):
		return "Nesting deeper than the platform allows" + offset + "."
	case errors.Is(err, wire.ErrTooLarge):
		return "The body is over the byte limit."
	case errors.Is(err, wire.ErrInvalidUTF8), errors.Is(err, wire.ErrLoneSurrogate), errors.Is(err, wire.ErrByteOrderMark):
		return "The body is not valid UTF-8 JSON text" + offset + "."
	}
	return "The body is not valid JSON" + offset + "."
}

// envelope validates a decoded compute request and returns its batch, or
// the 422 problem with sanitised issues.
func (s *Server) envelope(doc any) (executor.Batch, *Problem) {
	invalid := func(issues []toolerr.Issue, count int) *Problem {
		return &Problem{Status: http.StatusUnprocessableEntity, Code: "invalid_envelope",
			Detail: "The request envelope is invalid.", Issues: issues, IssueCount: count}
	}
	if err := computeEnvelope.Validate(doc, toolerr.InvalidParameters); err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return executor.Batch{}, invalid(te.Issues, te.IssueCount)
		}
		return executor.Batch{}, invalid(nil, 0)
	}
	m := doc.(map[string]any)
	b := executor.Batch{RequestID: m["request_id"].(string)}
	seen := map[string]int{}
	var dups []toolerr.Issue
	for i, raw := range m["items"].([]any) {
		it := raw.(map[string]any)
		params, err := wire.Encode(it["parameters"], wire.Limits{MaxBytes: int(s.cfg.Platform.MaxRequestBodyBytes), MaxDepth: 2 * s.cfg.Platform.MaxJSONDepth})
		if err != nil { // cannot happen for a value wire decoded within the same limits
			return executor.Batch{}, invalid([]toolerr.Issue{toolerr.NewIssue(schema.IssueInvalid, "items", strconv.Itoa(i), "parameters")}, 1)
		}
		item := executor.Item{
			CorrelationID:         it["correlation_id"].(string),
			ToolCode:              it["tool_code"].(string),
			ContractVersion:       it["contract_version"].(string),
			ImplementationVersion: it["implementation_version"].(string),
			SchemaFingerprint:     it["schema_fingerprint"].(string),
			Parameters:            params,
		}
		if _, dup := seen[item.CorrelationID]; dup {
			dups = append(dups, toolerr.NewIssue(issueDuplicateCorrelation, "items", strconv.Itoa(i), "correlation_id"))
		}
		seen[item.CorrelationID] = i
		b.Items = append(b.Items, item)
	}
	if len(dups) > 0 {
		return executor.Batch{}, invalid(dups, len(dups))
	}
	return b, nil
}

// lackedCapability checks that the caller holds the capability of every
// item's tool (the network probes need tools.net.probe); it returns the
// first tool whose capability is missing and false. An item naming an
// unknown tool passes: the executor answers it per item.
func (s *Server) lackedCapability(c *gin.Context, items []executor.Item) (string, bool) {
	caps := c.GetStringSlice(capabilitiesKey)
	snap := s.cfg.Snapshot()
	for _, it := range items {
		svc, ok := snap.Service(it.ToolCode)
		if !ok {
			continue
		}
		if t := catalog.Tool(svc); t.Auth.Capability != nil && !slices.Contains(caps, *t.Auth.Capability) {
			return it.ToolCode, false
		}
	}
	return "", true
}

// admitBatch admits a compute batch with the guard before any item runs
// (docs/guard.md, "The compute route"): once per distinct quota class
// among its resolvable items, with the summed cost of that class's items,
// so that the batch holds one concurrency slot per class, not one per
// item. Items naming an unknown tool are not counted: the executor answers
// them per item without running anything. A refusal of any class refuses
// the whole batch before anything runs, with a seed-000 problem (the
// reason as its code, Retry-After and the RateLimit fields on a 429); the
// slots of the classes admitted before it are released, their spent cost
// is not refunded. In report mode a would-be refusal is logged and the
// batch goes on. The release func (never nil) frees every slot; call it
// when the batch ends. Capabilities are checked before, by
// lackedCapability; per-target throttles do not apply to batches.
func (s *Server) admitBatch(c *gin.Context, items []executor.Item) (func(), bool) {
	caller, err := s.guard.Resolve(c.Request.Context(), presented(c.Request), s.cfg.Credentials)
	if err != nil {
		// authenticate accepted the token an instant ago: it was revoked
		// in between.
		unauthorized(c)
		return func() {}, false
	}
	snap := s.cfg.Snapshot()
	classes := map[string]*guard.Request{}
	for _, it := range items {
		svc, ok := snap.Service(it.ToolCode)
		if !ok {
			continue
		}
		t := catalog.Tool(svc)
		req, ok := classes[t.QuotaClass]
		if !ok {
			// The bearer token is at least a user: the anonymous flag
			// and the capability (checked already) do not apply.
			req = &guard.Request{Tool: t.ID, QuotaClass: t.QuotaClass, Anonymous: true}
			classes[t.QuotaClass] = req
		}
		req.Cost += max(t.Cost, 1)
	}
	var releases []func()
	releaseAll := func() {
		for _, r := range releases {
			r()
		}
	}
	for _, class := range slices.Sorted(maps.Keys(classes)) {
		d, release, ok := s.decide(c, caller, *classes[class])
		if !ok {
			releaseAll()
			batchRefusal(c, d)
			return func() {}, false
		}
		releases = append(releases, release)
	}
	return releaseAll, true
}

// batchRefusal writes the seed-000 problem of a refused batch: the guard's
// status and reason code; a 429 is retryable, with the Retry-After the
// decision set.
func batchRefusal(c *gin.Context, d guard.Decision) {
	p := Problem{Status: reasonStatus(d.Reason), Code: string(d.Reason)}
	switch d.Reason {
	case guard.ReasonCostExceedsAllowance:
		p.Detail = "The batch costs more than the caller's tier may ever spend at once; nothing of it ran, and waiting will not help."
	case guard.ReasonChallenge:
		p.Detail = "The request did not pass the challenge; nothing of the batch ran."
	default:
		p.Detail = "The caller's allowance for this kind of run is spent; nothing of the batch ran. Retry after the Retry-After."
	}
	if p.Status == http.StatusTooManyRequests {
		retryable := true
		p.Retryable = &retryable
	}
	writeProblem(c, p)
}

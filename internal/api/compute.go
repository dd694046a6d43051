package api

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
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
	// The parameters' own depth is the application layer's to check, per
	// item (input_limit_exceeded); the body is refused whole only when it
	// nests far deeper than any item may.
	p := s.platform
	doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2*p.MaxJSONDepth + envelopeDepth})
	if err != nil {
		problem(c, "invalid_json", jsonRefusal(err))
		return
	}
	requestID, items, perr := envelope(doc)
	if perr != nil {
		writeProblem(c, *perr)
		return
	}
	ans, err := s.cfg.Run.Compute(c.Request.Context(), origin(c), requestID, items, start)
	if err != nil {
		s.seedRefusal(c, err)
		return
	}
	setLimits(c, ans.Limits)
	writeBatch(c, ans.Result)
}

// writeBatch answers a batch with its seed-000 document, encoded by hand
// (appendSeedBatch: writeJSON's bytes) into a pooled buffer, as writeJSON
// pools its own.
func writeBatch(c *gin.Context, res *run.BatchOutcome) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			buf.Reset()
			jsonBuffers.Put(buf)
		}
	}()
	b, err := appendSeedBatch(buf.AvailableBuffer(), res)
	if err != nil {
		writeJSON(c, http.StatusOK, "application/json", res) // its internal_error answer
		return
	}
	buf.Write(b) // keeps a grown slice with the pooled buffer
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

// readBody reads the request body within the platform's byte cap and
// ingress budget, or writes the refusal: 413 past the cap, 408 when the
// body does not arrive in time.
func (s *Server) readBody(c *gin.Context) ([]byte, bool) {
	if ingress := s.platform.IngressTimeoutMS; ingress > 0 {
		// Best effort: a writer that cannot set read deadlines is read
		// under the server's own timeouts.
		_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(time.Duration(ingress) * time.Millisecond))
	}
	limit := s.platform.MaxRequestBodyBytes
	if c.Request.ContentLength > limit {
		problem(c, "payload_too_large", tooLarge(limit))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(c, "payload_too_large", tooLarge(limit))
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		problem(c, "request_body_timeout", "The request body did not arrive within the ingress budget.")
		return nil, false
	case err != nil:
		problem(c, "invalid_body", "The request body could not be read.")
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

// envelope validates a decoded compute request and returns its request
// id and items, their parameters as decoded, or the 422 problem with
// sanitised issues.
func envelope(doc any) (string, []run.BatchItem, *Problem) {
	invalid := func(issues []toolerr.Issue, count int) *Problem {
		return &Problem{Status: contracts.ProblemStatus("invalid_envelope"), Code: "invalid_envelope",
			Detail: "The request envelope is invalid.", Issues: issues, IssueCount: count}
	}
	if !plainEnvelope(doc) {
		if err := computeEnvelope.Validate(doc, toolerr.InvalidParameters); err != nil {
			var te *toolerr.Error
			if errors.As(err, &te) {
				return "", nil, invalid(te.Issues, te.IssueCount)
			}
			return "", nil, invalid(nil, 0)
		}
	}
	m := doc.(map[string]any)
	raws := m["items"].([]any)
	items := make([]run.BatchItem, 0, len(raws))
	seen := make(map[string]bool, len(raws))
	var dups []toolerr.Issue
	for i, raw := range raws {
		it := raw.(map[string]any)
		item := run.BatchItem{
			CorrelationID:         it["correlation_id"].(string),
			ToolCode:              it["tool_code"].(string),
			ContractVersion:       it["contract_version"].(string),
			ImplementationVersion: it["implementation_version"].(string),
			SchemaFingerprint:     it["schema_fingerprint"].(string),
			Parameters:            it["parameters"],
		}
		if seen[item.CorrelationID] {
			dups = append(dups, toolerr.NewIssue(issueDuplicateCorrelation, "items", strconv.Itoa(i), "correlation_id"))
		}
		seen[item.CorrelationID] = true
		items = append(items, item)
	}
	if len(dups) > 0 {
		return "", nil, invalid(dups, len(dups))
	}
	return m["request_id"].(string), items, nil
}

// plainEnvelope reports whether doc certainly passes the compute request
// schema (contracts/compute-request.json), checked by hand without the
// schema validator: a request_id and 1 to 4 items, each with exactly its
// six members, every string within the schema's bounds and patterns.
// It may say false of a valid document (a version string over 64 bytes
// but within 64 characters, say), never true of an invalid one: a false
// sends the document through the schema, which decides and names the
// issues. TestPlainEnvelope holds it to the schema.
func plainEnvelope(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok || len(m) != 2 {
		return false
	}
	id, ok := m["request_id"].(string)
	if !ok || !idString(id) {
		return false
	}
	items, ok := m["items"].([]any)
	if !ok || len(items) < 1 || len(items) > 4 {
		return false
	}
	for _, raw := range items {
		it, ok := raw.(map[string]any)
		if !ok || len(it) != 6 {
			return false
		}
		if _, ok := it["parameters"]; !ok {
			return false
		}
		cid, _ := it["correlation_id"].(string)
		code, _ := it["tool_code"].(string)
		cv, _ := it["contract_version"].(string)
		iv, _ := it["implementation_version"].(string)
		fp, _ := it["schema_fingerprint"].(string)
		if !idString(cid) || !toolCodeString(code) || !versionString(cv) || !versionString(iv) || !fingerprintString(fp) {
			return false
		}
	}
	return true
}

// idString: 1 to 128 of [A-Za-z0-9._:-] (request_id, correlation_id).
func idString(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == ':', b == '-':
		default:
			return false
		}
	}
	return true
}

// toolCodeString: ^[a-z][a-z0-9_]*$, 1 to 64 bytes.
func toolCodeString(s string) bool {
	if len(s) < 1 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9', b == '_':
		default:
			return false
		}
	}
	return true
}

// versionString: 1 to 64 bytes, hence 1 to 64 characters.
func versionString(s string) bool { return len(s) >= 1 && len(s) <= 64 }

// fingerprintString: ^[0-9a-f]{64}$.
func fingerprintString(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < '0' || b > '9') && (b < 'a' || b > 'f') {
			return false
		}
	}
	return true
}

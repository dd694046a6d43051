// The bodies of the run, jobs and legacy routes as the use cases read them
// (run.Body): JSON or a multipart form, each decoded in its route's shape,
// read only when the use case asks. A refusal of a body is a *run.Refusal
// with a body code, answered by toolsRefusal like every other.

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/wire"
)

// bodyShape is the document a route's body holds.
type bodyShape int

const (
	// runShape is a tools.run-request@1 document, or the run form's
	// "input", "files" (or "references") and "wait_ms" parts.
	runShape bodyShape = iota
	// jobShape is a jobs request {type, input, references}, or its form.
	jobShape
	// legacyShape is a JSON object of the tool's parameters, or the old
	// upload form's text fields.
	legacyShape
)

// requestBody is the body of c in a route's shape, as run.Body.
type requestBody struct {
	s     *Server
	c     *gin.Context
	shape bodyShape
	// form is set for a multipart body; mp once its head is read.
	form bool
	mp   *multipartBody
	// unsupported is set for a media type the routes do not take.
	unsupported bool
}

// newBody returns the body of c in shape. JSON (or none) and
// multipart/form-data are taken; any other media type is refused when the
// use case reads the body, so that what it checks before (the tool, the
// caller) answers first.
func (s *Server) newBody(c *gin.Context, shape bodyShape) *requestBody {
	b := &requestBody{s: s, c: c, shape: shape}
	switch c.ContentType() {
	case "multipart/form-data":
		b.form = true
	case "application/json", "":
	default:
		b.unsupported = true
	}
	return b
}

// bodyRefusal is the refusal of a body.
func bodyRefusal(code run.Code, detail string) *run.Refusal {
	return &run.Refusal{Code: code, Detail: detail}
}

func (b *requestBody) Upload() bool { return b.form }

// Done ends the reading of a form: what is left of it is discarded within
// the grace period.
func (b *requestBody) Done() {
	if b.mp != nil {
		b.mp.body.done()
	}
}

// Err is the form's own refusal once its reading failed (formRefusal).
func (b *requestBody) Err() error {
	if err := b.s.formRefusal(b.c); err != nil {
		return err
	}
	return nil
}

// Uploads are the form's file parts, for spec's file inputs.
func (b *requestBody) Uploads(spec run.BodySpec) iter.Seq2[run.Upload, error] {
	if b.mp == nil {
		return nil
	}
	return b.mp.uploads(spec.Files, spec.MaxFileBytes)
}

// Read reads the body's document in its route's shape.
func (b *requestBody) Read(_ context.Context, spec run.BodySpec) (*run.Request, error) {
	switch {
	case b.unsupported && b.shape == jobShape:
		return nil, bodyRefusal(run.UnsupportedMediaType, "A job is application/json or multipart/form-data.")
	case b.unsupported && b.shape == runShape:
		return nil, bodyRefusal(run.UnsupportedMediaType, "A run is application/json or multipart/form-data.")
	}
	switch b.shape {
	case jobShape:
		return b.readJob()
	case legacyShape:
		return b.readLegacy()
	}
	return b.readRun(spec)
}

// readRun reads a run request: JSON, or the run form's parts — the same
// for every tool (issue 16, item 8): "input" and "wait_ms", and for a job
// tool "files" (or "references", the jobs API's name of them); a sync
// tool's form that has a file part (or any other) names no file input of
// the tool and is refused file_type.
func (b *requestBody) readRun(spec run.BodySpec) (*run.Request, error) {
	if !b.form {
		raw, err := b.s.readToolsBody(b.c)
		if err != nil {
			return nil, err
		}
		doc, err := b.s.decodeJSON(raw, "")
		if err != nil {
			return nil, err
		}
		return runRequest(doc)
	}
	names := []string{"input", "wait_ms"}
	if spec.Job {
		names = append(names, "files", "references")
	}
	if err := b.open(b.s.jobFormLimits(names...)); err != nil {
		return nil, err
	}
	mp := b.mp
	if !spec.Job && mp.next != nil {
		return nil, bodyRefusal(run.FileType, fmt.Sprintf("The part %q names no file input of the tool: it takes none.", mp.next.FormName()))
	}
	_, hasFiles := mp.fields["files"]
	_, hasRefs := mp.fields["references"]
	if hasFiles && hasRefs {
		return nil, bodyRefusal(run.InvalidRequest, `A run form has a "files" or a "references" part, not both.`)
	}
	doc := map[string]any{}
	raw, ok := mp.fields["input"]
	if !ok {
		raw = []byte("{}")
	}
	var err error
	if doc["input"], err = b.s.decodeJSON(raw, "input"); err != nil {
		return nil, err
	}
	for _, name := range []string{"files", "references", "wait_ms"} {
		raw, ok := mp.fields[name]
		if !ok {
			continue
		}
		key := name
		if name == "references" {
			key = "files"
		}
		if doc[key], err = b.s.decodeJSON(raw, name); err != nil {
			return nil, err
		}
	}
	return runRequest(doc)
}

// open reads the form's head within lim.
func (b *requestBody) open(lim formLimits) error {
	mp, err := b.s.readMultipartHead(b.c, lim)
	if err != nil {
		return err
	}
	b.mp = mp
	return nil
}

// decodeJSON decodes a JSON body, or the JSON field part named part of a
// form, within the platform's bounds.
func (s *Server) decodeJSON(raw []byte, part string) (any, error) {
	p := s.platform
	v, err := wire.Decode(bytes.TrimSpace(raw), wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
	switch {
	case err == nil:
		return v, nil
	case part != "":
		return nil, bodyRefusal(run.InvalidRequest, fmt.Sprintf("The part %q is not JSON: %s", part, jsonRefusal(err)))
	}
	return nil, bodyRefusal(run.InvalidRequest, jsonRefusal(err))
}

// runRequest checks a decoded tools.run-request@1 document and returns its
// input, file references and wait. The common document, {"input": {…}}
// and nothing else, which the contract's schema accepts whatever the
// input holds (the input is the tool's schema's to check), skips the
// contract's schema validation; any other is validated in full.
func runRequest(doc any) (*run.Request, error) {
	m, plain := plainRunRequest(doc)
	if !plain {
		if err := contracts.ValidateDocument(contracts.RunRequestV1, doc); err != nil {
			r := bodyRefusal(run.InvalidRequest, "The body is not a tools.run-request@1 document.")
			var ce *contracts.Error
			if errors.As(err, &ce) {
				r.Issues, r.IssueCount = ce.Issues, ce.IssueCount
			}
			return nil, r
		}
		m = doc.(map[string]any)
	}
	req := &run.Request{}
	req.Input, _ = m["input"].(map[string]any)
	if raw, err := json.Marshal(m["files"]); err == nil {
		_ = json.Unmarshal(raw, &req.References) // the contract's schema checked their shape
	}
	if n, ok := m["wait_ms"].(json.Number); ok {
		if ms, err := n.Int64(); err == nil {
			req.Wait, req.WaitSet = time.Duration(ms)*time.Millisecond, true
		}
	}
	return req, nil
}

// plainRunRequest reports whether doc is the common tools.run-request@1
// document, {"input": {…}} and nothing else.
func plainRunRequest(doc any) (map[string]any, bool) {
	m, ok := doc.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	_, ok = m["input"].(map[string]any)
	return m, ok
}

// readJob reads a jobs request: JSON, or a form's "job" part, or its
// "type", "input" and "references" parts.
func (b *requestBody) readJob() (*run.Request, error) {
	var raw []byte
	if b.form {
		if err := b.open(b.s.jobFormLimits("job", "type", "input", "references")); err != nil {
			return nil, err
		}
		var ok bool
		if raw, ok = jobFromParts(b.mp.fields); !ok {
			return nil, bodyRefusal(run.InvalidRequest, `A job form has a "job" part, or "type", "input" and "references" parts, not both.`)
		}
	} else {
		var err error
		if raw, err = b.s.readToolsBody(b.c); err != nil {
			return nil, err
		}
	}
	var req struct {
		Type       string                    `json:"type"`
		References []contracts.FileReference `json:"references"`
	}
	p := b.s.platform
	doc, err := wire.Decode(raw, wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
	m, isObject := doc.(map[string]any)
	if err == nil && isObject {
		err = json.Unmarshal(raw, &req)
	}
	input, _ := m["input"].(map[string]any)
	if err != nil || !isObject || req.Type == "" || input == nil || hasUnknown(m, "type", "input", "references") {
		return nil, bodyRefusal(run.InvalidRequest, `A job is {"type", "input", "references"?} with an object input.`)
	}
	return &run.Request{Type: req.Type, Input: input, References: req.References}, nil
}

// jobFromParts is the jobs request of a form: its "job" part, or the
// document its "type" (a JSON string, or the bare type), "input" and
// "references" parts make — the parts the run route takes too (issue 16,
// item 8). A form with both is refused (false).
func jobFromParts(fields map[string][]byte) ([]byte, bool) {
	raw, whole := fields["job"]
	_, typed := fields["type"]
	_, in := fields["input"]
	_, refs := fields["references"]
	if whole {
		return raw, !typed && !in && !refs
	}
	if !typed && !in && !refs {
		return nil, true // no job at all: refused as not a job
	}
	t := bytes.TrimSpace(fields["type"])
	if !json.Valid(t) {
		t, _ = json.Marshal(string(t)) // a string encodes
	}
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(t)
	if in {
		b.WriteString(`,"input":`)
		b.Write(fields["input"])
	}
	if refs {
		b.WriteString(`,"references":`)
		b.Write(fields["references"])
	}
	b.WriteString("}")
	return b.Bytes(), true
}

func hasUnknown(m map[string]any, known ...string) bool {
	for k := range m {
		if !slices.Contains(known, k) {
			return true
		}
	}
	return false
}

// readLegacy reads a legacy request: a JSON object, or the old upload
// form's text fields — each a string parameter, and an "input" field a
// JSON object of parameters merged over them.
func (b *requestBody) readLegacy() (*run.Request, error) {
	if !b.form {
		raw, err := b.s.readToolsBody(b.c)
		if err != nil {
			return nil, err
		}
		doc, err := b.s.decodeJSON(raw, "")
		input, isObject := doc.(map[string]any)
		if err != nil || !isObject {
			return nil, bodyRefusal(run.InvalidRequest, "A legacy request is a JSON object.")
		}
		return &run.Request{Input: input}, nil
	}
	if err := b.open(b.s.legacyFormLimits()); err != nil {
		return nil, err
	}
	input := map[string]any{}
	for k, v := range b.mp.fields {
		if k != "input" {
			input[k] = string(v)
		}
	}
	if raw, ok := b.mp.fields["input"]; ok {
		v, err := b.s.decodeJSON(raw, "input")
		if err != nil {
			return nil, err
		}
		obj, isObject := v.(map[string]any)
		if !isObject {
			return nil, bodyRefusal(run.InvalidRequest, "The \"input\" part is a JSON object.")
		}
		maps.Copy(input, obj)
	}
	return &run.Request{Input: input}, nil
}

// jobFormLimits bounds the leading fields of a jobs or run form: the
// named JSON parts, each and all together within the platform's request
// body cap, as a JSON body would be.
func (s *Server) jobFormLimits(names ...string) formLimits {
	b := s.platform.MaxRequestBodyBytes
	return formLimits{names: names, maxFields: len(names), fieldBytes: b, totalBytes: b}
}

// legacyFormLimits bounds the text fields of a legacy upload form: at most
// maxLegacyFields, each a parameter within the platform's parameter cap
// (an "input" field, a JSON object of parameters, within it too), all
// together within the request body cap.
func (s *Server) legacyFormLimits() formLimits {
	p := s.platform
	return formLimits{maxFields: maxLegacyFields, fieldBytes: p.MaxParameterBytes, totalBytes: p.MaxRequestBodyBytes}
}

// readToolsBody reads a JSON body within the platform's byte cap and
// ingress budget: PayloadTooLarge past the cap, BodyTimeout when it does
// not arrive within the budget, InvalidRequest when it cannot be read.
func (s *Server) readToolsBody(c *gin.Context) ([]byte, error) {
	if ingress := s.platform.IngressTimeoutMS; ingress > 0 {
		// Best effort: a writer that cannot set read deadlines is read
		// under the server's own timeouts.
		_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(time.Duration(ingress) * time.Millisecond))
	}
	limit := s.platform.MaxRequestBodyBytes
	if c.Request.ContentLength > limit {
		return nil, bodyRefusal(run.PayloadTooLarge, tooLarge(limit))
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, bodyRefusal(run.PayloadTooLarge, tooLarge(limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, bodyRefusal(run.BodyTimeout, "The request body did not arrive within the ingress budget.")
	case err != nil:
		return nil, bodyRefusal(run.InvalidRequest, "The request body could not be read.")
	}
	return body, nil
}

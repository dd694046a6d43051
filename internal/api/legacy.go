package api

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// The legacy routes of the old per-satellite APIs (ADR-027, "Legacy
// endpoints get deprecation headers"): /api/process (and /direct, /multi,
// /info), /api/net/* and /api/dev/* keep working through the descriptors'
// run.legacy mapping, and every answer says they are deprecated.

// LegacySunset is when the legacy routes may go.
const LegacySunset = "Thu, 31 Dec 2026 23:59:59 GMT"

// LegacyDeprecated is when ADR-027 deprecated the legacy routes (it was
// accepted on 2026-09-23), the date of RFC 9745's form of the Deprecation
// field.
var LegacyDeprecated = time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)

// ParseDeprecation returns the Deprecation field value a setting names:
// "true" (ADR-027's value, the default), "rfc9745" (RFC 9745's
// "@<unix seconds>" of LegacyDeprecated), "@<unix seconds>", or a date
// (2006-01-02) or RFC 3339 time, written in RFC 9745's form. Anything else
// is an error naming the forms.
func ParseDeprecation(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "true":
		return "true", nil
	case "rfc9745":
		return "@" + strconv.FormatInt(LegacyDeprecated.Unix(), 10), nil
	}
	if n, ok := strings.CutPrefix(s, "@"); ok {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil && v >= 0 {
			return "@" + strconv.FormatInt(v, 10), nil
		}
	} else if t, err := time.Parse(time.DateOnly, s); err == nil {
		return "@" + strconv.FormatInt(t.Unix(), 10), nil
	} else if t, err := time.Parse(time.RFC3339, s); err == nil {
		return "@" + strconv.FormatInt(t.Unix(), 10), nil
	}
	return "", fmt.Errorf("the Deprecation value %q is none of true, rfc9745, @<unix seconds>, a date (2006-01-02) or an RFC 3339 time", s)
}

// legacyPrefixes are the legacy API roots.
var legacyPrefixes = []string{"/api/process", "/api/net", "/api/dev"}

func (s *Server) registerLegacy() {
	for _, prefix := range legacyPrefixes {
		s.engine.Any(prefix, s.legacyHeaders, s.resolveCaller, s.legacy)
		s.engine.Any(prefix+"/*rest", s.legacyHeaders, s.resolveCaller, s.legacy)
	}
}

// legacyHeaders sets the deprecation headers before anything can answer,
// so that every answer of a legacy route carries them — a bad token's 401
// from resolveCaller too. legacy narrows Link to the tool's run route
// once it knows the tool.
func (s *Server) legacyHeaders(c *gin.Context) {
	c.Header("Deprecation", s.cfg.Deprecation)
	c.Header("Sunset", LegacySunset)
	c.Header("Link", "</api/v1/tools>; rel=\"successor-version\"")
	c.Next()
}

// legacyMatch is a tool reached by a legacy route.
type legacyMatch struct {
	svc   *registry.Service
	route contracts.LegacyRoute
	// params are the route's ":name" segments, unescaped.
	params map[string]string
}

// matchLegacyPath matches a request's escaped path against a declared
// legacy path whose ":name" segments are parameters, returning them
// unescaped (a parameter may hold an escaped "/", such as a URL).
func matchLegacyPath(pattern, escaped string) (map[string]string, bool) {
	ps := strings.Split(pattern, "/")
	gs := strings.Split(strings.TrimSuffix(escaped, "/"), "/")
	if len(ps) != len(gs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range ps {
		g, err := url.PathUnescape(gs[i])
		if err != nil {
			return nil, false
		}
		if name, ok := strings.CutPrefix(p, ":"); ok && name != "" {
			if g == "" {
				return nil, false
			}
			if params == nil {
				params = make(map[string]string, 1)
			}
			params[name] = g
		} else if p != g {
			return nil, false
		}
	}
	return params, true
}

// legacyQuery is the input of a GET legacy route: its path parameters
// and its query, each value typed as the tool's input schema types the
// property of its name (an integer, a boolean, an array of them from a
// comma-separated value; a string otherwise). A value that does not parse
// stays a string, and the input's validation refuses it.
func legacyQuery(svc *registry.Service, params map[string]string, q url.Values) map[string]any {
	props, _ := schemaProperties(svc.Definition.InputSchema)
	input := make(map[string]any, len(params)+len(q))
	for k, vs := range q {
		if len(vs) > 0 && k != "tool" && k != "operation" {
			input[k] = typed(props[k], vs[len(vs)-1])
		}
	}
	for k, v := range params {
		input[k] = v
	}
	return input
}

func schemaProperties(schema any) (map[string]any, bool) {
	m, _ := schema.(map[string]any)
	p, ok := m["properties"].(map[string]any)
	return p, ok
}

// typed is raw as the JSON type prop (a JSON Schema) names.
func typed(prop any, raw string) any {
	m, _ := prop.(map[string]any)
	switch m["type"] {
	case "integer":
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return json.Number(strconv.FormatInt(n, 10))
		}
	case "boolean":
		if b, err := strconv.ParseBool(raw); err == nil {
			return b
		}
	case "array":
		parts := strings.Split(raw, ",")
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = typed(m["items"], strings.TrimSpace(p))
		}
		return out
	}
	return raw
}

func (s *Server) legacy(c *gin.Context) {
	start := time.Now()
	path := strings.TrimSuffix(c.Request.URL.Path, "/")
	if path == "/api/process/info" && c.Request.Method == http.MethodGet {
		s.legacyInfo(c)
		return
	}
	var matches []legacyMatch
	snap := s.cfg.Run.Snapshot()
	for _, svc := range snap.Services() {
		if !svc.Platform().API {
			continue
		}
		for _, r := range svc.Platform().Legacy {
			if r.Method != c.Request.Method {
				continue
			}
			if params, ok := matchLegacyPath(r.Path, c.Request.URL.EscapedPath()); ok {
				matches = append(matches, legacyMatch{svc: svc, route: r, params: params})
			}
		}
	}
	if len(matches) == 0 {
		if allow := s.legacyMethods(path); len(allow) > 0 {
			// A known legacy path, another method: 405 with Allow, as on
			// every route.
			c.Header("Allow", strings.Join(allow, ", "))
			methodProblem(c)
			return
		}
		if err := run.StillLoading(snap); err != nil {
			s.toolsRefusal(c, err)
			return
		}
		legacyNotFound(c, "No tool answers this legacy route; see /api/v1/tools.")
		return
	}
	if len(matches) == 1 {
		c.Header("Link", "<"+contracts.RunEndpoint(matches[0].svc.Code())+">; rel=\"successor-version\"")
	}
	// Before the body is read: a caller no tool of the route takes is
	// refused at once, whatever tool the body would name.
	if origin(c).Caller.Tier == guard.Anonymous && !slices.ContainsFunc(matches, func(m legacyMatch) bool { return m.svc.Platform().Anonymous }) {
		s.cfg.Run.RecordUnauthenticated(c.Request.Context(), origin(c), matches[0].svc.Code())
		c.Header("WWW-Authenticate", `Bearer realm="toolhost"`)
		toolsProblem(c, contracts.ProblemUnauthenticated, "The tools of this route need a signed-in caller.")
		return
	}
	var input map[string]any
	var mp *multipartBody
	formDone := func() {}
	if c.Request.Method == http.MethodGet {
		// A GET route (the old /api/net/<endpoint>/:target): the input
		// is the path's parameters and the query.
		input = legacyQuery(matches[0].svc, matches[0].params, c.Request.URL.Query())
	} else if c.ContentType() == "multipart/form-data" {
		// The old upload form: text fields (the "tool" selector and the
		// tool's string parameters, or an "input" part holding them as a
		// JSON object), then the file parts. The tool may be named by a
		// field, so the run is admitted once the fields are read; the
		// form is gated by the quota class of the route's first tool
		// before a byte of it is read.
		var ok bool
		if mp, formDone, ok = s.openForm(c, matches[0].svc.Platform().QuotaClass, s.legacyFormLimits()); !ok {
			return
		}
		defer formDone()
		if input, ok = s.legacyFields(c, mp.fields); !ok {
			return
		}
	} else {
		body, ok := s.readToolsBody(c)
		if !ok {
			return
		}
		p := s.platform
		doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
		var isObject bool
		input, isObject = doc.(map[string]any)
		if err != nil || !isObject {
			toolsProblem(c, contracts.ProblemInvalidRequest, "A legacy request is a JSON object.")
			return
		}
	}
	m := matches[0]
	if len(matches) > 1 || m.route.Selector != "" {
		// A shared route: the request's "tool" names the tool.
		sel, _ := input["tool"].(string)
		i := slices.IndexFunc(matches, func(m legacyMatch) bool { return m.route.Selector != "" && m.route.Selector == sel })
		if i < 0 {
			if err := run.StillLoading(snap); err != nil {
				s.toolsRefusal(c, err)
				return
			}
			legacyNotFound(c, "The request's \"tool\" names no tool of this legacy route.")
			return
		}
		m = matches[i]
		delete(input, "tool")
	}
	c.Header("Link", "<"+contracts.RunEndpoint(m.svc.Code())+">; rel=\"successor-version\"")
	if err := run.Runnable(m.svc); err != nil {
		s.toolsRefusal(c, err)
		return
	}
	switch {
	case m.svc.Platform().Job != nil:
		s.legacyJob(c, m.svc, input, mp)
		return
	case mp != nil:
		toolsProblem(c, contracts.ProblemUnsupportedMediaType, "This tool takes a JSON object, not an upload.")
		return
	}
	ad, ok := s.admit(c, m.svc, input)
	if !ok {
		return
	}
	defer ad.Release()
	if m.route.Operation != "" {
		input["operation"] = m.route.Operation
	}
	res, err := s.cfg.Run.Sync(c.Request.Context(), origin(c), m.svc, input, start)
	if err != nil {
		s.runRefusal(c, err)
		return
	}
	answerLegacy(c, res)
}

// legacyInfo is GET /api/process/info: the tools /api/process reaches,
// by their legacy selector.
func (s *Server) legacyInfo(c *gin.Context) {
	type entry struct {
		Selector  string `json:"tool"`
		ID        string `json:"id"`
		Operation string `json:"operation,omitempty"`
		Status    string `json:"status"`
		Successor string `json:"successor"`
	}
	entries := []entry{}
	for _, svc := range s.cfg.Run.Snapshot().Services() {
		if !svc.Platform().API {
			continue
		}
		status := string(svc.Platform().Status)
		if !svc.Available() {
			status = string(contracts.StatusUnavailable)
		}
		for _, r := range svc.Platform().Legacy {
			if r.Path == "/api/process" && r.Selector != "" {
				entries = append(entries, entry{Selector: r.Selector, ID: svc.Code(), Operation: r.Operation,
					Status: status, Successor: contracts.RunEndpoint(svc.Code())})
			}
		}
	}
	writeJSON(c, http.StatusOK, "application/json", map[string]any{"tools": entries})
}

// legacyFormLimits bounds the text fields of a legacy upload form: at most
// maxLegacyFields, each a parameter within the platform's parameter cap
// (an "input" field, a JSON object of parameters, within it too), all
// together within the request body cap.
func (s *Server) legacyFormLimits() formLimits {
	p := s.platform
	return formLimits{maxFields: maxLegacyFields, fieldBytes: p.MaxParameterBytes, totalBytes: p.MaxRequestBodyBytes}
}

// legacyFields turns the text fields of a legacy upload form into the
// tool's input: each field is a string parameter, and an "input" field is a
// JSON object of parameters merged over them.
func (s *Server) legacyFields(c *gin.Context, fields map[string][]byte) (map[string]any, bool) {
	input := map[string]any{}
	for k, v := range fields {
		if k != "input" {
			input[k] = string(v)
		}
	}
	if raw, ok := fields["input"]; ok {
		v, ok := s.decodePart(c, "input", raw)
		if !ok {
			return nil, false
		}
		obj, isObject := v.(map[string]any)
		if !isObject {
			toolsProblem(c, contracts.ProblemInvalidRequest, "The \"input\" part is a JSON object.")
			return nil, false
		}
		maps.Copy(input, obj)
	}
	return input, true
}

// legacyAnswer is the old APIs' answer to a file-producing run.
type legacyAnswer struct {
	Success bool `json:"success"`
	// Download is the signed URL of the first result file.
	Download string         `json:"download,omitempty"`
	Files    []string       `json:"files,omitempty"`
	Job      string         `json:"job"`
	Status   string         `json:"status"`
	Error    *toolerr.Error `json:"error,omitempty"`
}

// legacyJob runs a job tool for a legacy route: it submits the job as the
// run route does (files from the upload form's file parts, or the JSON's
// "files" references), waits DefaultRunWait, and answers {success,
// download} with a signed URL once the job succeeded, 202 with the job's
// Location while it runs, or {success: false, error} when it failed.
func (s *Server) legacyJob(c *gin.Context, svc *registry.Service, input map[string]any, mp *multipartBody) {
	if s.cfg.Jobs == nil {
		toolsProblem(c, contracts.ProblemToolUnavailable, "This server does not run jobs.")
		return
	}
	if err := s.cfg.Run.JobRunnable(c.Request.Context(), svc, origin(c)); err != nil {
		s.toolsRefusal(c, err)
		return
	}
	var refs []contracts.FileReference
	if v, ok := input["files"]; ok && mp == nil {
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, &refs); err != nil {
			toolsProblem(c, contracts.ProblemInvalidRequest, "\"files\" is a list of file references.")
			return
		}
		delete(input, "files")
	}
	delete(input, "operation")
	jobInput := run.JobInput(svc, input)
	// The job's concurrency slots are the job's, for its whole life.
	ad, ok := s.admitJob(c, svc, input)
	if !ok {
		return
	}
	var files iter.Seq2[jobs.Upload, error]
	if mp != nil {
		files = mp.uploads(fileNames(svc), maxFileBytes(svc))
	}
	job, ok := s.submit(c, ad, svc, jobInput, refs, files)
	if !ok {
		ad.Release()
		return
	}
	if mp != nil {
		mp.done() // the form's slot is not held while the run waits
	}
	job = s.await(c.Request.Context(), job, DefaultRunWait)
	d, err := s.document(c.Request.Context(), job)
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	a := legacyAnswer{Job: job.ID, Status: string(job.State)}
	switch job.State {
	case jobs.Succeeded:
		a.Success = true
		for _, f := range d.Files {
			a.Files = append(a.Files, f.URL)
		}
		if len(a.Files) > 0 {
			a.Download = a.Files[0]
		}
		writeJSON(c, http.StatusOK, "application/json", a)
	case jobs.Failed, jobs.Cancelled:
		a.Error = d.Error
		writeJSON(c, http.StatusOK, "application/json", a)
	default:
		a.Success = true
		c.Header("Location", contracts.JobLocation(job.ID))
		writeJSON(c, http.StatusAccepted, "application/json", a)
	}
}

// legacyMethods returns the methods the legacy routes of path take, sorted;
// none for a path no tool's legacy route has.
func (s *Server) legacyMethods(path string) []string {
	var methods []string
	for _, svc := range s.cfg.Run.Snapshot().Services() {
		if !svc.Platform().API {
			continue
		}
		for _, r := range svc.Platform().Legacy {
			if _, ok := matchLegacyPath(r.Path, path); ok && !slices.Contains(methods, r.Method) {
				methods = append(methods, r.Method)
			}
		}
	}
	if path == "/api/process/info" {
		methods = append(methods, http.MethodGet)
	}
	if slices.Contains(methods, http.MethodGet) && !slices.Contains(methods, http.MethodHead) {
		methods = append(methods, http.MethodHead)
	}
	slices.Sort(methods)
	return methods
}

// The legacy routes' use case (ADR-027, "Legacy endpoints get deprecation
// headers"): /api/process (and /direct, /multi), /api/net/* and /api/dev/*
// reach the tools whose descriptors map them (run.legacy), and run them as
// the run route does; the routes answer in the old shapes.

package run

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
)

// LegacyCall is a request to a legacy route.
type LegacyCall struct {
	Origin Origin
	// Method is the request's method; Path its escaped path, without a
	// trailing slash; Query its query (the input of a GET route).
	Method, Path string
	Query        url.Values
	// Start is when the request arrived.
	Start time.Time
	// Body holds the input of a route that is not a GET: a JSON object,
	// or the old upload form; nil for a GET.
	Body Body
	// Tool is told the tool's id as soon as it is known, for the answer's
	// successor link, whatever the answer.
	Tool func(id string)
	// Stop ends a job tool's wait early: the server drains.
	Stop <-chan struct{}
}

// LegacyAnswer is a legacy call that ran: a sync tool's Result, or a job
// tool's job as it is when the wait ended.
type LegacyAnswer struct {
	Result *Result
	Job    *contracts.Job
	Limits RateLimits
	// Info is the answer of GET /api/process/info: the tools /api/process
	// reaches, by their legacy selector.
	Info []LegacyEntry
}

// legacyMatch is a tool reached by a legacy route.
type legacyMatch struct {
	svc   *registry.Service
	route contracts.LegacyRoute
	// params are the route's ":name" segments, unescaped.
	params map[string]string
}

// Legacy runs a legacy call: the route's tools matched in the live
// snapshot (MethodNotAllowed for a known path and another method,
// LegacyNotFound for none), an anonymous caller refused at once when no
// tool of the route takes one, the input read (the query of a GET, the
// body's object or form otherwise), the tool selected by the input's
// "tool" where the route is shared, and the run made as on the run route.
func (a *App) Legacy(ctx context.Context, c LegacyCall) (*LegacyAnswer, error) {
	if c.Method == "GET" && c.Path == "/api/process/info" {
		return &LegacyAnswer{Info: a.legacyInfo()}, nil
	}
	snap := a.cfg.Snapshot()
	var matches []legacyMatch
	for _, svc := range snap.Services() {
		if !svc.Platform().API {
			continue
		}
		for _, r := range svc.Platform().Legacy {
			if r.Method != c.Method {
				continue
			}
			if params, ok := matchLegacyPath(r.Path, c.Path); ok {
				matches = append(matches, legacyMatch{svc: svc, route: r, params: params})
			}
		}
	}
	if len(matches) == 0 {
		if allow := legacyMethods(snap, c.Path); len(allow) > 0 {
			return nil, &Refusal{Code: MethodNotAllowed, Allow: allow,
				Detail: "The route does not take this method; Allow lists those it takes."}
		}
		if err := StillLoading(snap); err != nil {
			return nil, err
		}
		return nil, refuse(LegacyNotFound, "No tool answers this legacy route; see /api/v1/tools.")
	}
	if len(matches) == 1 {
		c.Tool(matches[0].svc.Code())
	}
	// Before the body is read: a caller no tool of the route takes is
	// refused at once, whatever tool the body would name.
	if c.Origin.Anonymous() && !slices.ContainsFunc(matches, func(m legacyMatch) bool { return m.svc.Platform().Anonymous }) {
		a.RecordUnauthenticated(ctx, c.Origin, matches[0].svc.Code())
		return nil, refuse(Unauthenticated, "The tools of this route need a signed-in caller.")
	}
	input := map[string]any{}
	upload := false
	done := func() {}
	defer func() { done() }()
	if c.Body == nil {
		// A GET route (the old /api/net/<endpoint>/:target): the input
		// is the path's parameters and the query.
		input = legacyQuery(matches[0].svc, matches[0].params, c.Query)
	} else {
		// The tool may be named by the body, so the run is admitted once
		// it is read; an upload form is gated by the quota class of the
		// route's first tool before a byte of it is read.
		req, release, err := a.readBody(ctx, c.Origin, matches[0].svc.Platform().QuotaClass, c.Body, BodySpec{Job: true})
		if err != nil {
			return nil, err
		}
		done = release
		upload = c.Body.Upload()
		if req.Input != nil {
			input = req.Input
		}
	}
	m := matches[0]
	if len(matches) > 1 || m.route.Selector != "" {
		// A shared route: the request's "tool" names the tool.
		sel, _ := input["tool"].(string)
		i := slices.IndexFunc(matches, func(m legacyMatch) bool { return m.route.Selector != "" && m.route.Selector == sel })
		if i < 0 {
			if err := StillLoading(snap); err != nil {
				return nil, err
			}
			return nil, refuse(LegacyNotFound, "The request's \"tool\" names no tool of this legacy route.")
		}
		m = matches[i]
		delete(input, "tool")
	}
	c.Tool(m.svc.Code())
	if err := Runnable(m.svc); err != nil {
		return nil, err
	}
	switch {
	case m.svc.Platform().Job != nil:
		return a.legacyJob(ctx, c, m.svc, input, upload, done)
	case upload:
		return nil, refuse(UnsupportedMediaType, "This tool takes a JSON object, not an upload.")
	}
	ad, err := a.Admit(ctx, c.Origin, m.svc, input)
	if err != nil {
		return nil, err
	}
	defer ad.Release()
	if m.route.Operation != "" {
		input["operation"] = m.route.Operation
	}
	res, err := a.Sync(ctx, c.Origin, m.svc, input, c.Start)
	if err != nil {
		return nil, withLimits(err, ad.Limits)
	}
	return &LegacyAnswer{Result: res, Limits: ad.Limits}, nil
}

// legacyJob runs a job tool for a legacy route: it submits the job as the
// run route does (files from the upload form's file parts, or the input's
// "files" references) and waits DefaultRunWait for it.
func (a *App) legacyJob(ctx context.Context, c LegacyCall, svc *registry.Service, input map[string]any, upload bool, done func()) (*LegacyAnswer, error) {
	if a.jobs == nil {
		return nil, refuse(ToolUnavailable, "This server does not run jobs.")
	}
	if err := a.JobRunnable(ctx, svc, c.Origin); err != nil {
		return nil, err
	}
	var refs []contracts.FileReference
	if v, ok := input["files"]; ok && !upload {
		raw, _ := json.Marshal(v) // a decoded JSON value encodes
		if err := json.Unmarshal(raw, &refs); err != nil {
			return nil, refuse(InvalidRequest, "\"files\" is a list of file references.")
		}
		delete(input, "files")
	}
	delete(input, "operation")
	// The job's concurrency slots are the job's, for its whole life.
	ad, err := a.AdmitJob(ctx, c.Origin, svc, input)
	if err != nil {
		return nil, err
	}
	s := spec(svc)
	var files = c.Body.Uploads(s)
	if !upload {
		files = nil
	}
	job, err := a.submit(ctx, c.Origin, ad, svc, "", JobInput(svc, input), refs, c.Body, files)
	if err != nil {
		ad.Release()
		return nil, withLimits(err, ad.Limits)
	}
	done() // the form's slot is not held while the run waits
	job = a.await(ctx, job, DefaultRunWait, c.Stop)
	d, err := a.document(ctx, job)
	if err != nil {
		return nil, err
	}
	return &LegacyAnswer{Job: d, Limits: ad.Limits}, nil
}

// LegacyEntry is a tool /api/process reaches by its legacy selector.
type LegacyEntry struct {
	Selector  string `json:"tool"`
	ID        string `json:"id"`
	Operation string `json:"operation,omitempty"`
	Status    string `json:"status"`
	Successor string `json:"successor"`
}

// legacyInfo is the tools /api/process reaches, by their legacy selector.
func (a *App) legacyInfo() []LegacyEntry {
	entries := []LegacyEntry{}
	for _, svc := range a.cfg.Snapshot().Services() {
		if !svc.Platform().API {
			continue
		}
		status := string(svc.Platform().Status)
		if !svc.Available() {
			status = string(contracts.StatusUnavailable)
		}
		for _, r := range svc.Platform().Legacy {
			if r.Path == "/api/process" && r.Selector != "" {
				entries = append(entries, LegacyEntry{Selector: r.Selector, ID: svc.Code(), Operation: r.Operation,
					Status: status, Successor: contracts.RunEndpoint(svc.Code())})
			}
		}
	}
	return entries
}

// legacyMethods returns the methods the legacy routes of path take, sorted;
// none for a path no tool's legacy route has.
func legacyMethods(snap *registry.Snapshot, path string) []string {
	var methods []string
	for _, svc := range snap.Services() {
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
		methods = append(methods, "GET")
	}
	if slices.Contains(methods, "GET") && !slices.Contains(methods, "HEAD") {
		methods = append(methods, "HEAD") // GET routes answer HEAD
	}
	slices.Sort(methods)
	return methods
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
	root, _ := svc.Definition.InputSchema.(map[string]any)
	props, _ := root["properties"].(map[string]any)
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

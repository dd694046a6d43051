package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"toolhost/internal/catalog"
	"toolhost/internal/contracts"
	"toolhost/internal/executor"
	"toolhost/internal/registry"
	"toolhost/internal/toolerr"
	"toolhost/internal/wire"
)

// The legacy routes of the old per-satellite APIs (ADR-027, "Legacy
// endpoints get deprecation headers"): /api/process (and /direct, /multi,
// /info), /api/net/* and /api/dev/* keep working through the descriptors'
// run.legacy mapping, and every answer says they are deprecated.

// LegacySunset is when the legacy routes may go.
const LegacySunset = "Thu, 31 Dec 2026 23:59:59 GMT"

// legacyPrefixes are the legacy API roots.
var legacyPrefixes = []string{"/api/process", "/api/net", "/api/dev"}

func (s *Server) registerLegacy() {
	for _, prefix := range legacyPrefixes {
		s.engine.Any(prefix, s.resolveCaller, s.legacy)
		s.engine.Any(prefix+"/*rest", s.resolveCaller, s.legacy)
	}
}

// legacyMatch is a tool reached by a legacy route.
type legacyMatch struct {
	svc   *registry.Service
	tool  contracts.Tool
	route contracts.LegacyRoute
}

// legacyError is the old APIs' error answer.
type legacyError struct {
	Success bool           `json:"success"`
	Error   *toolerr.Error `json:"error"`
}

func (s *Server) legacy(c *gin.Context) {
	start := time.Now()
	c.Header("Deprecation", "true")
	c.Header("Sunset", LegacySunset)
	c.Header("Link", "</api/v1/tools>; rel=\"successor-version\"")
	path := strings.TrimSuffix(c.Request.URL.Path, "/")
	if path == "/api/process/info" && c.Request.Method == http.MethodGet {
		s.legacyInfo(c)
		return
	}
	var matches []legacyMatch
	for _, svc := range s.cfg.Snapshot().Services() {
		tool := catalog.Tool(svc)
		if tool.Run == nil {
			continue
		}
		for _, r := range tool.Run.Legacy {
			if r.Method == c.Request.Method && r.Path == path {
				matches = append(matches, legacyMatch{svc: svc, tool: tool, route: r})
			}
		}
	}
	if len(matches) == 0 {
		problem(c, http.StatusNotFound, "legacy_not_found", "No tool answers this legacy route; see /api/v1/tools.")
		return
	}
	body, ok := s.readBody(c)
	if !ok {
		return
	}
	doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(s.cfg.Platform.MaxRequestBodyBytes), MaxDepth: 2 * s.cfg.Platform.MaxJSONDepth})
	input, isObject := doc.(map[string]any)
	if err != nil || !isObject {
		problem(c, http.StatusBadRequest, "invalid_json", "A legacy request is a JSON object.")
		return
	}
	m := matches[0]
	if len(matches) > 1 || m.route.Selector != "" {
		// A shared route: the request's "tool" names the tool.
		sel, _ := input["tool"].(string)
		i := slices.IndexFunc(matches, func(m legacyMatch) bool { return m.route.Selector != "" && m.route.Selector == sel })
		if i < 0 {
			problem(c, http.StatusNotFound, "legacy_not_found", "The request's \"tool\" names no tool of this legacy route.")
			return
		}
		m = matches[i]
		delete(input, "tool")
	}
	c.Header("Link", "<"+contracts.RunEndpoint(m.tool.ID)+">; rel=\"successor-version\"")
	switch {
	case m.tool.Status == contracts.StatusUnavailable:
		toolsProblem(c, contracts.ProblemToolUnavailable, "The tool is unavailable on this server: "+m.tool.StatusReason+".")
		return
	case m.tool.Execution == contracts.ExecutionJob:
		toolsProblem(c, contracts.ProblemToolUnavailable, "Job tools run through the jobs API, which this server does not serve yet.")
		return
	}
	if m.route.Operation != "" {
		input["operation"] = m.route.Operation
	}
	params, err := wire.Encode(input, wire.Limits{MaxDepth: 2 * s.cfg.Platform.MaxJSONDepth})
	if err != nil {
		problem(c, http.StatusBadRequest, "invalid_json", "The request cannot be encoded.")
		return
	}
	res, ok := s.runItem(c, m.svc, params, start)
	if !ok {
		return
	}
	s.answerLegacy(c, res)
}

// answerLegacy answers in the old shapes: the result document itself on
// success; {"success": false, "error": …} otherwise, with the status the
// run route would give.
func (s *Server) answerLegacy(c *gin.Context, r *executor.ItemResult) {
	if r.Status == executor.StatusSuccess {
		c.Data(http.StatusOK, "application/json; charset=utf-8", r.Result)
		return
	}
	status := http.StatusOK // a run that happened and failed, as the run route answers it
	switch r.Error.Code {
	case toolerr.InvalidParameters:
		status = http.StatusUnprocessableEntity
	case toolerr.InputLimitExceeded:
		status = http.StatusRequestEntityTooLarge
	case toolerr.UnknownTool:
		status = http.StatusNotFound
	case toolerr.ToolUnavailable, toolerr.VersionMismatch, toolerr.QueueFull, toolerr.QueueTimeout, toolerr.ServiceUnavailable:
		status = http.StatusServiceUnavailable
	}
	writeJSON(c, status, "application/json", legacyError{Error: r.Error})
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
	for _, svc := range s.cfg.Snapshot().Services() {
		tool := catalog.Tool(svc)
		if tool.Run == nil {
			continue
		}
		for _, r := range tool.Run.Legacy {
			if r.Path == "/api/process" && r.Selector != "" {
				entries = append(entries, entry{Selector: r.Selector, ID: tool.ID, Operation: r.Operation,
					Status: string(tool.Status), Successor: contracts.RunEndpoint(tool.ID)})
			}
		}
	}
	writeJSON(c, http.StatusOK, "application/json", map[string]any{"tools": entries})
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
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

// The tools platform routes of ADR-027: the public registry (list,
// descriptor, schema), the run route, and the contracts they follow. Every
// route resolves its caller (resolveCaller, in guard.go); runs pass the
// guard's admission.

// callerKey is where resolveCaller leaves the caller's key (guard.Caller.Key).
const callerKey = "toolhost.caller"

// registerTools mounts the ADR-027 routes on the engine.
func (s *Server) registerTools() {
	s.engine.GET(contracts.Route+":name", s.contract)
	s.engine.GET("/openapi.json", func(c *gin.Context) {
		writeJSON(c, http.StatusOK, "application/json", catalog.OpenAPI(s.cfg.Snapshot(), s.cfg.Version))
	})
	public := s.engine.Group(Prefix+"/tools", s.resolveCaller)
	public.GET("", s.listTools)
	public.GET("/:id", s.getTool)
	public.GET("/:id/schema", s.toolSchema)
	public.POST("/:id/run", s.runTool)
}

// toolsProblem writes a problem document with an ADR-027 problem code and
// the status the run-request contract gives it.
func toolsProblem(c *gin.Context, code, detail string) {
	status, ok := problemStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeProblem(c, Problem{Status: status, Code: code, Detail: detail})
}

func (s *Server) contract(c *gin.Context) {
	name := strings.TrimSuffix(c.Param("name"), ".json")
	raw, ok := contracts.Raw(name)
	if !ok {
		problem(c, http.StatusNotFound, "not_found", "No such contract.")
		return
	}
	c.Data(http.StatusOK, "application/schema+json", raw)
}

func (s *Server) listTools(c *gin.Context) {
	writeJSON(c, http.StatusOK, "application/json", catalog.List(s.cfg.Snapshot()))
}

// service returns the registry service of the :id parameter, or writes the
// 404 problem.
func (s *Server) service(c *gin.Context) (*registry.Service, bool) {
	svc, ok := s.cfg.Snapshot().Service(c.Param("id"))
	if !ok {
		toolsProblem(c, contracts.ProblemToolNotFound, "No tool has this id.")
		return nil, false
	}
	return svc, true
}

func (s *Server) getTool(c *gin.Context) {
	if svc, ok := s.service(c); ok {
		writeJSON(c, http.StatusOK, "application/json", catalog.Tool(svc))
	}
}

func (s *Server) toolSchema(c *gin.Context) {
	if svc, ok := s.service(c); ok {
		writeJSON(c, http.StatusOK, "application/schema+json", catalog.Schema(svc))
	}
}

// runTool is POST /tools/:id/run: a sync (or client tool with a server
// engine) answers inline through the executor, as one item pinned to the
// live definition.
func (s *Server) runTool(c *gin.Context) {
	start := time.Now()
	svc, ok := s.service(c)
	if !ok {
		return
	}
	tool := catalog.Tool(svc)
	switch {
	case !tool.API || tool.Run == nil:
		toolsProblem(c, contracts.ProblemToolNotRunnable, "This tool is a page only: it has no run API.")
		return
	case tool.Status == contracts.StatusUnavailable:
		toolsProblem(c, contracts.ProblemToolUnavailable, "The tool is unavailable on this server: "+tool.StatusReason+".")
		return
	case tool.Execution == contracts.ExecutionJob:
		s.runJobTool(c, svc, tool)
		return
	}
	if !strings.HasPrefix(c.ContentType(), "application/json") && c.ContentType() != "" {
		toolsProblem(c, contracts.ProblemUnsupportedMediaType, "A run of this tool is a JSON tools.run-request@1.")
		return
	}
	req, ok := s.readRunRequest(c)
	if !ok {
		return
	}
	input, _ := req["input"].(map[string]any)
	release, ok := s.admit(c, tool, input)
	if !ok {
		return
	}
	defer release()
	params, err := wire.Encode(req["input"], wire.Limits{MaxDepth: 2 * s.cfg.Platform.MaxJSONDepth})
	if err != nil { // the body decoded within the same limits
		toolsProblem(c, contracts.ProblemInvalidRequest, "The input cannot be encoded.")
		return
	}
	res, ok := s.runItem(c, svc, params, start)
	if !ok {
		return
	}
	s.answerRun(c, svc.Code(), res)
}

// runItem runs one item of svc with params through the executor, pinned
// to the live definition, for the request's caller. On a refusal of the
// whole run (overload, deadline) it writes the problem and reports false;
// when the client is gone it writes nothing and reports false.
func (s *Server) runItem(c *gin.Context, svc *registry.Service, params []byte, start time.Time) (*executor.ItemResult, bool) {
	d := svc.Definition
	item := executor.Item{CorrelationID: "run", ToolCode: d.ToolCode, ContractVersion: d.ContractVersion,
		ImplementationVersion: d.ImplementationVersion, SchemaFingerprint: d.Fingerprint, Parameters: params}
	items := []executor.Item{item}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.Executor.BatchRequestTimeout(items))
	defer cancel()
	res, err := s.cfg.Executor.Compute(ctx, executor.Batch{RequestID: "run", Principal: c.GetString(callerKey), Items: items, Start: start})
	switch {
	case err == nil:
		s.countRun(svc.Code(), &res.Results[0], time.Since(start))
		return &res.Results[0], true
	case c.Request.Context().Err() != nil:
		c.Abort() // the client is gone
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		toolsProblem(c, contracts.ProblemOverloaded, "The run did not finish within its request deadline.")
	default:
		toolsProblem(c, contracts.ProblemOverloaded, "The server cannot take this run now; retry later.")
	}
	return nil, false
}

// readRunRequest reads and checks a JSON tools.run-request@1 body.
func (s *Server) readRunRequest(c *gin.Context) (map[string]any, bool) {
	limit := s.cfg.Platform.MaxRequestBodyBytes
	if c.Request.ContentLength > limit {
		toolsProblem(c, contracts.ProblemPayloadTooLarge, tooLarge(limit))
		return nil, false
	}
	body, ok := s.readToolsBody(c)
	if !ok {
		return nil, false
	}
	doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(limit), MaxDepth: 2 * s.cfg.Platform.MaxJSONDepth})
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, jsonRefusal(err))
		return nil, false
	}
	return s.checkRunRequest(c, doc)
}

// checkRunRequest checks a decoded tools.run-request@1 document.
func (s *Server) checkRunRequest(c *gin.Context, doc any) (map[string]any, bool) {
	if err := contracts.Validate(contracts.RunRequestV1, doc); err != nil {
		p := Problem{Status: http.StatusBadRequest, Code: contracts.ProblemInvalidRequest,
			Detail: "The body is not a tools.run-request@1 document."}
		var ce *contracts.Error
		if errors.As(err, &ce) {
			p.Issues, p.IssueCount = ce.Issues, ce.IssueCount
		}
		writeProblem(c, p)
		return nil, false
	}
	return doc.(map[string]any), true
}

// answerRun maps an item's outcome to the run route's answer: refusals
// before the tool ran are problems, a run that happened is a tools.run@1
// document (succeeded, or failed with the tool's own error).
func (s *Server) answerRun(c *gin.Context, tool string, r *executor.ItemResult) {
	if r.Status == executor.StatusSuccess {
		writeJSON(c, http.StatusOK, "application/json", contracts.Run{ID: r.ExecutionID, Tool: tool,
			Status: contracts.RunSucceeded, Result: json.RawMessage(r.Result)})
		return
	}
	switch r.Error.Code {
	case toolerr.InvalidParameters:
		writeProblem(c, Problem{Status: http.StatusUnprocessableEntity, Code: contracts.ProblemInvalidInput,
			Detail: "The input does not match the tool's input schema.", Issues: r.Error.Issues, IssueCount: r.Error.IssueCount})
		return
	case toolerr.InputLimitExceeded:
		toolsProblem(c, contracts.ProblemPayloadTooLarge, "The input is over the tool's limits.")
		return
	case toolerr.UnknownTool:
		toolsProblem(c, contracts.ProblemToolNotFound, "No tool has this id.")
		return
	case toolerr.ToolUnavailable, toolerr.VersionMismatch:
		// The tool changed or left between lookup and run.
		toolsProblem(c, contracts.ProblemToolUnavailable, "The tool is not available now; retry later.")
		return
	case toolerr.QueueFull, toolerr.QueueTimeout, toolerr.ServiceUnavailable:
		toolsProblem(c, contracts.ProblemOverloaded, "The server cannot take this run now; retry later.")
		return
	}
	// Failed after it started: the tool's own error, or the platform's
	// (a timeout, a crash), as a run that happened.
	writeJSON(c, http.StatusOK, "application/json", contracts.Run{ID: r.ExecutionID, Tool: tool, Status: contracts.RunFailed, Error: r.Error})
}

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
	contracts.ProblemOverloaded:           http.StatusServiceUnavailable,
	contracts.ProblemStoreBusy:            http.StatusServiceUnavailable,
	contracts.ProblemStorageFull:          http.StatusInsufficientStorage,
	contracts.ProblemUnauthenticated:      http.StatusUnauthorized,
	contracts.ProblemForbidden:            http.StatusForbidden,
	contracts.ProblemQuotaExceeded:        http.StatusTooManyRequests,
	contracts.ProblemThrottled:            http.StatusTooManyRequests,
}

// ProblemStatus is the HTTP status of an ADR-027 problem code; 500 for a
// code the run-request contract does not list.
func ProblemStatus(code string) int {
	if s, ok := problemStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

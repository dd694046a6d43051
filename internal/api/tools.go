package api

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
)

// The tools platform routes of ADR-027: the public registry (list,
// descriptor, schema), the run route, and the contracts they follow. Every
// route resolves its caller (resolveCaller, in guard.go); what a run is
// belongs to the application layer (package run), and its refusals are
// answered in answer_tools.go.

// registerTools mounts the ADR-027 routes on the engine.
func (s *Server) registerTools() {
	s.engine.GET(contracts.Route+":name", s.contract)
	s.engine.GET("/openapi.json", func(c *gin.Context) {
		writeCached(c, "application/json", catalog.OpenAPI(s.cfg.Run.Snapshot(), s.cfg.Version, catalog.Cookies{Session: s.sessionCookie, Token: s.tokenCookie}), false)
	})
	public := s.engine.Group(Prefix+"/tools", s.resolveCaller)
	public.GET("", s.listTools)
	public.GET("/:id", s.getTool)
	public.GET("/:id/schema", s.toolSchema)
	public.POST("/:id/run", s.runTool)
}

func (s *Server) contract(c *gin.Context) {
	name := strings.TrimSuffix(c.Param("name"), ".json")
	raw, ok := contracts.Raw(name)
	if !ok {
		problem(c, "not_found", "No such contract.")
		return
	}
	writeCached(c, "application/schema+json", raw, false)
}

func (s *Server) listTools(c *gin.Context) {
	writeCached(c, "application/json", catalog.List(s.cfg.Run.Snapshot()), false)
}

// service returns the registry service of the :id parameter, or writes the
// refusal (404, or 503 for a quarantined code).
func (s *Server) service(c *gin.Context) (*registry.Service, bool) {
	svc, err := run.Lookup(s.cfg.Run.Snapshot(), c.Param("id"))
	if err != nil {
		s.toolsRefusal(c, err)
		return nil, false
	}
	return svc, true
}

func (s *Server) getTool(c *gin.Context) {
	if c.Param("id") == "compute" {
		// The seed-000 compute route, which the descriptor route's
		// pattern shadows for GET: no tool can have a route word's code.
		c.Header("Allow", http.MethodPost)
		methodProblem(c)
		return
	}
	if svc, ok := s.service(c); ok {
		writeCached(c, "application/json", catalog.Tool(svc), false)
	}
}

func (s *Server) toolSchema(c *gin.Context) {
	if svc, ok := s.service(c); ok {
		writeCached(c, "application/schema+json", catalog.Schema(svc), false)
	}
}

// runTool is POST /tools/:id/run: a sync tool (or a client tool with a
// server engine) answers inline, as one item pinned to the live
// definition; a job tool submits a job and waits for it (run.App.RunTool).
func (s *Server) runTool(c *gin.Context) {
	start := time.Now()
	ans, err := s.cfg.Run.RunTool(c.Request.Context(), run.ToolRun{
		Origin: origin(c), Tool: c.Param("id"), Start: start, IdempotencyKey: c.GetHeader(IdempotencyKeyHeader),
		Body: s.newBody(c, runShape), Browser: s.browser(c), Stop: s.drained,
	})
	if err != nil {
		s.runRefusal(c, err)
		return
	}
	setLimits(c, ans.Limits)
	if ans.Replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	if !ans.Run.Status.Finished() {
		c.Header("Location", ans.Run.Job.Location)
		writeJSON(c, http.StatusAccepted, "application/json", ans.Run)
		return
	}
	if ans.Run.Job != nil {
		writeJSON(c, http.StatusOK, "application/json", ans.Run)
		return
	}
	writeRun(c, &ans.Run)
}

// runRefusal answers a refused run; nothing when the client left.
func (s *Server) runRefusal(c *gin.Context, err error) {
	if errors.Is(err, c.Request.Context().Err()) && c.Request.Context().Err() != nil {
		c.Abort() // the client is gone
		return
	}
	s.toolsRefusal(c, err)
}

// writeRun answers 200 with a run document, encoded by hand
// (contracts.Run.AppendJSON: writeJSON's bytes) into a pooled buffer, as
// writeBatch does.
func writeRun(c *gin.Context, doc *contracts.Run) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			buf.Reset()
			jsonBuffers.Put(buf)
		}
	}()
	b, err := doc.AppendJSON(buf.AvailableBuffer())
	if err != nil {
		writeJSON(c, http.StatusOK, "application/json", doc) // its internal_error answer
		return
	}
	buf.Write(b) // keeps a grown slice with the pooled buffer
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

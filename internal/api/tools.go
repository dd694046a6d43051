package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/wire"
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
		writeCached(c, "application/json", catalog.OpenAPI(s.cfg.Run.Snapshot(), s.cfg.Version, catalog.Cookies{Session: s.guard.SessionCookie(), Token: s.guard.TokenCookie()}), false)
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
// definition; a job tool submits a job (jobrun.go).
func (s *Server) runTool(c *gin.Context) {
	start := time.Now()
	svc, ok := s.service(c)
	if !ok {
		return
	}
	if err := run.Runnable(svc); err != nil {
		s.toolsRefusal(c, err)
		return
	}
	if svc.Platform().Job != nil {
		s.runJobTool(c, svc)
		return
	}
	var req map[string]any
	switch ct := c.ContentType(); {
	case ct == "multipart/form-data":
		// The run route's form, the same parts for every tool (issue 16,
		// item 8): "input" and "wait_ms"; a sync tool has no file inputs,
		// so any other part names none of them.
		var ok bool
		if req, ok = s.syncRunForm(c, svc); !ok {
			return
		}
	case ct == "application/json" || ct == "":
		var ok bool
		if req, ok = s.readRunRequest(c); !ok {
			return
		}
	default:
		toolsProblem(c, contracts.ProblemUnsupportedMediaType, "A run is application/json or multipart/form-data.")
		return
	}
	input, _ := req["input"].(map[string]any)
	ad, ok := s.admit(c, svc, input)
	if !ok {
		return
	}
	defer ad.Release()
	res, err := s.cfg.Run.Sync(c.Request.Context(), origin(c), svc, req["input"], start)
	if err != nil {
		s.runRefusal(c, err)
		return
	}
	answerRun(c, res)
}

// syncRunForm reads the multipart run request of a sync tool: its "input"
// and "wait_ms" parts, as a job tool's form has them; a file part (or any
// other) names no file input of the tool and is refused 415
// tools.run.file_type. On a refusal it writes the problem.
func (s *Server) syncRunForm(c *gin.Context, svc *registry.Service) (map[string]any, bool) {
	mp, done, ok := s.openForm(c, svc.Platform().QuotaClass, s.jobFormLimits("input", "wait_ms"))
	if !ok {
		return nil, false
	}
	defer done()
	if mp.next != nil {
		toolsProblem(c, contracts.ProblemFileType, fmt.Sprintf("The part %q names no file input of the tool: it takes none.", mp.next.FormName()))
		return nil, false
	}
	doc := map[string]any{}
	raw, ok := mp.fields["input"]
	if !ok {
		raw = []byte("{}")
	}
	if doc["input"], ok = s.decodePart(c, "input", raw); !ok {
		return nil, false
	}
	if raw, ok := mp.fields["wait_ms"]; ok {
		if doc["wait_ms"], ok = s.decodePart(c, "wait_ms", raw); !ok {
			return nil, false
		}
	}
	return s.checkRunRequest(c, doc)
}

// runRefusal answers a refused sync run; nothing when the client left.
func (s *Server) runRefusal(c *gin.Context, err error) {
	if errors.Is(err, c.Request.Context().Err()) && c.Request.Context().Err() != nil {
		c.Abort() // the client is gone
		return
	}
	s.toolsRefusal(c, err)
}

// answerRun answers a run that happened with its tools.run@1 document,
// 200 whether it succeeded or failed with the tool's own error (or the
// platform's: a timeout, a crash).
func answerRun(c *gin.Context, r *run.Result) {
	doc := contracts.Run{ID: r.ExecutionID, Tool: r.Tool, Status: contracts.RunSucceeded}
	if r.Succeeded {
		doc.Result = json.RawMessage(r.Result)
	} else {
		doc.Status, doc.Error = contracts.RunFailed, r.Error
	}
	writeRun(c, &doc)
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

// readRunRequest reads and checks a JSON tools.run-request@1 body,
// decoding it once.
func (s *Server) readRunRequest(c *gin.Context) (map[string]any, bool) {
	body, ok := s.readToolsBody(c)
	if !ok {
		return nil, false
	}
	p := s.platform
	doc, err := wire.Decode(body, wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, jsonRefusal(err))
		return nil, false
	}
	return s.checkRunRequest(c, doc)
}

// checkRunRequest checks a decoded tools.run-request@1 document.
func (s *Server) checkRunRequest(c *gin.Context, doc any) (map[string]any, bool) {
	if m, ok := plainRunRequest(doc); ok {
		return m, true
	}
	if err := contracts.ValidateDocument(contracts.RunRequestV1, doc); err != nil {
		p := Problem{Status: ProblemStatus(contracts.ProblemInvalidRequest), Code: contracts.ProblemInvalidRequest,
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

// plainRunRequest reports whether doc is the common tools.run-request@1
// document, {"input": {…}} and nothing else, which the contract's schema
// accepts whatever the input holds (the input is the tool's schema's to
// check): such a run skips the contract's schema validation. Any other
// document, valid or not, is validated in full.
func plainRunRequest(doc any) (map[string]any, bool) {
	m, ok := doc.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	_, ok = m["input"].(map[string]any)
	return m, ok
}

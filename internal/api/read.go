package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/catalog"
)

// DefaultReadBudget is the request budget of the catalogue and diagnostics
// routes: seed 000's 20 s ("The catalogue and diagnostics routes run under
// a 20 s request budget").
const DefaultReadBudget = 20 * time.Second

// readBudget runs the rest of a catalogue or diagnostics request
// (authentication, the account lookup, building the answer) under the read
// budget: its context ends at the deadline, and the answer must be written
// within the platform's response reserve after it. A request whose budget
// is spent before it answered gets 503 request_timeout.
func (s *Server) readBudget(c *gin.Context) {
	budget := s.cfg.ReadBudget
	if budget <= 0 {
		budget = DefaultReadBudget
	}
	deadline := time.Now().Add(budget)
	ctx, cancel := context.WithDeadline(c.Request.Context(), deadline)
	defer cancel()
	parent := c.Request.Context()
	c.Request = c.Request.WithContext(ctx)
	// Best effort: a writer that cannot set deadlines writes under the
	// server's own timeouts.
	reserve := time.Duration(s.platform.ResponseReserveMS) * time.Millisecond
	if reserve <= 0 {
		reserve = 2 * time.Second // the platform default
	}
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(deadline.Add(reserve))
	c.Next()
	if !c.Writer.Written() && parent.Err() == nil && budgetSpent(c) {
		problem(c, "request_timeout", "The request did not finish within its budget of "+budget.String()+".")
	}
}

// budgetSpent reports whether the request's budget has ended: its context
// ended or its deadline has passed, whichever is seen first.
func budgetSpent(c *gin.Context) bool {
	ctx := c.Request.Context()
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

func (s *Server) catalog(c *gin.Context) {
	if budgetSpent(c) {
		return // readBudget answers
	}
	writeCached(c, "application/json", catalog.Build(s.platform, s.cfg.Run.Snapshot()), true)
}

func (s *Server) diagnostics(c *gin.Context) {
	if budgetSpent(c) {
		return // readBudget answers
	}
	writeJSON(c, http.StatusOK, "application/json", catalog.Diagnose(s.platform, s.cfg.Run.Snapshot(), s.cfg.Process, time.Now()))
}

// writeJSON writes v as compact UTF-8 JSON (no HTML escaping).
//
// The encoding buffer is pooled: c.Data copies the bytes into the
// connection's writer before it returns, so the buffer is free again when
// writeJSON returns. A buffer grown past maxPooledJSON (a large catalogue)
// is left to the collector rather than kept.
func writeJSON(c *gin.Context, status int, contentType string, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			buf.Reset()
			jsonBuffers.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		c.Data(http.StatusInternalServerError, "application/problem+json",
			[]byte(`{"type":"`+ProblemType+`internal_error","title":"Internal Server Error","status":500,"code":"internal_error"}`))
		return
	}
	writeBody(c, status, contentType+"; charset=utf-8", bytes.TrimRight(buf.Bytes(), "\n"))
}

// maxPooledJSON bounds the buffers jsonBuffers keeps.
const maxPooledJSON = 64 << 10

// jsonBuffers are writeJSON's encoding buffers.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
)

// The jobs routes of ADR-027 under /api/v1/jobs: submit (JSON or
// multipart with files), get, events (server-sent), files (owner or signed
// URL), retry and cancel, each one use case of the application layer. Every
// refusal is a problem document, mapped in toolsRefusal alone.

func (s *Server) registerJobs() {
	g := s.engine.Group(Prefix+"/jobs", s.resolveCaller, s.jobsAvailable)
	g.POST("", s.submitJob)
	g.GET("/:id", s.getJob)
	g.GET("/:id/events", s.jobEvents)
	g.GET("/:id/files/:name", s.jobFile)
	g.POST("/:id/retry", s.retryJob)
	g.POST("/:id/cancel", s.cancelJob)
}

func (s *Server) jobsAvailable(c *gin.Context) {
	if !s.cfg.Run.RunsJobs() {
		s.toolsRefusal(c, &run.Refusal{Code: run.JobsUnavailable, Detail: "This server does not run jobs."})
		return
	}
	c.Next()
}

// submitJob is POST /jobs (run.App.SubmitJob): 202 with the job and its
// Location.
func (s *Server) submitJob(c *gin.Context) {
	ans, err := s.cfg.Run.SubmitJob(c.Request.Context(), run.Submission{Origin: origin(c),
		IdempotencyKey: c.GetHeader(IdempotencyKeyHeader), Body: s.newBody(c, jobShape), Browser: s.browser(c)})
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	s.answerJob(c, http.StatusAccepted, ans)
}

// answerJob answers a job a use case made, found or retried, with its
// admission's rate-limit fields, its Location when it was submitted (202)
// and, for a replayed submission, Idempotent-Replayed.
func (s *Server) answerJob(c *gin.Context, status int, ans *run.JobAnswer) {
	setLimits(c, ans.Limits)
	if ans.Replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	if status == http.StatusAccepted {
		c.Header("Location", contracts.JobLocation(ans.Job.ID))
	}
	writeJSON(c, status, "application/json", ans.Job)
}

// IdempotencyKeyHeader is the header that makes a job submission (POST
// /jobs, a job tool's run) idempotent: the same key from the same owner
// within jobs.IdempotencyWindow gives the job the first submission made,
// answered as that submission was and marked Idempotent-Replayed: true,
// whichever replica the retry reaches.
const IdempotencyKeyHeader = "Idempotency-Key"

func (s *Server) getJob(c *gin.Context) {
	d, err := s.cfg.Run.GetJob(c.Request.Context(), origin(c), c.Param("id"))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", d)
}

// retryJob is POST /jobs/:id/retry (run.App.RetryJob): admitted like a
// submission, answered with the job.
func (s *Server) retryJob(c *gin.Context) {
	ans, err := s.cfg.Run.RetryJob(c.Request.Context(), origin(c), c.Param("id"))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	s.answerJob(c, http.StatusOK, ans)
}

func (s *Server) cancelJob(c *gin.Context) {
	d, err := s.cfg.Run.CancelJob(c.Request.Context(), origin(c), c.Param("id"))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", d)
}

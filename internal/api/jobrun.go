// The run route of a job tool: a job submitted, waited for up to wait_ms,
// and answered as the run's outcome or as 202 with the job's Location.

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/wire"
)

// runJobTool is the run route of a job tool: it submits a job of
// run.job.type with input { ...input, ...run.job.preset, tool:
// run.job.operation } (run.JobInput) and waits up to wait_ms for it to
// finish.
func (s *Server) runJobTool(c *gin.Context, svc *registry.Service) {
	if s.cfg.Jobs == nil {
		toolsProblem(c, contracts.ProblemToolUnavailable, "This server does not run jobs.")
		return
	}
	s.browserSession(c)
	if err := s.cfg.Run.JobRunnable(c.Request.Context(), svc, origin(c)); err != nil {
		s.toolsRefusal(c, err)
		return
	}
	if job, ok := s.replayed(c); ok {
		if job != nil {
			s.answerJobRun(c, svc, job)
		}
		return
	}
	p := svc.Platform()
	// The tool is known from the route: the run is admitted before its
	// body is read, so that what the caller makes the server read and
	// buffer counts against its quota class and concurrency. Only an
	// egress tool needs its input (the target) to be admitted.
	var ad *run.Admission
	held := false
	defer func() {
		if held {
			ad.Release()
		}
	}()
	if !p.Egress {
		var ok bool
		if ad, ok = s.admitJob(c, svc, nil); !ok {
			return
		}
		held = true
	}
	var (
		input map[string]any
		refs  []contracts.FileReference
		wait  = DefaultRunWait
		files iter.Seq2[jobs.Upload, error]
		// formDone ends the reading of a form once its files are in.
		formDone = func() {}
	)
	switch ct := c.ContentType(); {
	case ct == "multipart/form-data":
		mp, done, ok := s.openForm(c, p.QuotaClass, s.jobFormLimits("input", "files", "references", "wait_ms"))
		if !ok {
			return
		}
		defer done()
		formDone = done
		doc := map[string]any{}
		raw, ok := mp.fields["input"]
		if !ok {
			raw = []byte("{}")
		}
		if doc["input"], ok = s.decodePart(c, "input", raw); !ok {
			return
		}
		// "references" is the jobs API's name of the run request's
		// "files": the same parts on both routes (issue 16, item 8).
		_, hasFiles := mp.fields["files"]
		_, hasRefs := mp.fields["references"]
		if hasFiles && hasRefs {
			toolsProblem(c, contracts.ProblemInvalidRequest, `A run form has a "files" or a "references" part, not both.`)
			return
		}
		for _, name := range []string{"files", "references"} {
			if raw, ok := mp.fields[name]; ok {
				if doc["files"], ok = s.decodePart(c, name, raw); !ok {
					return
				}
			}
		}
		if raw, ok := mp.fields["wait_ms"]; ok {
			if doc["wait_ms"], ok = s.decodePart(c, "wait_ms", raw); !ok {
				return
			}
		}
		req, ok := s.checkRunRequest(c, doc)
		if !ok {
			return
		}
		input, refs, wait = runRequestParts(req, wait)
		files = mp.uploads(fileNames(svc), maxFileBytes(svc))
	case ct == "application/json" || ct == "":
		req, ok := s.readRunRequest(c)
		if !ok {
			return
		}
		input, refs, wait = runRequestParts(req, wait)
	default:
		toolsProblem(c, contracts.ProblemUnsupportedMediaType, "A run is application/json or multipart/form-data.")
		return
	}
	jobInput := run.JobInput(svc, input)
	// The quota is spent at admission; the job's concurrency slots are
	// the job's for its whole life, not only while the route waits for
	// it: the job releases them where it ends, on whichever replica.
	if !held {
		var ok bool
		if ad, ok = s.admitJob(c, svc, input); !ok {
			return
		}
		held = true
	}
	job, ok := s.submit(c, ad, svc, jobInput, refs, files)
	if !ok {
		return
	}
	formDone()   // the form's slot is not held while the run waits
	held = false // the job holds the slots now
	job = s.await(c.Request.Context(), job, wait)
	s.answerJobRun(c, svc, job)
}

// decodePart decodes a JSON field part of a multipart run.
func (s *Server) decodePart(c *gin.Context, name string, raw []byte) (any, bool) {
	p := s.platform
	v, err := wire.Decode(bytes.TrimSpace(raw), wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, fmt.Sprintf("The part %q is not JSON: %s", name, jsonRefusal(err)))
		return nil, false
	}
	return v, true
}

// runRequestParts returns the input, the file references and the wait of
// a checked run request.
func runRequestParts(req map[string]any, wait time.Duration) (map[string]any, []contracts.FileReference, time.Duration) {
	input, _ := req["input"].(map[string]any)
	var refs []contracts.FileReference
	if raw, err := json.Marshal(req["files"]); err == nil {
		_ = json.Unmarshal(raw, &refs)
	}
	if n, ok := req["wait_ms"].(json.Number); ok {
		if ms, err := n.Int64(); err == nil {
			wait = min(time.Duration(ms)*time.Millisecond, MaxRunWait)
		}
	}
	return input, refs, wait
}

// await waits up to wait for job to reach a final state and returns it as
// it is then. It stops early when the client leaves or the server drains.
func (s *Server) await(ctx context.Context, job *jobs.Job, wait time.Duration) *jobs.Job {
	if job.State.Final() || wait <= 0 {
		return job
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ch, err := s.cfg.Jobs.Subscribe(wctx, job.ID, job.Owner)
	if err != nil {
		return job
	}
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if j, err := s.cfg.Jobs.Get(context.WithoutCancel(ctx), job.ID, job.Owner); err == nil {
					return j
				}
				return job
			}
			if ev.Kind == jobs.EventState && ev.Job != nil {
				job = ev.Job
				if ev.State.Final() {
					return job
				}
			}
		case <-s.drained:
			return job
		}
	}
}

// answerJobRun answers a job tool's run with tools.run@1: 200 when the job
// finished, else 202 with its Location.
func (s *Server) answerJobRun(c *gin.Context, svc *registry.Service, job *jobs.Job) {
	d, err := s.document(c.Request.Context(), job)
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	doc := contracts.Run{ID: job.ID, Tool: svc.Code(), Status: contracts.RunStatus(job.State),
		Job: &contracts.JobLink{ID: job.ID, Location: contracts.JobLocation(job.ID)}}
	status := http.StatusOK
	switch job.State {
	case jobs.Succeeded:
		doc.Result = d.Result
		if doc.Result == nil {
			doc.Result = json.RawMessage("{}")
		}
		doc.Files = d.files
	case jobs.Failed, jobs.Cancelled:
		doc.Error = d.Error
		doc.Files = d.files
	default:
		status = http.StatusAccepted
		c.Header("Location", contracts.JobLocation(job.ID))
	}
	writeJSON(c, status, "application/json", doc)
}

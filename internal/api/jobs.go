package api

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/wire"
)

// The jobs routes of ADR-027 under /api/v1/jobs: submit (JSON or
// multipart with files), get, events (server-sent), files (owner or signed
// URL), retry and cancel. The owner of a job is the caller's principal key.
// Every refusal is a problem document, mapped in jobsProblem alone.

// The wait of a job tool's run before it answers 202.
const (
	DefaultRunWait = 10 * time.Second
	MaxRunWait     = 60 * time.Second
)

var (
	// errUnexpectedPart is returned by the upload sequence when a file
	// part names no file input of the tool.
	errUnexpectedPart = errors.New("api: a file part names no file input of the tool")
	// errMultipart is returned when a multipart body is malformed.
	errMultipart = errors.New("api: malformed multipart body")
	// errBodyTimeout is returned by a formBody when its data stopped
	// arriving at the minimum rate, or its part's or its own deadline
	// passed.
	errBodyTimeout = errors.New("api: the request body did not arrive in time")
	// errBodyTooLarge is returned by a formBody when a phase of the body
	// is over its byte limit.
	errBodyTooLarge = errors.New("api: a part of the request body is over its limit")
)

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
	if s.cfg.Jobs == nil {
		toolsProblem(c, ProblemJobsUnavailable, "This server does not run jobs.")
		return
	}
	c.Next()
}

// jobRequest is the body of POST /jobs (or its "job" part).
type jobRequest struct {
	Type       string                    `json:"type"`
	Input      map[string]any            `json:"-"`
	References []contracts.FileReference `json:"references"`
}

func (s *Server) submitJob(c *gin.Context) {
	if job, ok := s.replayed(c); ok {
		if job != nil {
			c.Header("Location", contracts.JobLocation(job.ID))
			s.writeJob(c, http.StatusAccepted, job)
		}
		return
	}
	var (
		raw   []byte
		files iter.Seq2[jobs.Upload, error]
	)
	var mp *multipartBody
	switch ct := c.ContentType(); {
	case ct == "multipart/form-data":
		// The job's type, hence its tool, is in the body: the form is
		// gated by the jobs' quota class before it is read, and the job
		// is admitted once its tool is known.
		var ok bool
		var done func()
		if mp, done, ok = s.openForm(c, guard.ClassJob, s.jobFormLimits("job", "type", "input", "references")); !ok {
			return
		}
		defer done()
		if raw, ok = jobFromParts(mp.fields); !ok {
			toolsProblem(c, contracts.ProblemInvalidRequest, `A job form has a "job" part, or "type", "input" and "references" parts, not both.`)
			return
		}
	case ct == "application/json" || ct == "":
		var ok bool
		if raw, ok = s.readToolsBody(c); !ok {
			return
		}
	default:
		toolsProblem(c, contracts.ProblemUnsupportedMediaType, "A job is application/json or multipart/form-data.")
		return
	}
	var req jobRequest
	p := s.platform
	doc, err := wire.Decode(raw, wire.Limits{MaxBytes: int(p.MaxRequestBodyBytes), MaxDepth: 2 * p.MaxJSONDepth})
	m, isObject := doc.(map[string]any)
	if err == nil && isObject {
		err = json.Unmarshal(raw, &req)
	}
	req.Input, _ = m["input"].(map[string]any)
	if err != nil || !isObject || req.Type == "" || req.Input == nil || hasUnknown(m, "type", "input", "references") {
		toolsProblem(c, contracts.ProblemInvalidRequest, `A job is {"type", "input", "references"?} with an object input.`)
		return
	}
	s.browserSession(c)
	op, _ := req.Input["tool"].(string)
	svc, err := run.JobTool(s.cfg.Run.Snapshot(), req.Type, op)
	if err == nil {
		err = s.cfg.Run.JobRunnable(c.Request.Context(), svc, origin(c))
	}
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	// The quota is spent at submission; the concurrency slots are the
	// job's, held until it ends wherever it runs.
	ad, ok := s.admitJob(c, svc, req.Input)
	if !ok {
		return
	}
	if mp != nil {
		files = mp.uploads(fileNames(svc), maxFileBytes(svc))
	}
	job, ok := s.submit(c, ad, svc, req.Input, req.References, files)
	if !ok {
		ad.Release()
		return
	}
	c.Header("Location", contracts.JobLocation(job.ID))
	s.writeJob(c, http.StatusAccepted, job)
}

// IdempotencyKeyHeader is the header that makes a job submission (POST
// /jobs, a job tool's run) idempotent: the same key from the same owner
// within jobs.IdempotencyWindow gives the job the first submission made,
// answered as that submission was and marked Idempotent-Replayed: true,
// whichever replica the retry reaches.
const IdempotencyKeyHeader = "Idempotency-Key"

// replayed answers a submission whose Idempotency-Key names a job of the
// caller's already: ok with the job to answer, or ok with nil when the
// key was refused (the problem is written). Not ok: no such job, the
// submission goes on (and Submit settles a race between two).
func (s *Server) replayed(c *gin.Context) (*jobs.Job, bool) {
	key := c.GetHeader(IdempotencyKeyHeader)
	if key == "" {
		return nil, false
	}
	job, err := s.cfg.Jobs.Idempotent(c.Request.Context(), s.owner(c), key)
	switch {
	case errors.Is(err, jobs.ErrNotFound):
		return nil, false
	case err != nil:
		s.jobsProblem(c, err)
		return nil, true
	}
	c.Header("Idempotent-Replayed", "true")
	return job, true
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
		t, _ = json.Marshal(string(t))
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

// anonymousPrefix starts the principal key of an anonymous caller.
const anonymousPrefix = "anonymous:"

func hasUnknown(m map[string]any, known ...string) bool {
	for k := range m {
		if !slices.Contains(known, k) {
			return true
		}
	}
	return false
}

// maxFileBytes is the largest maxBytes of tool's file inputs: the bound of
// each file part of its uploads (the jobs subsystem's default when the
// tool declares none).
func maxFileBytes(svc *registry.Service) int64 {
	var n int64
	for _, f := range svc.Platform().Files {
		n = max(n, f.MaxBytes)
	}
	if n <= 0 {
		n = jobs.DefaultMaxFileBytes
	}
	return n
}

// jobFormLimits bounds the leading fields of a jobs or run form: the
// named JSON parts, each and all together within the platform's request
// body cap, as a JSON body would be.
func (s *Server) jobFormLimits(names ...string) formLimits {
	b := s.platform.MaxRequestBodyBytes
	return formLimits{names: names, maxFields: len(names), fieldBytes: b, totalBytes: b}
}

func fileNames(svc *registry.Service) []string {
	files := svc.Platform().Files
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}

// submit submits a job of tool's job type for the caller with input (the
// job's input, "tool" included), refs and files, the tool's accepted types
// and size limit applying. The input is checked against the tool's input
// schema first, as the job will run it (each file input standing in as an
// empty string): an input the tool would refuse is refused before any job
// exists. On a refusal it writes the problem and gives ad's cost back
// (ad.Refund): a refusal before the tool runs — a file of a refused type
// or over its size, an input or reference the job cannot take — costs
// nothing. A body that stopped arriving or broke the transport's bounds
// keeps its cost: that reading is the load the quota bounds.
func (s *Server) submit(c *gin.Context, ad *run.Admission, svc *registry.Service, input map[string]any, refs []contracts.FileReference,
	files iter.Seq2[jobs.Upload, error]) (_ *jobs.Job, ok bool) {
	bodyRefused := false
	defer func() {
		if !ok && !bodyRefused {
			ad.Refund()
		}
	}()
	// A file sent inline (base64 in the input) becomes an upload like a
	// part: sniffed and limited by the jobs subsystem, whatever way it
	// came.
	inline, err := run.InlineFiles(svc, input)
	if err != nil {
		s.toolsRefusal(c, err)
		return nil, false
	}
	if len(inline) > 0 {
		files = withUploads(inline, files)
	}
	provided := func(name string) bool {
		// A multipart body may upload any file input; a JSON one gives
		// only its references and inline files.
		return files != nil || slices.ContainsFunc(refs, func(r contracts.FileReference) bool { return r.Name == name })
	}
	if err := run.CheckJobInput(svc, input, provided); err != nil {
		s.toolsRefusal(c, err)
		return nil, false
	}
	p := svc.Platform()
	var accept []string
	var maxBytes int64
	for _, f := range p.Files {
		for _, t := range f.Types {
			if !slices.Contains(accept, t) {
				accept = append(accept, t)
			}
		}
		maxBytes = max(maxBytes, f.MaxBytes)
	}
	names := fileNames(svc)
	var references []jobs.Reference
	for _, r := range refs {
		if !slices.Contains(names, r.Name) {
			toolsProblem(c, contracts.ProblemInvalidRequest, fmt.Sprintf("The reference %q names no file input of the tool.", r.Name))
			return nil, false
		}
		references = append(references, jobs.Reference{Name: r.Name, Job: r.Job, File: r.File, Media: r.Media})
	}
	raw, err := json.Marshal(input)
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, "The input cannot be encoded.")
		return nil, false
	}
	job, err := s.cfg.Jobs.Submit(c.Request.Context(), jobs.Submission{
		Owner: s.owner(c), Type: p.Job.Type, Input: raw, Files: files,
		References: references, Accept: accept, MaxFileBytes: maxBytes,
		Secrets:        run.Secrets(svc),
		Slots:          ad.Slots,
		IdempotencyKey: c.GetHeader(IdempotencyKeyHeader),
		// With the files known, the input is checked again as the job
		// will run it: a required file a form did not upload is refused
		// as a JSON body without it is.
		Check: func(names []string) error {
			return run.CheckJobInput(svc, input, func(name string) bool { return slices.Contains(names, name) })
		},
	})
	if err != nil {
		// An upload that stopped arriving, or a part over its bound, is
		// the body's refusal; the jobs subsystem left no job and no file.
		if bodyRefused = s.formRefused(c); !bodyRefused {
			s.toolsRefusal(c, err)
		}
		return nil, false
	}
	if job.Replayed {
		// Another submission with the key won the race: this one's
		// admission made nothing, and costs nothing.
		ad.Refund()
		ad.Release()
		c.Header("Idempotent-Replayed", "true")
	}
	return job, true
}

// withUploads is ups followed by the uploads of rest (none when nil).
func withUploads(ups []jobs.Upload, rest iter.Seq2[jobs.Upload, error]) iter.Seq2[jobs.Upload, error] {
	return func(yield func(jobs.Upload, error) bool) {
		for _, u := range ups {
			if !yield(u, nil) {
				return
			}
		}
		if rest != nil {
			for u, err := range rest {
				if !yield(u, err) {
					return
				}
			}
		}
	}
}

func (s *Server) getJob(c *gin.Context) {
	job, err := s.cfg.Jobs.Get(c.Request.Context(), c.Param("id"), s.owner(c))
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	s.writeJob(c, http.StatusOK, job)
}

// retryJob is POST /jobs/:id/retry. A retry runs the tool again, so it is
// admitted like a submission: the job's tool (its type and input "tool")
// gives the quota class, cost, anonymity and capability, and a refusal is
// written as on every other route. The job is read first, so that a job
// the caller does not own costs nothing and stays a 404. A job whose tool
// is gone is not admitted against anything: its retry fails as
// unknown_tool without running.
func (s *Server) retryJob(c *gin.Context) {
	ctx := c.Request.Context()
	old, err := s.cfg.Jobs.Get(ctx, c.Param("id"), s.owner(c))
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	var input map[string]any
	_ = json.Unmarshal(old.Input, &input)
	op, _ := input["tool"].(string)
	if old.State != jobs.Failed && old.State != jobs.Cancelled {
		// Refused before it is admitted: a retry that cannot happen
		// spends nothing.
		s.jobsProblem(c, jobs.ErrState)
		return
	}
	var ad *run.Admission
	if svc, ok := s.cfg.Run.Snapshot().JobTool(old.Type, op); ok {
		if err := s.cfg.Run.JobRunnable(c.Request.Context(), svc, origin(c)); err != nil {
			s.toolsRefusal(c, err)
			return
		}
		if ad, ok = s.admitJob(c, svc, input); !ok {
			return
		}
	}
	var slots string
	if ad != nil {
		slots = ad.Slots
	}
	job, err := s.cfg.Jobs.RetryHolding(ctx, c.Param("id"), s.owner(c), slots)
	if err != nil {
		ad.Release()
		s.jobsProblem(c, err)
		return
	}
	s.writeJob(c, http.StatusOK, job)
}

func (s *Server) cancelJob(c *gin.Context) {
	job, err := s.cfg.Jobs.Cancel(c.Request.Context(), c.Param("id"), s.owner(c))
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	s.writeJob(c, http.StatusOK, job)
}

// owner is the caller as the owner of jobs: the principal key of a signed-in
// caller; for an anonymous caller, whose key holds its address, an HMAC of
// that key under Config.OwnerKey, so that no address is stored with a job.
func (s *Server) owner(c *gin.Context) string {
	caller := origin(c).Caller.Key
	if !isAnonymousKey(caller) {
		return caller
	}
	m := hmac.New(sha256.New, s.ownerKey)
	m.Write([]byte(caller))
	return anonymousPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

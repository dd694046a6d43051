// The job submission use cases: POST /jobs, a retry, and the submission
// a job tool's run makes (runtool.go) — each resolves the job's tool,
// admits its caller, reads what it needs of the body, and submits the job
// with the caller's slots handed to it.

package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
)

// Presented is what a request presents to the guard: its peer, forwarded
// addresses, authorization and cookies.
type Presented = guard.Presented

// RateLimits are the rate-limit fields of the quotas a decision
// consulted, for the answer's RateLimit and RateLimit-Policy fields.
type RateLimits = guard.RateLimits

// Submission is a job submitted through POST /jobs.
type Submission struct {
	Origin Origin
	// IdempotencyKey makes the submission idempotent: the same key from
	// the same owner within jobs.IdempotencyWindow answers the job the
	// first submission made (JobAnswer.Replayed).
	IdempotencyKey string
	// Body holds the job: its type, input and references, then its
	// uploads.
	Body Body
	// Browser issues a browser session to an anonymous browser on its
	// first job (IssueSession); nil for a request that is not a
	// browser's own.
	Browser *Browser
}

// Browser is an anonymous browser's request: what it presents, and where
// the session issued to it goes (a cookie).
type Browser struct {
	Presented Presented
	Issued    func(value string, expires time.Time)
}

// JobAnswer is a job a use case made, found or retried, as its answer
// needs it.
type JobAnswer struct {
	Job *contracts.Job
	// Limits are the rate-limit fields of the admission.
	Limits RateLimits
	// Replayed says the Idempotency-Key named a job made before: Job is
	// that job, and nothing was admitted.
	Replayed bool
}

// SubmitJob is POST /jobs: the job's type names its tool, so the body is
// read first (an upload form behind the upload gate, by the jobs' quota
// class), then the tool resolved and found runnable for the caller, the
// caller admitted, and the job submitted with its files.
func (a *App) SubmitJob(ctx context.Context, sub Submission) (*JobAnswer, error) {
	if _, err := a.jobsOn(); err != nil {
		return nil, err
	}
	o := sub.Origin
	if ans, err := a.replay(ctx, o, sub.IdempotencyKey); ans != nil || err != nil {
		return ans, err
	}
	req, done, err := a.readBody(ctx, o, guard.ClassJob, sub.Body, BodySpec{Job: true})
	if err != nil {
		return nil, err
	}
	defer done()
	o = a.browserSession(ctx, o, sub.Browser)
	op, _ := req.Input["tool"].(string)
	svc, err := JobTool(a.cfg.Snapshot(), req.Type, op)
	if err == nil {
		err = a.JobRunnable(ctx, svc, o)
	}
	if err != nil {
		return nil, err
	}
	// The quota is spent at submission; the concurrency slots are the
	// job's, held until it ends wherever it runs.
	ad, err := a.AdmitJob(ctx, o, svc, req.Input)
	if err != nil {
		return nil, err
	}
	job, err := a.submit(ctx, o, ad, svc, sub.IdempotencyKey, req.Input, req.References, sub.Body, sub.Body.Uploads(spec(svc)))
	if err != nil {
		ad.Release()
		return nil, err
	}
	return a.answerJob(ctx, job, ad.Limits)
}

// browserSession is o as the session issued to its anonymous browser, or
// o as it is (not a browser's request, not anonymous, or its address has
// had its sessions for now).
func (a *App) browserSession(ctx context.Context, o Origin, b *Browser) Origin {
	if b == nil || !o.Anonymous() {
		return o
	}
	value, expires, no, err := a.IssueSession(ctx, b.Presented, o)
	if err != nil {
		return o
	}
	b.Issued(value, expires)
	return no
}

// replay answers a submission whose Idempotency-Key names a job of the
// caller's already; nil, nil when there is none (the submission goes on,
// and Submit settles a race between two).
func (a *App) replay(ctx context.Context, o Origin, key string) (*JobAnswer, error) {
	if key == "" {
		return nil, nil
	}
	job, err := a.jobs.Idempotent(ctx, a.owner(o), key)
	switch {
	case errors.Is(err, jobs.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, jobRefusal(err)
	}
	ans, err := a.answerJob(ctx, job, RateLimits{})
	if ans != nil {
		ans.Replayed = true
	}
	return ans, err
}

// answerJob is the answer of job.
func (a *App) answerJob(ctx context.Context, job *jobs.Job, limits RateLimits) (*JobAnswer, error) {
	d, err := a.document(ctx, job)
	if err != nil {
		return nil, err
	}
	return &JobAnswer{Job: d, Limits: limits, Replayed: job.Replayed}, nil
}

// RetryJob is POST /jobs/:id/retry. A retry runs the tool again, so it is
// admitted like a submission: the job's tool (its type and input "tool")
// gives the quota class, cost, anonymity and capability. The job is read
// first, so that a job the caller does not own costs nothing and stays
// JobNotFound, and a job that cannot be retried is refused before it is
// admitted. A job whose tool is gone is not admitted against anything:
// its retry fails as unknown_tool without running.
func (a *App) RetryJob(ctx context.Context, o Origin, id string) (*JobAnswer, error) {
	js, err := a.jobsOn()
	if err != nil {
		return nil, err
	}
	old, err := js.Get(ctx, id, a.owner(o))
	if err != nil {
		return nil, jobRefusal(err)
	}
	if old.State != jobs.Failed && old.State != jobs.Cancelled {
		return nil, jobRefusal(jobs.ErrState)
	}
	var input map[string]any
	_ = json.Unmarshal(old.Input, &input) // a job's input is the JSON object it was submitted with
	op, _ := input["tool"].(string)
	var ad *Admission
	if svc, ok := a.cfg.Snapshot().JobTool(old.Type, op); ok {
		if err := a.JobRunnable(ctx, svc, o); err != nil {
			return nil, err
		}
		if ad, err = a.AdmitJob(ctx, o, svc, input); err != nil {
			return nil, err
		}
	}
	var slots string
	var limits RateLimits
	if ad != nil {
		slots, limits = ad.Slots, ad.Limits
	}
	job, err := js.RetryHolding(ctx, id, a.owner(o), slots)
	if err != nil {
		ad.Release()
		return nil, jobRefusal(err)
	}
	return a.answerJob(ctx, job, limits)
}

// submit submits a job of svc's job type for o with input (the job's
// input, "tool" included), refs and files, the tool's accepted types and
// size limit applying. The input is checked against the tool's input
// schema first, as the job will run it (each file input standing in as an
// empty string): an input the tool would refuse is refused before any job
// exists. A refusal gives ad's cost back (Refund): a refusal before the
// tool runs — a file of a refused type or over its size, an input or
// reference the job cannot take — costs nothing. A body that stopped
// arriving or broke its bounds (body.Err) keeps its cost: that reading is
// the load the quota bounds. A submission another with the same key beat
// made nothing: its admission is refunded and released.
func (a *App) submit(ctx context.Context, o Origin, ad *Admission, svc *registry.Service, key string, input map[string]any,
	refs []contracts.FileReference, body Body, files iter.Seq2[Upload, error]) (_ *jobs.Job, err error) {
	defer func() {
		if err != nil {
			if berr := body.Err(); berr != nil {
				err = berr // the body's own refusal, which keeps its cost
				return
			}
			ad.Refund()
		}
	}()
	// A file sent inline (base64 in the input) becomes an upload like a
	// part: sniffed and limited by the jobs subsystem, whatever way it
	// came.
	inline, err := InlineFiles(svc, input)
	if err != nil {
		return nil, err
	}
	uploads := jobUploads(inline, files)
	provided := func(name string) bool {
		// A form may upload any file input; a JSON body gives only its
		// references and inline files.
		return uploads != nil || slices.ContainsFunc(refs, func(r contracts.FileReference) bool { return r.Name == name })
	}
	if err := CheckJobInput(svc, input, provided); err != nil {
		return nil, err
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
	names := spec(svc).Files
	var references []jobs.Reference
	for _, r := range refs {
		if !slices.Contains(names, r.Name) {
			return nil, refuse(InvalidRequest, fmt.Sprintf("The reference %q names no file input of the tool.", r.Name))
		}
		references = append(references, jobs.Reference{Name: r.Name, Job: r.Job, File: r.File, Media: r.Media})
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, refuse(InvalidRequest, "The input cannot be encoded.")
	}
	job, err := a.jobs.Submit(ctx, jobs.Submission{
		Owner: a.owner(o), Type: p.Job.Type, Input: raw, Files: uploads,
		References: references, Accept: accept, MaxFileBytes: maxBytes,
		Secrets: Secrets(svc), Slots: ad.Slots, IdempotencyKey: key,
		// With the files known, the input is checked again as the job
		// will run it: a required file a form did not upload is refused
		// as a JSON body without it is.
		Check: func(names []string) error {
			return CheckJobInput(svc, input, func(name string) bool { return slices.Contains(names, name) })
		},
	})
	if err != nil {
		return nil, jobRefusal(err)
	}
	if job.Replayed {
		// Another submission with the key won the race: this one's
		// admission made nothing, and costs nothing.
		ad.Refund()
		ad.Release()
	}
	return job, nil
}

// jobUploads is inline followed by the uploads of rest, as the jobs
// subsystem takes them; nil when there are none at all.
func jobUploads(inline []jobs.Upload, rest iter.Seq2[Upload, error]) iter.Seq2[jobs.Upload, error] {
	if len(inline) == 0 && rest == nil {
		return nil
	}
	return func(yield func(jobs.Upload, error) bool) {
		for _, u := range inline {
			if !yield(u, nil) {
				return
			}
		}
		if rest != nil {
			for u, err := range rest {
				if !yield(jobs.Upload{Name: u.Name, Content: u.Content}, err) {
					return
				}
			}
		}
	}
}

// maxFileBytes is the largest maxBytes of svc's file inputs: the bound of
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

// await waits up to wait for job to reach a final state and returns it as
// it is then. It stops early when ctx ends or stop is closed (the server
// drains).
func (a *App) await(ctx context.Context, job *jobs.Job, wait time.Duration, stop <-chan struct{}) *jobs.Job {
	if job.State.Final() || wait <= 0 {
		return job
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ch, err := a.jobs.Subscribe(wctx, job.ID, job.Owner)
	if err != nil {
		return job
	}
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if j, err := a.jobs.Get(context.WithoutCancel(ctx), job.ID, job.Owner); err == nil {
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
		case <-stop:
			return job
		}
	}
}

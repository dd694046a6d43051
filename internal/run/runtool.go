// The run route's use case (POST /tools/:id/run): a sync tool answers
// inline, as one item pinned to the live definition; a job tool submits a
// job and waits for it up to the request's wait.

package run

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
)

// ToolRun is a run of a tool through its run route.
type ToolRun struct {
	Origin Origin
	// Tool is the tool's id, from the route.
	Tool string
	// Start is when the request arrived: a sync run's timings start there.
	Start time.Time
	// IdempotencyKey makes a job tool's submission idempotent
	// (Submission.IdempotencyKey).
	IdempotencyKey string
	// Body holds the run request, read when the use case says.
	Body Body
	// Browser issues a browser session to an anonymous browser on its
	// first job (Submission.Browser).
	Browser *Browser
	// Stop ends a job tool's wait early: the server drains.
	Stop <-chan struct{}
}

// RunAnswer is a run that happened, or the job a job tool's run submitted
// as it is when the wait ended: a tools.run@1 document. Its run finished
// when Run.Status.Finished(); else the job runs on at Run.Job.Location.
type RunAnswer struct {
	Run contracts.Run
	// Limits are the rate-limit fields of the admission.
	Limits RateLimits
	// Replayed says the Idempotency-Key named a job made before.
	Replayed bool
}

// RunTool is POST /tools/:id/run: the tool found and runnable through the
// run API, then its run — sync (the body read, the caller admitted, one
// item run) or a job (runJobTool).
func (a *App) RunTool(ctx context.Context, r ToolRun) (*RunAnswer, error) {
	svc, err := Lookup(a.cfg.Snapshot(), r.Tool)
	if err == nil {
		err = Runnable(svc)
	}
	if err != nil {
		return nil, err
	}
	if svc.Platform().Job != nil {
		return a.runJobTool(ctx, r, svc)
	}
	req, done, err := a.readBody(ctx, r.Origin, svc.Platform().QuotaClass, r.Body, spec(svc))
	if err != nil {
		return nil, err
	}
	done() // a sync tool has no uploads
	ad, err := a.Admit(ctx, r.Origin, svc, req.Input)
	if err != nil {
		return nil, err
	}
	defer ad.Release()
	res, err := a.Sync(ctx, r.Origin, svc, inputOf(req), r.Start)
	if err != nil {
		return nil, withLimits(err, ad.Limits)
	}
	return &RunAnswer{Run: res.Run(), Limits: ad.Limits}, nil
}

// inputOf is a request's input as the item path takes it: nil when the
// request has none.
func inputOf(req *Request) any {
	if req.Input == nil {
		return nil
	}
	return req.Input
}

// withLimits is err with the rate-limit fields of the run's admission,
// for a refusal after it was admitted (the answer still says them).
func withLimits(err error, l RateLimits) error {
	if r, ok := AsRefusal(err); ok && len(r.Limits.Policy) == 0 && len(r.Limits.Limit) == 0 {
		c := *r
		c.Limits = l
		return &c
	}
	return err
}

// Run is r's tools.run@1 document: succeeded with its result, or failed
// with the tool's own error (or the platform's: a timeout, a crash).
func (r *Result) Run() contracts.Run {
	doc := contracts.Run{ID: r.ExecutionID, Tool: r.Tool, Status: contracts.RunSucceeded}
	if r.Succeeded {
		doc.Result = json.RawMessage(r.Result)
	} else {
		doc.Status, doc.Error = contracts.RunFailed, r.Error
	}
	return doc
}

// runJobTool is the run of a job tool: a job of run.job.type with input
// { ...input, ...run.job.preset, tool: run.job.operation } (JobInput),
// waited for up to the request's wait. The tool is known from the route:
// the caller is admitted before the body is read, so that what it makes
// the server read and buffer counts against its quota class and
// concurrency; only an egress tool needs its input (the target) to be
// admitted, after the body. The job's concurrency slots are the job's for
// its whole life, not only while the route waits for it: the job releases
// them where it ends, on whichever replica.
func (a *App) runJobTool(ctx context.Context, r ToolRun, svc *registry.Service) (*RunAnswer, error) {
	if a.jobs == nil {
		return nil, refuse(ToolUnavailable, "This server does not run jobs.")
	}
	o := a.browserSession(ctx, r.Origin, r.Browser)
	if err := a.JobRunnable(ctx, svc, o); err != nil {
		return nil, err
	}
	if ans, err := a.replay(ctx, o, r.IdempotencyKey); ans != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return &RunAnswer{Run: jobRun(svc, ans.Job), Replayed: true}, nil
	}
	p := svc.Platform()
	var ad *Admission
	held := false
	defer func() {
		if held {
			ad.Release()
		}
	}()
	if !p.Egress {
		var err error
		if ad, err = a.AdmitJob(ctx, o, svc, nil); err != nil {
			return nil, err
		}
		held = true
	}
	s := spec(svc)
	req, done, err := a.readBody(ctx, o, p.QuotaClass, r.Body, s)
	if err != nil {
		return nil, withAdmission(err, ad)
	}
	defer done()
	if !held {
		if ad, err = a.AdmitJob(ctx, o, svc, req.Input); err != nil {
			return nil, err
		}
		held = true
	}
	job, err := a.submit(ctx, o, ad, svc, r.IdempotencyKey, JobInput(svc, req.Input), req.References, r.Body, r.Body.Uploads(s))
	if err != nil {
		return nil, withAdmission(err, ad)
	}
	held = false // the job holds the slots now
	done()       // the form's slot is not held while the run waits
	wait := DefaultRunWait
	if req.WaitSet {
		wait = min(req.Wait, MaxRunWait)
	}
	job = a.await(ctx, job, wait, r.Stop)
	d, err := a.document(ctx, job)
	if err != nil {
		return nil, err
	}
	return &RunAnswer{Run: jobRun(svc, d), Limits: ad.Limits, Replayed: job.Replayed}, nil
}

// withAdmission is withLimits with ad's fields, for a refusal after ad.
func withAdmission(err error, ad *Admission) error {
	if ad == nil {
		return err
	}
	return withLimits(err, ad.Limits)
}

// jobRun is the tools.run@1 document of a job tool's run whose job is d.
func jobRun(svc *registry.Service, d *contracts.Job) contracts.Run {
	doc := contracts.Run{ID: d.ID, Tool: svc.Code(), Status: d.State,
		Job: &contracts.JobLink{ID: d.ID, Location: contracts.JobLocation(d.ID)}}
	switch d.State {
	case contracts.RunSucceeded:
		doc.Result = d.Result
		if d.Result == nil {
			doc.Result = json.RawMessage("{}")
		}
		doc.Files = d.RunFiles()
	case contracts.RunFailed, contracts.RunCancelled:
		doc.Error = d.Error
		doc.Files = d.RunFiles()
	}
	return doc
}

// The jobs use cases of ADR-027 beside submission (submit.go): a job read,
// cancelled, followed and downloaded by its owner, each answered with the
// tools.job@1 document (contracts.Job); the owner of a caller's jobs; and
// the one mapping of the jobs subsystem's errors to refusals.

package run

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// UseJobs sets the jobs subsystem the job use cases run on, before the
// App serves: the subsystem is opened after the App, whose ResolveJob it
// takes. Without it every job use case is a JobsUnavailable refusal.
func (a *App) UseJobs(j *jobs.Service) { a.jobs = j }

// RunsJobs reports whether the App has a jobs subsystem.
func (a *App) RunsJobs() bool { return a.jobs != nil }

// JobsStorage is the jobs subsystem's data folder status (/readyz), the
// zero status without jobs.
func (a *App) JobsStorage() jobs.StorageStatus {
	if a.jobs == nil {
		return jobs.StorageStatus{}
	}
	return a.jobs.Storage()
}

// anonymousOwner starts the owner of an anonymous caller's jobs.
const anonymousOwner = "anonymous:"

// owner is o's caller as the owner of jobs: the principal key of a
// signed-in caller; for an anonymous caller, whose key holds its address,
// an HMAC of that key under Config.OwnerKey, so that no address is stored
// with a job.
func (a *App) owner(o Origin) string {
	key := o.Caller.Key
	if !strings.HasPrefix(key, "ip:") && !strings.HasPrefix(key, anonymousOwner) {
		return key
	}
	m := hmac.New(sha256.New, a.ownerKey)
	m.Write([]byte(key))
	return anonymousOwner + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// jobsOn returns the jobs subsystem, or the JobsUnavailable refusal.
func (a *App) jobsOn() (*jobs.Service, error) {
	if a.jobs == nil {
		return nil, refuse(JobsUnavailable, "This server does not run jobs.")
	}
	return a.jobs, nil
}

// GetJob is GET /jobs/:id: the caller's job as its document.
func (a *App) GetJob(ctx context.Context, o Origin, id string) (*contracts.Job, error) {
	js, err := a.jobsOn()
	if err != nil {
		return nil, err
	}
	job, err := js.Get(ctx, id, a.owner(o))
	if err != nil {
		return nil, jobRefusal(err)
	}
	return a.document(ctx, job)
}

// CancelJob is POST /jobs/:id/cancel: the caller's job cancelled (a final
// job stays as it is), as its document.
func (a *App) CancelJob(ctx context.Context, o Origin, id string) (*contracts.Job, error) {
	js, err := a.jobsOn()
	if err != nil {
		return nil, err
	}
	job, err := js.Cancel(ctx, id, a.owner(o))
	if err != nil {
		return nil, jobRefusal(err)
	}
	return a.document(ctx, job)
}

// JobEvent is an event of a job's stream: a state with the job's
// document, or a progress report.
type JobEvent struct {
	// Kind is "state" or "progress".
	Kind string
	// Version is the job's version the event belongs to.
	Version int64
	// Final says the state is final: no state follows.
	Final bool
	// Job is the document of a state event.
	Job *contracts.Job
	// Done, Total and Message are a progress report's.
	Done, Total int64
	Message     string
}

// The kinds of JobEvent.
const (
	EventState    = string(jobs.EventState)
	EventProgress = string(jobs.EventProgress)
)

// JobEvents is GET /jobs/:id/events: the caller's job's events, starting
// with its state now, until a final state or ctx's end, when the channel
// closes.
func (a *App) JobEvents(ctx context.Context, o Origin, id string) (<-chan JobEvent, error) {
	js, err := a.jobsOn()
	if err != nil {
		return nil, err
	}
	ch, err := js.Subscribe(ctx, id, a.owner(o))
	if err != nil {
		return nil, jobRefusal(err)
	}
	out := make(chan JobEvent)
	go func() {
		defer close(out)
		for ev := range ch {
			je := JobEvent{Kind: string(ev.Kind), Version: ev.Version, Final: ev.State.Final()}
			switch ev.Kind {
			case jobs.EventState:
				if ev.Job == nil {
					continue
				}
				d, err := a.document(ctx, ev.Job)
				if err != nil {
					return
				}
				je.Job = d
			case jobs.EventProgress:
				if p := ev.Progress; p != nil {
					je.Done, je.Total, je.Message = p.Done, p.Total, p.Message
				}
			}
			select {
			case out <- je:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// Download is a job's file opened for reading: close Content.
type Download = jobs.Download

// OpenJobFile is GET /jobs/:id/files/:name: the caller's file, or anyone's
// with a valid signed link (expires and sig set).
func (a *App) OpenJobFile(ctx context.Context, o Origin, id, name, expires, sig string, signed bool) (*Download, error) {
	js, err := a.jobsOn()
	if err != nil {
		return nil, err
	}
	var dl *jobs.Download
	if signed {
		dl, err = js.OpenSigned(ctx, id, name, expires, sig)
	} else {
		dl, err = js.OpenFile(ctx, id, name, a.owner(o))
	}
	if err != nil {
		return nil, jobRefusal(err)
	}
	return dl, nil
}

// signedURLTTL is the longest a signed URL is asked for; the jobs
// subsystem caps it at the file's own expiry.
const signedURLTTL = 365 * 24 * time.Hour

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func rfc3339p(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := rfc3339(*t)
	return &s
}

// cancelledError is the error of a cancelled job that carries none.
var cancelledError = toolerr.Raised("cancelled", true)

// document maps a job to its tools.job@1 document, for its owner. Its
// files are the job's result files that have an expiry (every output once
// the job finished), each with a signed download URL. A file past its
// expiry (not yet swept) is listed expired, with its owner route as its
// URL, which answers 410: only the files expire, the document stays
// readable until the job's own retention ends (issue 16, item 4).
func (a *App) document(ctx context.Context, job *jobs.Job) (*contracts.Job, error) {
	d := &contracts.Job{
		ID: job.ID, Type: job.Type, State: contracts.RunStatus(job.State), Input: job.Input, Result: job.Result, Error: job.Error,
		Files: []contracts.JobFile{}, Created: rfc3339(job.CreatedAt), Started: rfc3339p(job.StartedAt),
		Finished: rfc3339p(job.FinishedAt), Attempts: job.Attempts, References: []contracts.FileReference{},
	}
	for _, r := range job.References {
		d.References = append(d.References, contracts.FileReference{Name: r.Name, Job: r.Job, File: r.File, Media: r.Media})
	}
	if job.State != jobs.Succeeded {
		d.Result = nil
	}
	if job.State == jobs.Cancelled && d.Error == nil {
		d.Error = cancelledError
	}
	var input struct {
		Tool string `json:"tool"`
	}
	_ = json.Unmarshal(job.Input, &input) // a job's input is the JSON object it was submitted with
	if svc, ok := a.cfg.Snapshot().JobTool(job.Type, input.Tool); ok {
		d.Tool = svc.Code()
	}
	switch p := job.Progress; {
	case job.State == jobs.Succeeded:
		d.Progress = 100
	case p.Total > 0:
		d.Progress = min(100, max(0, p.Done*100/p.Total))
	}
	for _, f := range job.Files {
		if f.Role != jobs.Output || f.ExpiresAt == nil {
			continue
		}
		url, _, err := a.jobs.SignedURL(ctx, job.ID, f.Name, job.Owner, signedURLTTL)
		expired := errors.Is(err, jobs.ErrExpired)
		switch {
		case expired:
			url = contracts.JobLocation(job.ID) + "/files/" + f.Name
		case err != nil:
			return nil, jobRefusal(err)
		}
		d.Files = append(d.Files, contracts.JobFile{Name: f.Name, Type: f.MediaType, Bytes: f.SizeBytes, Owner: job.Owner,
			Expires: rfc3339(*f.ExpiresAt), URL: url, Expired: expired})
	}
	return d, nil
}

// jobRefusal is the one mapping of the jobs subsystem's errors (and of the
// store under it) to refusals: a *Refusal already in err's chain (a body's,
// from an upload) as it is, a known error by its code, anything else as
// it is — a failure of the server, not a refusal.
func jobRefusal(err error) error {
	if _, ok := AsRefusal(err); ok {
		return err
	}
	var fe *jobs.FileError
	switch {
	case errors.Is(err, jobs.ErrStorageFull):
		// Nothing of the request was kept; the jobs subsystem logged the
		// folder, which is the operator's business, not the caller's.
		return &Refusal{Code: StorageFull, RetryAfter: time.Second,
			Detail: "The server has no room to store the job now; nothing was kept. Retry later."}
	case errors.Is(err, store.ErrBusy):
		// The database was locked past the request's budget (another
		// process, say); the jobs subsystem changed nothing.
		return &Refusal{Code: StoreBusy, RetryAfter: time.Second,
			Detail: "The job store is busy; nothing was changed. Retry after the Retry-After."}
	case errors.As(err, &fe):
		switch {
		case errors.Is(fe.Err, jobs.ErrTooLarge):
			return refuse(PayloadTooLarge, fmt.Sprintf("The file %q is over the tool's limit of %d bytes.", fe.Name, fe.LimitBytes))
		case errors.Is(fe.Err, jobs.ErrFileType):
			return refuse(FileType, fmt.Sprintf("The file %q is %s, which the tool does not take.", fe.Name, fe.MediaType))
		case errors.Is(fe.Err, jobs.ErrReference), errors.Is(fe.Err, jobs.ErrExpired), errors.Is(fe.Err, jobs.ErrNoMediaStore):
			return refuse(FileNotFound, fmt.Sprintf("The file %q references nothing the caller may read.", fe.Name))
		}
		return refuse(InvalidRequest, fmt.Sprintf("The file %q cannot be taken.", fe.Name))
	case errors.Is(err, jobs.ErrNotFound):
		return refuse(JobNotFound, "No such job or file.")
	case errors.Is(err, jobs.ErrExpired):
		return refuse(JobExpired, "The file or the link has expired.")
	case errors.Is(err, jobs.ErrState):
		return refuse(JobState, "The job's state does not allow this.")
	case errors.Is(err, jobs.ErrSignature):
		return refuse(JobSignature, "The signed link is not valid.")
	case errors.Is(err, jobs.ErrUnknownType):
		return refuse(ToolNotFound, "No tool runs jobs of this type.")
	case errors.Is(err, jobs.ErrInvalid):
		return refuse(InvalidRequest, "The job submission is not valid.")
	case errors.Is(err, jobs.ErrClosed):
		return &Refusal{Code: ServiceUnavailable, RetryAfter: time.Second, Detail: "The server is stopping; retry later."}
	}
	return err
}

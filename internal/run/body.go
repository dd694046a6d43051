// A request's body as the use cases read it: lazily, when the use case
// says (a tool known from the route is found runnable and, for a job, its
// caller admitted before a byte is read), with upload forms bounded by
// the upload gate first.

package run

import (
	"context"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
)

// The wait of a job tool's run before it answers with the job running.
const (
	DefaultRunWait = 10 * time.Second
	MaxRunWait     = 60 * time.Second
)

// Body is a request's body, read by the use case when it decides. The
// routes implement it over their transport: a refusal of the body (not
// the route's document, over a bound, too slow) is a *Refusal with a
// body code (InvalidRequest, PayloadTooLarge, BodyTimeout, …).
type Body interface {
	// Upload reports whether the body is an upload form: the use case
	// takes a slot of the upload gate for it before a byte is read.
	Upload() bool
	// Read reads the body's document for a tool as spec describes it.
	Read(ctx context.Context, spec BodySpec) (*Request, error)
	// Uploads are the file parts after the document, each bounded by
	// spec; nil when the body has none (a JSON body).
	Uploads(spec BodySpec) iter.Seq2[Upload, error]
	// Done ends the reading of the body: what is left of it is
	// discarded within a grace period. It is safe to call more than once.
	Done()
	// Err is the body's own refusal once its reading failed (it stopped
	// arriving, a part broke its bound), nil otherwise: it is the answer
	// to whatever that failure caused, and the run keeps its cost — that
	// reading is the load the quota bounds.
	Err() error
}

// BodySpec is what the use case knows of a body's tool when it reads it.
type BodySpec struct {
	// Job says the tool runs jobs: the body may reference and upload
	// files for its file inputs. A sync tool's body names none.
	Job bool
	// Files are the tool's file inputs' names; MaxFileBytes bounds each
	// file part.
	Files        []string
	MaxFileBytes int64
}

// Request is a body's document as the use case acts on it.
type Request struct {
	// Type is a job submission's job type (POST /jobs).
	Type string
	// Input is the tool's (or the job's) input document.
	Input map[string]any
	// References are the files the request references instead of
	// uploading them.
	References []contracts.FileReference
	// Wait is how long a job tool's run waits for its job, at most
	// MaxRunWait; 0 with WaitSet false is DefaultRunWait.
	Wait    time.Duration
	WaitSet bool
}

// Upload is one uploaded file of a job: its input's name and its content,
// read once.
type Upload struct {
	Name    string
	Content io.Reader
}

// spec is the BodySpec of svc.
func spec(svc *registry.Service) BodySpec {
	p := svc.Platform()
	s := BodySpec{Job: p.Job != nil, MaxFileBytes: maxFileBytes(svc)}
	for _, f := range p.Files {
		s.Files = append(s.Files, f.Name)
	}
	return s
}

// readBody reads body for spec, taking a slot of the upload gate under
// class first for an upload form. The release (never nil, idempotent)
// ends the reading and returns the slot.
func (a *App) readBody(ctx context.Context, o Origin, class string, body Body, s BodySpec) (*Request, func(), error) {
	release := body.Done
	if body.Upload() {
		gate, err := a.gateUpload(o, class)
		if err != nil {
			return nil, func() {}, err
		}
		release = func() { body.Done(); gate() }
	}
	req, err := body.Read(ctx, s)
	if err != nil {
		release()
		return nil, func() {}, err
	}
	return req, release, nil
}

// uploadGate bounds the upload forms read at once, so that the memory
// callers can make the process hold for their forms is counted against
// their quota class and tier: at most the class's concurrency per caller
// (MaxPendingItemsPerPrincipal where the class sets none) and per tier,
// and 4 × MaxPendingItemsPerProcess in the process, each holding at most
// the per-request bound. It is enforced in every guard mode: it protects
// the process, it is not a quota being rolled out. The zero value is
// ready; it is safe for concurrent use.
type uploadGate struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire takes one slot under each key within its limit (a limit ≤ 0 is
// none), all or nothing. The release is idempotent.
func (g *uploadGate) acquire(keys []string, limits []int) (func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, k := range keys {
		if limits[i] > 0 && g.n[k] >= limits[i] {
			return func() {}, false
		}
	}
	if g.n == nil {
		g.n = map[string]int{}
	}
	for _, k := range keys {
		g.n[k]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			for _, k := range keys {
				if g.n[k]--; g.n[k] <= 0 {
					delete(g.n, k)
				}
			}
		})
	}, true
}

// gateUpload takes a slot of the upload gate for a form of o's caller in
// the quota class: a full gate is a Concurrency refusal, before a byte of
// the form is read.
func (a *App) gateUpload(o Origin, class string) (func(), error) {
	caller := o.Caller
	al, column := a.guard.Allowance(class, caller)
	perCaller := al.ConcurrentPerCaller
	if perCaller <= 0 {
		perCaller = a.cfg.Platform.MaxPendingItemsPerPrincipal
	}
	release, ok := a.uploads.acquire(
		[]string{"process", "tier\x00" + class + "\x00" + column, "caller\x00" + class + "\x00" + column + "\x00" + caller.Key},
		[]int{4 * a.cfg.Platform.MaxPendingItemsPerProcess, al.ConcurrentPerTier, perCaller})
	if !ok {
		if m := a.cfg.Metrics; m != nil {
			m.CountRefusal("upload_concurrency")
		}
		return nil, &Refusal{Code: Concurrency, RetryAfter: time.Second,
			Detail: "Too many uploads of this caller, or of its tier, are being read at once; retry after the Retry-After."}
	}
	return release, nil
}

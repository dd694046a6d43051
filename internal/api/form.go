// Bounded request bodies: multipart forms read in phases with byte limits
// and a minimum data rate, the per-class gate on forms read at once, and
// the tools routes' JSON body reader (docs/http.md, "Bounded requests").

package api

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/run"
)

// The bounds of the bodies the run, jobs and legacy routes read (decided
// in docs/http.md, "Bounded requests"). A multipart body is read in
// phases: its leading fields together, then each file part. Each phase has
// a byte limit and a deadline, and the connection's read deadline follows
// the data: it stays at the phase's start plus a grace period (the
// platform's ingress budget) plus the time the bytes received so far take
// at MinUploadBytesPerSecond, so that a body arriving at the minimum rate
// or faster is read whole and one that trickles is cut within the grace
// period (408). No phase outlives its limit at the minimum rate, and no
// body outlives the platform's request deadline.
const (
	// MinUploadBytesPerSecond is the slowest average rate at which a part
	// of a multipart body may arrive, after the grace period.
	MinUploadBytesPerSecond = 32 << 10
	// partSlackBytes is the room a phase has beyond its content for
	// boundaries, part headers and the multipart reader's read-ahead: a
	// part header larger than this is refused (413).
	partSlackBytes = 64 << 10
	// maxLegacyFields is the most text fields of a legacy upload form.
	maxLegacyFields = 32
	// deadlineStep is how far the read deadline moves before it is set
	// again.
	deadlineStep = 100 * time.Millisecond
)

// formBodyKey is where openForm leaves the request's *formBody.
const formBodyKey = "toolhost.form"

// formBody is the body of a multipart request as the API reads it,
// bounded in bytes and time per phase (see MinUploadBytesPerSecond). Its
// first failure — errBodyTooLarge or errBodyTimeout — is sticky. It is
// read by one goroutine, the handler's.
type formBody struct {
	body  io.ReadCloser
	rc    *http.ResponseController
	now   func() time.Time
	grace time.Duration
	// end is the whole body's deadline.
	end time.Time
	// The current phase: its start, deadline, byte limit and bytes read.
	start, phaseEnd time.Time
	limit, n        int64
	// set is the read deadline last set on the connection.
	set time.Time
	eof bool
	err error
	// total counts every byte read from the body.
	total int64
}

// newFormBody wraps the request's body of c.
func (s *Server) newFormBody(c *gin.Context) *formBody {
	grace := time.Duration(s.platform.IngressTimeoutMS) * time.Millisecond
	if grace <= 0 {
		grace = 2 * time.Second
	}
	b := &formBody{body: c.Request.Body, rc: http.NewResponseController(c.Writer), now: time.Now, grace: grace}
	b.end = b.now().Add(time.Duration(s.platform.RequestTimeoutMS) * time.Millisecond)
	if s.platform.RequestTimeoutMS <= 0 {
		b.end = b.now().Add(time.Minute)
	}
	return b
}

// phase starts a phase of at most limit bytes (its slack included): its
// deadline is the grace period plus limit at the minimum rate, and never
// past the body's.
func (b *formBody) phase(limit int64) {
	b.start, b.limit, b.n = b.now(), limit, 0
	b.phaseEnd = b.start.Add(b.grace + rateTime(limit))
	if b.end.Before(b.phaseEnd) {
		b.phaseEnd = b.end
	}
}

// rateTime is how long n bytes take at the minimum rate.
func rateTime(n int64) time.Duration {
	return time.Duration(n / MinUploadBytesPerSecond * int64(time.Second))
}

// Read reads from the body within the phase's bounds.
func (b *formBody) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.eof:
		// The server reads the connection in the background once the
		// body is consumed: its deadline is no longer ours to move.
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	}
	if room := b.limit - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	b.follow()
	n, err := b.body.Read(p)
	b.n += int64(n)
	b.total += int64(n)
	switch {
	case b.n > b.limit:
		b.err = &bodyLimitError{Limit: b.limit}
		return n, b.err
	case err == io.EOF:
		b.eof = true
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.err = fmt.Errorf("%w: %w", errBodyTimeout, err)
		return n, b.err
	}
	return n, err
}

// follow sets the connection's read deadline for the bytes read so far:
// the phase's start, the grace period and the bytes at the minimum rate,
// at most the phase's deadline. A writer that cannot set read deadlines
// is read under the server's own timeouts (best effort, as readBody).
func (b *formBody) follow() {
	d := b.start.Add(b.grace + rateTime(b.n))
	if b.phaseEnd.Before(d) {
		d = b.phaseEnd
	}
	if !b.set.IsZero() && d.Sub(b.set) < deadlineStep && !d.Before(b.set) {
		return
	}
	b.set = d
	_ = b.rc.SetReadDeadline(d)
}

// Close closes the body.
func (b *formBody) Close() error { return b.body.Close() }

// done ends the reading of the body by the handler: what is left of it is
// discarded by the server within the grace period from now, never longer.
func (b *formBody) done() {
	if b.eof || b.err != nil {
		return
	}
	b.set = b.now().Add(b.grace)
	_ = b.rc.SetReadDeadline(b.set)
}

// bodyLimitError is errBodyTooLarge for a phase of Limit bytes.
type bodyLimitError struct{ Limit int64 }

func (e *bodyLimitError) Error() string {
	return fmt.Sprintf("%v: a part of the body is over %d bytes", errBodyTooLarge, e.Limit)
}

func (e *bodyLimitError) Unwrap() error { return errBodyTooLarge }

// formRefused writes the refusal of a body whose reading failed in the
// formBody of c — 408 for a body that did not arrive in time, 413 for a
// part over its limit — and reports whether it did. It answers even when
// the request's context has ended: a read deadline ends it, and the
// client is still there to read the 408.
func (s *Server) formRefused(c *gin.Context) bool {
	v, _ := c.Get(formBodyKey)
	b, _ := v.(*formBody)
	if b == nil || b.err == nil {
		return false
	}
	var le *bodyLimitError
	switch {
	case errors.Is(b.err, errBodyTimeout):
		toolsProblem(c, contracts.ProblemBodyTimeout, fmt.Sprintf(
			"The body did not arrive in time: each part gets %d ms, then must keep arriving at %d bytes per second.",
			b.grace.Milliseconds(), MinUploadBytesPerSecond))
	case errors.As(b.err, &le):
		toolsProblem(c, contracts.ProblemPayloadTooLarge, fmt.Sprintf("A part of the body, with its headers, is over %d bytes.", le.Limit))
	default:
		return false
	}
	return true
}

// formLimits are the bounds of a multipart body's leading fields.
type formLimits struct {
	// names are the fields taken; nil takes every part that is not a
	// file, up to the first file.
	names []string
	// maxFields is the most fields.
	maxFields int
	// fieldBytes bounds each field, totalBytes all of them together.
	fieldBytes, totalBytes int64
}

// formGate bounds the multipart bodies the API reads at once, so that the
// memory callers can make it hold for their forms is counted against
// their quota class and tier: at most the class's concurrency per caller
// (MaxPendingItemsPerPrincipal where the class sets none) and per tier,
// and 4 × MaxPendingItemsPerProcess in the process, each holding at most
// the per-request bound. It is enforced in every guard mode: it protects
// the process, it is not a quota being rolled out. The zero value is
// ready; it is safe for concurrent use.
type formGate struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire takes one slot under each key within its limit (a limit ≤ 0 is
// none), all or nothing. The release is idempotent.
func (g *formGate) acquire(keys []string, limits []int) (func(), bool) {
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

// openForm starts reading the multipart body of c for a run of the quota
// class: it takes a slot of the form gate first (a full gate is 429 with
// Retry-After, before a byte of the body is read), then reads the leading
// fields within lim. The release (never nil, idempotent) returns the slot
// and bounds the server's discard of what is left of the body; call it
// once the body has been read. On a refusal it writes the problem.
func (s *Server) openForm(c *gin.Context, class string, lim formLimits) (*multipartBody, func(), bool) {
	caller := origin(c).Caller
	a, column := s.guard.Allowance(class, caller)
	perCaller := a.ConcurrentPerCaller
	if perCaller <= 0 {
		perCaller = s.platform.MaxPendingItemsPerPrincipal
	}
	gateRelease, ok := s.forms.acquire(
		[]string{"process", "tier\x00" + class + "\x00" + column, "caller\x00" + class + "\x00" + column + "\x00" + caller.Key},
		[]int{4 * s.platform.MaxPendingItemsPerProcess, a.ConcurrentPerTier, perCaller})
	if !ok {
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.CountRefusal("upload_concurrency")
		}
		s.toolsRefusal(c, &run.Refusal{Code: run.Concurrency, RetryAfter: time.Second,
			Detail: "Too many uploads of this caller, or of its tier, are being read at once; retry after the Retry-After."})
		return nil, func() {}, false
	}
	b := s.newFormBody(c)
	c.Request.Body = b
	c.Set(formBodyKey, b)
	release := func() {
		b.done()
		gateRelease()
	}
	mp, ok := s.readMultipartHead(c, b, lim)
	if !ok {
		release()
		return nil, func() {}, false
	}
	mp.done = release
	return mp, release, true
}

// readToolsBody is readBody in the tools routes' dialect: 413
// tools.run.payload_too_large past the platform's cap, 408
// tools.run.body_timeout when the body does not arrive within the ingress
// budget, 400 tools.run.invalid_request when it cannot be read.
func (s *Server) readToolsBody(c *gin.Context) ([]byte, bool) {
	if ingress := s.platform.IngressTimeoutMS; ingress > 0 {
		_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(time.Duration(ingress) * time.Millisecond))
	}
	limit := s.platform.MaxRequestBodyBytes
	if c.Request.ContentLength > limit {
		toolsProblem(c, contracts.ProblemPayloadTooLarge, tooLarge(limit))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		toolsProblem(c, contracts.ProblemPayloadTooLarge, tooLarge(limit))
		return nil, false
	case errors.Is(err, os.ErrDeadlineExceeded):
		toolsProblem(c, contracts.ProblemBodyTimeout, "The request body did not arrive within the ingress budget.")
		return nil, false
	case err != nil:
		toolsProblem(c, contracts.ProblemInvalidRequest, "The request body could not be read.")
		return nil, false
	}
	return body, true
}

// multipartBody is a multipart body whose leading fields have been read;
// its file parts follow, the first of them (if any) in next.
type multipartBody struct {
	reader *multipart.Reader
	body   *formBody
	fields map[string][]byte
	next   *multipart.Part
	// eof is set once the body's last part has been read: there are no
	// file parts to ask the reader for.
	eof bool
	// done ends the reading of the body (openForm's release).
	done func()
}

// readMultipartHead reads the leading fields of the multipart body b of c
// within lim — parts named in lim.names (without names, every part that
// is not a file), at most lim.maxFields of them, each at most
// lim.fieldBytes and all together at most lim.totalBytes — up to its
// first other part, which stays unread for uploads. The fields are read as
// one phase of b: their bytes, headers included, are bounded before they
// are buffered, and they must arrive at the minimum rate. On a refusal it
// writes the problem.
func (s *Server) readMultipartHead(c *gin.Context, b *formBody, lim formLimits) (*multipartBody, bool) {
	r, err := c.Request.MultipartReader()
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, "The multipart body is malformed.")
		return nil, false
	}
	mp := &multipartBody{reader: r, body: b, fields: map[string][]byte{}}
	b.phase(lim.totalBytes + partSlackBytes)
	var total int64
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			mp.eof = true
			return mp, true
		}
		if err != nil {
			s.multipartProblem(c, err)
			return nil, false
		}
		name := p.FormName()
		if (lim.names != nil && !slices.Contains(lim.names, name)) || p.FileName() != "" {
			mp.next = p
			return mp, true
		}
		if _, dup := mp.fields[name]; dup {
			toolsProblem(c, contracts.ProblemInvalidRequest, fmt.Sprintf("The part %q is repeated.", name))
			return nil, false
		}
		if len(mp.fields) >= lim.maxFields {
			toolsProblem(c, contracts.ProblemPayloadTooLarge, fmt.Sprintf("The body has more than %d fields before its files.", lim.maxFields))
			return nil, false
		}
		limit := min(lim.fieldBytes, lim.totalBytes-total)
		v, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil {
			s.multipartProblem(c, err)
			return nil, false
		}
		if int64(len(v)) > limit {
			if limit < lim.fieldBytes {
				toolsProblem(c, contracts.ProblemPayloadTooLarge, fmt.Sprintf("The fields are over %d bytes together.", lim.totalBytes))
			} else {
				toolsProblem(c, contracts.ProblemPayloadTooLarge, fmt.Sprintf("The field %q is over %d bytes.", name, lim.fieldBytes))
			}
			return nil, false
		}
		total += int64(len(v))
		mp.fields[name] = v
	}
}

// multipartProblem writes the refusal of a multipart body that could not
// be read: the body's own refusal (408, 413), else a malformed body.
func (s *Server) multipartProblem(c *gin.Context, err error) {
	if !s.formRefused(c) {
		s.jobsProblem(c, fmt.Errorf("%w: %w", errMultipart, err))
	}
}

// uploads returns the file parts as the jobs subsystem reads them, one
// after the other as they stream in, each a phase of the body of at most
// maxBytes (the largest of the tool's file inputs) and its slack; a part
// that names no file input of the tool ends the sequence with
// errUnexpectedPart.
func (b *multipartBody) uploads(names []string, maxBytes int64) iter.Seq2[jobs.Upload, error] {
	return func(yield func(jobs.Upload, error) bool) {
		p := b.next
		b.next = nil
		if p == nil && b.eof {
			return // the fields were the whole body
		}
		for {
			if p == nil {
				b.body.phase(maxBytes + partSlackBytes)
				var err error
				p, err = b.reader.NextPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					yield(jobs.Upload{}, fmt.Errorf("%w: %w", errMultipart, err))
					return
				}
			} else {
				// The first file part's header was read with the fields;
				// its content is a phase of its own.
				b.body.phase(maxBytes + partSlackBytes)
			}
			if !slices.Contains(names, p.FormName()) {
				yield(jobs.Upload{}, fmt.Errorf("%w: %q", errUnexpectedPart, p.FormName()))
				return
			}
			if !yield(jobs.Upload{Name: p.FormName(), Content: p}, nil) {
				return
			}
			p = nil
		}
	}
}

// Bounded request bodies: multipart forms read in phases with byte limits
// and a minimum data rate (docs/http.md, "Bounded requests"); the gate on
// forms read at once is the application layer's (run.Body).

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
	"time"

	"github.com/gin-gonic/gin"

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

var (
	// errBodyTimeout is returned by a formBody when its data stopped
	// arriving at the minimum rate, or its part's or its own deadline
	// passed.
	errBodyTimeout = errors.New("api: the request body did not arrive in time")
	// errBodyTooLarge is returned by a formBody when a phase of the body
	// is over its byte limit.
	errBodyTooLarge = errors.New("api: a part of the request body is over its limit")
)

// formBodyKey is where readMultipartHead leaves the request's *formBody.
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

// formRefusal is the refusal of a body whose reading failed in the
// formBody of c — BodyTimeout for a body that did not arrive in time,
// PayloadTooLarge for a part over its limit — and nil when it did not.
// It is the answer even when the request's context has ended: a read
// deadline ends it, and the client is still there to read the 408.
func (s *Server) formRefusal(c *gin.Context) *run.Refusal {
	v, _ := c.Get(formBodyKey)
	b, _ := v.(*formBody)
	if b == nil || b.err == nil {
		return nil
	}
	var le *bodyLimitError
	switch {
	case errors.Is(b.err, errBodyTimeout):
		return bodyRefusal(run.BodyTimeout, fmt.Sprintf(
			"The body did not arrive in time: each part gets %d ms, then must keep arriving at %d bytes per second.",
			b.grace.Milliseconds(), MinUploadBytesPerSecond))
	case errors.As(b.err, &le):
		return bodyRefusal(run.PayloadTooLarge, fmt.Sprintf("A part of the body, with its headers, is over %d bytes.", le.Limit))
	}
	return nil
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
}

// readMultipartHead reads the leading fields of the multipart body of c
// within lim — parts named in lim.names (without names, every part that
// is not a file), at most lim.maxFields of them, each at most
// lim.fieldBytes and all together at most lim.totalBytes — up to its
// first other part, which stays unread for uploads. The body is read
// through a formBody: the fields are one phase of it, their bytes,
// headers included, bounded before they are buffered, and they must
// arrive at the minimum rate. A refusal is a *run.Refusal.
func (s *Server) readMultipartHead(c *gin.Context, lim formLimits) (*multipartBody, error) {
	b := s.newFormBody(c)
	c.Request.Body = b
	c.Set(formBodyKey, b)
	r, err := c.Request.MultipartReader()
	if err != nil {
		return nil, bodyRefusal(run.InvalidRequest, "The multipart body is malformed.")
	}
	mp := &multipartBody{reader: r, body: b, fields: map[string][]byte{}}
	b.phase(lim.totalBytes + partSlackBytes)
	var total int64
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			mp.eof = true
			return mp, nil
		}
		if err != nil {
			return nil, s.multipartRefusal(c, err)
		}
		name := p.FormName()
		if (lim.names != nil && !slices.Contains(lim.names, name)) || p.FileName() != "" {
			mp.next = p
			return mp, nil
		}
		if _, dup := mp.fields[name]; dup {
			return nil, bodyRefusal(run.InvalidRequest, fmt.Sprintf("The part %q is repeated.", name))
		}
		if len(mp.fields) >= lim.maxFields {
			return nil, bodyRefusal(run.PayloadTooLarge, fmt.Sprintf("The body has more than %d fields before its files.", lim.maxFields))
		}
		limit := min(lim.fieldBytes, lim.totalBytes-total)
		v, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err != nil {
			return nil, s.multipartRefusal(c, err)
		}
		if int64(len(v)) > limit {
			if limit < lim.fieldBytes {
				return nil, bodyRefusal(run.PayloadTooLarge, fmt.Sprintf("The fields are over %d bytes together.", lim.totalBytes))
			}
			return nil, bodyRefusal(run.PayloadTooLarge, fmt.Sprintf("The field %q is over %d bytes.", name, lim.fieldBytes))
		}
		total += int64(len(v))
		mp.fields[name] = v
	}
}

// multipartRefusal is the refusal of a multipart body that could not be
// read: the body's own refusal (408, 413), else a malformed body.
func (s *Server) multipartRefusal(c *gin.Context, err error) *run.Refusal {
	if r := s.formRefusal(c); r != nil {
		return r
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return bodyRefusal(run.PayloadTooLarge, tooLarge(mbe.Limit))
	}
	return bodyRefusal(run.InvalidRequest, "The multipart body is malformed.")
}

// uploads returns the file parts as the jobs subsystem reads them, one
// after the other as they stream in, each a phase of the body of at most
// maxBytes (the largest of the tool's file inputs) and its slack; a part
// that names no file input of the tool ends the sequence with a FileType
// refusal, a malformed part with an InvalidRequest one.
func (b *multipartBody) uploads(names []string, maxBytes int64) iter.Seq2[run.Upload, error] {
	return func(yield func(run.Upload, error) bool) {
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
					yield(run.Upload{}, bodyRefusal(run.InvalidRequest, "The multipart body is malformed."))
					return
				}
			} else {
				// The first file part's header was read with the fields;
				// its content is a phase of its own.
				b.body.phase(maxBytes + partSlackBytes)
			}
			if !slices.Contains(names, p.FormName()) {
				yield(run.Upload{}, bodyRefusal(run.FileType, "A file part names no file input of the tool."))
				return
			}
			if !yield(run.Upload{Name: p.FormName(), Content: p}, nil) {
				return
			}
			p = nil
		}
	}
}

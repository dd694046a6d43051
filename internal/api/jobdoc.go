// The job documents the jobs routes answer with (tools.job@1, with signed
// file URLs), their server-sent event stream, and the download of a job's
// files.

package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// jobDoc is a tools.job@1 document.
type jobDoc struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Tool       string           `json:"tool,omitempty"`
	State      jobs.State       `json:"state"`
	Progress   int64            `json:"progress"`
	Input      json.RawMessage  `json:"input"`
	Result     json.RawMessage  `json:"result"`
	Error      *toolerr.Error   `json:"error"`
	Files      []jobFile        `json:"files"`
	Created    string           `json:"created"`
	Started    *string          `json:"started"`
	Finished   *string          `json:"finished"`
	Attempts   int              `json:"attempts"`
	References []jobs.Reference `json:"references"`
	files      []contracts.File
}

// jobFile is a file of a job document.
type jobFile struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Bytes   int64  `json:"bytes"`
	Owner   string `json:"owner"`
	Expires string `json:"expires"`
	URL     string `json:"url"`
	Expired bool   `json:"expired,omitempty"`
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
func (s *Server) document(ctx context.Context, job *jobs.Job) (*jobDoc, error) {
	d := &jobDoc{
		ID: job.ID, Type: job.Type, State: job.State, Input: job.Input, Result: job.Result, Error: job.Error,
		Files: []jobFile{}, Created: rfc3339(job.CreatedAt), Started: rfc3339p(job.StartedAt),
		Finished: rfc3339p(job.FinishedAt), Attempts: job.Attempts, References: job.References,
	}
	if d.References == nil {
		d.References = []jobs.Reference{}
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
	_ = json.Unmarshal(job.Input, &input)
	if svc, ok := s.cfg.Run.Snapshot().JobTool(job.Type, input.Tool); ok {
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
		url, _, err := s.cfg.Jobs.SignedURL(ctx, job.ID, f.Name, job.Owner, signedURLTTL)
		expired := errors.Is(err, jobs.ErrExpired)
		switch {
		case expired:
			url = contracts.JobLocation(job.ID) + "/files/" + f.Name
		case err != nil:
			return nil, err
		}
		bytes := f.SizeBytes
		d.Files = append(d.Files, jobFile{Name: f.Name, Type: f.MediaType, Bytes: bytes, Owner: job.Owner,
			Expires: rfc3339(*f.ExpiresAt), URL: url, Expired: expired})
		d.files = append(d.files, contracts.File{Name: f.Name, URL: url, Owner: job.Owner, Expires: rfc3339(*f.ExpiresAt),
			Type: f.MediaType, Bytes: &bytes, Expired: expired})
	}
	return d, nil
}

func (s *Server) writeJob(c *gin.Context, status int, job *jobs.Job) {
	d, err := s.document(c.Request.Context(), job)
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	writeJSON(c, status, "application/json", d)
}

// progressEvent is the data of an SSE progress event.
type progressEvent struct {
	Progress int64  `json:"progress"`
	Done     int64  `json:"done"`
	Total    int64  `json:"total"`
	Message  string `json:"message,omitempty"`
}

// DefaultEventsHeartbeat is how often a job's event stream sends a
// heartbeat comment when nothing else was sent (Config.EventsHeartbeat).
const DefaultEventsHeartbeat = 15 * time.Second

// eventsRetryMS is the reconnection delay the event stream asks
// EventSource clients for (its "retry:" field).
const eventsRetryMS = 3000

// jobEvents is GET /jobs/:id/events: server-sent events, "state" with the
// tools.job@1 document and "progress" with the percentage, ending after a
// final state (or when the server drains).
//
// Each event has an id: "<version>" for a state event (the job's version),
// "<version>.<n>" for a progress report of that version. A client that
// reconnects with Last-Event-ID is not sent again the states it has: the
// stream resumes with what is newer (the current progress, later states);
// when the job is final and its final state is the one the client has, the
// answer is 204, which tells an EventSource to stop reconnecting. The stream
// starts with "retry:", sends a heartbeat comment after each heartbeat
// interval without an event, and moves its write deadline forward at every
// write (http.ResponseController), so it outlives the server's write
// timeout for as long as the job runs and the client reads.
func (s *Server) jobEvents(c *gin.Context) {
	ctx := c.Request.Context()
	seen, resumed := lastEventVersion(c.GetHeader("Last-Event-ID"))
	ch, err := s.cfg.Jobs.Subscribe(ctx, c.Param("id"), s.owner(c))
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	// The first event is the job as it is now: a resumed stream whose
	// client has its final state has nothing to send.
	var first jobs.Event
	var open bool
	select {
	case first, open = <-ch:
	case <-s.drained:
	}
	if !open {
		return
	}
	if resumed && first.Version <= seen && first.State.Final() {
		c.Status(http.StatusNoContent)
		return
	}
	heartbeat := s.cfg.EventsHeartbeat
	if heartbeat <= 0 {
		heartbeat = DefaultEventsHeartbeat
	}
	w := c.Writer
	rc := http.NewResponseController(w)
	write := func(format string, args ...any) bool {
		// Each write may take up to two heartbeats: a client that stops
		// reading is let go then, one that reads is kept however long.
		_ = rc.SetWriteDeadline(time.Now().Add(2*heartbeat + time.Second))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !write("retry: %d\n\n", eventsRetryMS) {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	var progressN int64
	ev, ok := first, true
	for {
		if !ok {
			return
		}
		var data any
		var id string
		switch ev.Kind {
		case jobs.EventState:
			if resumed && ev.Version <= seen {
				break // the client has it
			}
			d, err := s.document(ctx, ev.Job)
			if err != nil {
				return
			}
			data, id = d, strconv.FormatInt(ev.Version, 10)
		case jobs.EventProgress:
			p := progressEvent{}
			if ev.Progress != nil {
				p = progressEvent{Done: ev.Progress.Done, Total: ev.Progress.Total, Message: ev.Progress.Message}
				if p.Total > 0 {
					p.Progress = min(100, max(0, p.Done*100/p.Total))
				}
			}
			progressN++
			data, id = p, strconv.FormatInt(ev.Version, 10)+"."+strconv.FormatInt(progressN, 10)
		}
		if data != nil {
			b, err := json.Marshal(data)
			if err != nil {
				return
			}
			if !write("id: %s\nevent: %s\ndata: %s\n\n", id, ev.Kind, b) {
				return
			}
			tick.Reset(heartbeat)
		}
	wait:
		for {
			select {
			case ev, ok = <-ch:
				break wait
			case <-tick.C:
				if !write(": heartbeat\n\n") {
					return
				}
			case <-s.drained:
				return
			}
		}
	}
}

// lastEventVersion reads a Last-Event-ID of the job event stream: the job
// version the client has seen, from "<version>" or "<version>.<n>".
// Anything else is no resumption.
func lastEventVersion(h string) (int64, bool) {
	v, _, _ := strings.Cut(strings.TrimSpace(h), ".")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// jobFile is GET /jobs/:id/files/:name: to the owner, or to anyone with a
// valid signed URL (expires and sig in the query).
func (s *Server) jobFile(c *gin.Context) {
	ctx := c.Request.Context()
	id, name := c.Param("id"), c.Param("name")
	q := c.Request.URL.Query()
	var dl *jobs.Download
	var err error
	if q.Has("sig") || q.Has("expires") {
		dl, err = s.cfg.Jobs.OpenSigned(ctx, id, name, q.Get("expires"), q.Get("sig"))
	} else {
		dl, err = s.cfg.Jobs.OpenFile(ctx, id, name, s.owner(c))
	}
	if err != nil {
		s.jobsProblem(c, err)
		return
	}
	defer dl.Content.Close()
	h := c.Writer.Header()
	h.Set("Content-Type", dl.File.MediaType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", dl.File.Name))
	http.ServeContent(c.Writer, c.Request, dl.File.Name, dl.File.CreatedAt, dl.Content)
}

// A job's server-sent event stream and the download of its files; the
// documents are the application layer's (tools.job@1, with signed file
// URLs).

package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/run"
)

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
	ch, err := s.cfg.Run.JobEvents(ctx, origin(c), c.Param("id"))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	// The first event is the job as it is now: a resumed stream whose
	// client has its final state has nothing to send.
	var first run.JobEvent
	var open bool
	select {
	case first, open = <-ch:
	case <-s.drained:
	}
	if !open {
		return
	}
	if resumed && first.Version <= seen && first.Final {
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
		case run.EventState:
			if resumed && ev.Version <= seen {
				break // the client has it
			}
			data, id = ev.Job, strconv.FormatInt(ev.Version, 10)
		case run.EventProgress:
			p := progressEvent{Done: ev.Done, Total: ev.Total, Message: ev.Message}
			if p.Total > 0 {
				p.Progress = min(100, max(0, p.Done*100/p.Total))
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
	signed := q.Has("sig") || q.Has("expires")
	dl, err := s.cfg.Run.OpenJobFile(ctx, origin(c), id, name, q.Get("expires"), q.Get("sig"), signed)
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	defer dl.Content.Close() //nolint:errcheck // a read-only file, served: nothing is lost on its close
	h := c.Writer.Header()
	h.Set("Content-Type", dl.File.MediaType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", dl.File.Name))
	http.ServeContent(c.Writer, c.Request, dl.File.Name, dl.File.CreatedAt, dl.Content)
}

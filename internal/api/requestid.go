package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/run"
)

// HTTP hygiene on every answer of the Handler, gin's routes and its 404s
// and 405s alike (docs/http.md, "Request ids, HEAD and 405"):
//
//   - every request gets a request id, echoed in X-Request-Id, carried in
//     problem documents as instance (InstancePrefix + the id) and in the
//     access log and abuse rows; a client's X-Request-Id is taken only
//     from a trusted proxy and only when well formed (ValidRequestID);
//   - HEAD is served wherever GET is, by the GET route with its body
//     discarded: same status and headers (RFC 9110 §9.3.2);
//   - a wrong method on a known route is 405 with Allow.

// RequestIDHeader is the header of the request id, read from a trusted
// proxy and set on every answer.
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDBytes bounds a request id taken from a proxy.
const MaxRequestIDBytes = 128

// InstancePrefix begins the instance member of every problem document,
// before the request id: a tag URI (RFC 4151) rather than a relative
// reference, which would resolve against the request's URL, or an
// unregistered URN namespace.
const InstancePrefix = "tag:toolhost.dev,2026:request:"

// requestStateKey is the request context key of the request's state.
type requestStateKey struct{}

// requestState is what the Handler and the middlewares know of one
// request, in one value of its context (one allocation, where a value per
// fact and gin's Keys map cost several): its id, whether it is a HEAD
// served by its GET route, and the origin the middlewares resolved. Only
// the request's own goroutine uses it.
type requestState struct {
	id     string
	head   bool
	origin run.Origin
}

// stateOf returns the state of a request that came through the Handler,
// nil for any other.
func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// stateOfRequest is stateOf c's request; nil for a context without one.
func stateOfRequest(c *gin.Context) *requestState {
	if c.Request == nil {
		return nil
	}
	return stateOf(c.Request.Context())
}

// RequestID returns the request id of c's request: the one a trusted
// proxy sent, or the one the Handler generated. It is "" only for a
// context that did not come through the Handler.
func RequestID(c *gin.Context) string {
	if st := stateOfRequest(c); st != nil {
		return st.id
	}
	return ""
}

// instance is the problem documents' instance of a request id; "" when
// there is none.
func instance(id string) string {
	if id == "" {
		return ""
	}
	return InstancePrefix + id
}

// ValidRequestID reports whether id may be taken from a proxy: 1 to
// MaxRequestIDBytes bytes of ASCII letters, digits and "-._~+/=:" — what a
// UUID, a hex or base32/64 id or a W3C trace id is written with, and
// nothing that needs escaping in a header, a log line or a URI.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case strings.IndexByte("-._~+/=:", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// idEncoding writes generated ids: lower-case base32 without padding.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newRequestID is 16 random bytes, 26 characters of lower-case base32.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return idEncoding.EncodeToString(b[:])
}

// requestIDFor is the id of r: its X-Request-Id when the peer is a
// trusted proxy of the guard and the header is one well-formed value,
// else a new one. Only the direct peer counts: a proxy's own client
// cannot choose the id by sending the header through it, unless the proxy
// passes it on, which is the proxy's decision.
func (s *Server) requestIDFor(r *http.Request) string {
	if vs := r.Header.Values(RequestIDHeader); len(vs) == 1 && ValidRequestID(vs[0]) {
		if s.trusted(r.RemoteAddr) {
			return vs[0]
		}
	}
	return newRequestID()
}

// serveHTTP is the Handler: it gives the request its id, echoes it, and
// serves HEAD through the GET routes.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	st := &requestState{id: s.requestIDFor(r)}
	w.Header().Set(RequestIDHeader, st.id)
	if s.cors(w, r) {
		return // a preflight, answered
	}
	ctx := context.WithValue(r.Context(), requestStateKey{}, st)
	if r.Method != http.MethodHead {
		s.engine.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	// HEAD is the GET route's answer without its body. The request the
	// routes see says GET (the HEAD mark is in its state, for the access
	// log); net/http still holds the HEAD request and sends no body.
	st.head = true
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hw := &headWriter{w: w, cancel: cancel}
	get := r.WithContext(ctx)
	get.Method = http.MethodGet
	s.engine.ServeHTTP(hw, get)
	hw.finish()
}

// method is the method the client sent: HEAD for a HEAD request served by
// its GET route.
func method(c *gin.Context) string {
	if st := stateOfRequest(c); st != nil && st.head {
		return http.MethodHead
	}
	return c.Request.Method
}

// headWriter answers a HEAD request with what its GET route wrote, less
// the body. The status is held until the route ends, so that the answer
// carries the Content-Length of the body it discarded, as the GET answer
// would; a route that sets Content-Length itself (a file) has its headers
// sent at its first write, which fails so that the copy of the file stops;
// a route that flushes (an event stream) has its headers sent then, and its
// context ended: a stream's header is the whole HEAD answer.
type headWriter struct {
	w         http.ResponseWriter
	cancel    context.CancelFunc
	status    int
	n         int
	committed bool
}

func (h *headWriter) Header() http.Header { return h.w.Header() }

func (h *headWriter) WriteHeader(code int) {
	if h.status == 0 && !h.committed {
		h.status = code
	}
}

func (h *headWriter) Write(p []byte) (int, error) {
	if h.w.Header().Get("Content-Length") != "" {
		h.commit()
		return 0, http.ErrBodyNotAllowed
	}
	h.n += len(p)
	return len(p), nil
}

// Flush sends the headers and ends the route's context.
func (h *headWriter) Flush() {
	h.commit()
	if f, ok := h.w.(http.Flusher); ok {
		f.Flush()
	}
	h.cancel()
}

// Unwrap is for http.ResponseController (read deadlines of bounded
// bodies).
func (h *headWriter) Unwrap() http.ResponseWriter { return h.w }

func (h *headWriter) commit() {
	if h.committed {
		return
	}
	h.committed = true
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.w.WriteHeader(h.status)
}

// finish sends the headers of a route that neither flushed nor set its
// Content-Length, with the length of the body it wrote.
func (h *headWriter) finish() {
	if h.committed {
		return
	}
	if h.status == 0 {
		h.status = http.StatusOK
	}
	if bodyAllowed(h.status) && h.w.Header().Get("Content-Length") == "" && h.w.Header().Get("Transfer-Encoding") == "" {
		h.w.Header().Set("Content-Length", strconv.Itoa(h.n))
	}
	h.commit()
}

// bodyAllowed reports whether an answer of status has a body (RFC 9110
// §6.4.1).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// methodNotAllowed answers a wrong method on a known route: 405 with the
// route's methods in Allow, which gin has set from its trees, with HEAD
// beside GET (served by serveHTTP, so absent from the trees).
func methodNotAllowed(c *gin.Context) {
	h := c.Writer.Header()
	var allow []string
	for _, v := range h.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" && !slices.Contains(allow, m) {
				allow = append(allow, m)
			}
		}
	}
	if slices.Contains(allow, http.MethodGet) && !slices.Contains(allow, http.MethodHead) {
		allow = append(allow, http.MethodHead)
	}
	slices.Sort(allow)
	h.Set("Allow", strings.Join(allow, ", "))
	methodProblem(c)
}

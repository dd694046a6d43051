package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/run"
)

// Callers are resolved once per request by the application layer
// (run.App.Resolve), from what the request presents; the routes read the
// resulting origin with origin. The seed-000 routes need a bearer token of
// an active account (authenticate); the tools, jobs and legacy routes take
// every tier (resolveCaller).

// originKey is where the middlewares leave the request's run.Origin for a
// request that did not come through the Handler (a test's engine); one
// that did keeps it in its requestState.
const originKey = "toolhost.origin"

// origin returns the request's resolved origin; the anonymous zero Origin
// when no middleware resolved it.
func origin(c *gin.Context) run.Origin {
	if st := stateOfRequest(c); st != nil {
		return st.origin
	}
	v, _ := c.Get(originKey)
	o, _ := v.(run.Origin)
	return o
}

// setOrigin keeps the request's resolved origin for origin.
func setOrigin(c *gin.Context, o run.Origin) {
	if st := stateOfRequest(c); st != nil {
		st.origin = o
		return
	}
	c.Set(originKey, o)
}

// resolveCaller resolves the caller of the tools, jobs and legacy routes:
// a bearer token or the token cookie (user or app), the session cookie
// (session), or nothing (anonymous, keyed by the client address behind
// the trusted proxies only). Credentials that do not resolve are refused
// with 401, never downgraded to anonymous.
func (s *Server) resolveCaller(c *gin.Context) {
	o, err := s.cfg.Run.Resolve(c.Request.Context(), presented(c.Request), RequestID(c))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	if !s.checkCSRF(c, o.Caller.SignedIn, false) {
		return
	}
	setOrigin(c, o)
	c.Next()
}

// authenticate is the active-account boundary of the seed-000 routes: a
// bearer token of an enabled account, or the session cookie of a browser
// signed in as one (docs/hub-auth.md; its state-changing requests pass the
// CSRF check), or 401. The token cookie and an anonymous session are not
// accounts' credentials here.
func (s *Server) authenticate(c *gin.Context) {
	h := c.GetHeader("Authorization")
	_, bearer := run.Bearer(h)
	if !bearer && (h != "" || s.sessionValue(c.Request) == "") {
		unauthorized(c, h != "")
		return
	}
	p := presented(c.Request)
	if !bearer {
		// Only the session cookie: not the token cookie, which Resolve
		// would try first.
		session := s.sessionCookie
		cookie := p.Cookie
		p.Cookie = func(name string) string {
			if name != session {
				return ""
			}
			return cookie(name)
		}
	}
	o, err := s.cfg.Run.Resolve(c.Request.Context(), p, RequestID(c))
	if err != nil {
		s.seedRefusal(c, err)
		return
	}
	if o.Anonymous() || (!bearer && !o.Caller.SignedIn) {
		unauthorized(c, false)
		return
	}
	if !s.checkCSRF(c, o.Caller.SignedIn, true) {
		return
	}
	setOrigin(c, o)
	c.Next()
}

// unauthorized refuses a seed-000 request without an account's token;
// invalid says that it presented a malformed one.
func unauthorized(c *gin.Context, invalid bool) {
	challenge(c, invalid)
	problem(c, "unauthorized", "A valid bearer token of an active account is required.")
}

// presented is what r presents to the guard.
func presented(r *http.Request) run.Presented {
	return run.Presented{Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For"),
		RealIP: r.Header.Get("X-Real-IP"), Authorization: r.Header.Get("Authorization"),
		Cookie: func(name string) string {
			ck, err := r.Cookie(name)
			if err != nil {
				return ""
			}
			return ck.Value
		}}
}

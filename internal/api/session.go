package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/guard"
)

// browserSession issues a session to an anonymous browser on its first job
// submission (ADR-027: "session: the browser's ov_tools_jobs cookie";
// docs/guard.md, "Sessions"): the request is a browser's when it carries
// Sec-Fetch-Site: same-origin, which browsers set on their own requests
// and pages cannot change. The cookie is HttpOnly, SameSite=Strict, Path=/,
// Secure when the request came over TLS (directly, or through a trusted
// proxy saying X-Forwarded-Proto: https), and expires with the session.
// The request then runs as that session. A caller that is not anonymous,
// not a browser, or whose address has had its sessions for now, stays as
// it is.
func (s *Server) browserSession(c *gin.Context) {
	o := origin(c)
	if o.Caller.Tier != guard.Anonymous || c.GetHeader("Sec-Fetch-Site") != "same-origin" {
		return
	}
	value, expires, no, err := s.cfg.Run.IssueSession(c.Request.Context(), presented(c.Request), o)
	if err != nil {
		return
	}
	secure := c.Request.TLS != nil ||
		(s.guard.TrustedPeer(c.Request.RemoteAddr) && c.GetHeader("X-Forwarded-Proto") == "https")
	http.SetCookie(c.Writer, &http.Cookie{
		Name: s.guard.SessionCookie(), Value: value, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode,
	})
	setOrigin(c, no)
}

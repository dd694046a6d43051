package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/run"
)

// browser is the request's browser for a session issued on its first job
// submission (ADR-027: "session: the browser's ov_tools_jobs cookie";
// docs/guard.md, "Sessions"): the request is a browser's when it carries
// Sec-Fetch-Site: same-origin, which browsers set on their own requests
// and pages cannot change; nil otherwise. A session issued to it (the
// application layer decides: an anonymous caller whose address has not
// had its sessions for now) is set as a cookie, HttpOnly, SameSite=Strict,
// Path=/, Secure when the request came over TLS (directly, or through a
// trusted proxy saying X-Forwarded-Proto: https), expiring with the
// session; the request then runs as that session.
func (s *Server) browser(c *gin.Context) *run.Browser {
	if c.GetHeader("Sec-Fetch-Site") != "same-origin" {
		return nil
	}
	return &run.Browser{Presented: presented(c.Request), Issued: func(value string, expires time.Time) {
		http.SetCookie(c.Writer, &http.Cookie{
			Name: s.sessionCookie, Value: value, Path: "/", Expires: expires,
			HttpOnly: true, Secure: s.secure(c.Request), SameSite: http.SameSiteStrictMode,
		})
	}}
}

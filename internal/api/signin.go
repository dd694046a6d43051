package api

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
)

// Browser sign-in (issue 17, docs/hub-auth.md): POST, GET and DELETE
// /api/v1/auth/session sign a browser in with a user's token, say who it
// is, and sign it out. The signed-in session rides in the ADR-027 session
// cookie (guard.SessionCookie), and every route that takes the user's
// bearer token takes it; its state-changing requests pass checkCSRF.

// CSRFCookie is the double-submit cookie: readable by the app's scripts
// (not HttpOnly), echoed in CSRFHeader on every state-changing request.
const CSRFCookie = "toolhost_csrf"

// CSRFHeader is the request header that echoes CSRFCookie.
const CSRFHeader = "X-CSRF-Token"

// ProblemCSRF is the code of a refused CSRF check, in both dialects (403).
const ProblemCSRF = "auth.csrf"

// maxSignInBytes bounds the sign-in body: a token is 46 bytes.
const maxSignInBytes = 4 << 10

// signInAnswer is what the session routes answer.
type signInAnswer struct {
	Tier      string `json:"tier"`
	User      string `json:"user,omitempty"`
	Expires   string `json:"expires"`
	CSRFToken string `json:"csrf_token,omitempty"`
}

func (s *Server) registerSignIn() {
	g := s.engine.Group(Prefix + "/auth")
	g.POST("/session", s.signIn)
	g.GET("/session", s.whoAmI)
	g.DELETE("/session", s.signOut)
}

// signIn is POST /api/v1/auth/session: {"token": "th_…"} → the session
// and CSRF cookies and who signed in.
func (s *Server) signIn(c *gin.Context) {
	if crossSite(c.Request) {
		toolsProblem(c, ProblemCSRF, "A sign-in from another site is refused.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxSignInBytes))
	var req struct {
		Token *string `json:"token"`
	}
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&req)
		if err == nil && (req.Token == nil || dec.More()) {
			err = errors.New("no token")
		}
	}
	if err != nil {
		toolsProblem(c, contracts.ProblemInvalidRequest, `The body must be the JSON object {"token": "<a user token>"}.`)
		return
	}
	value, si, err := s.cfg.Run.SignIn(c.Request.Context(), presented(c.Request), *req.Token, RequestID(c))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	csrf := csrfToken(value)
	s.setSessionCookies(c, value, csrf, si.Expires)
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusOK, "application/json", answerOf(si, csrf))
}

// whoAmI is GET /api/v1/auth/session: the session cookie's caller, or
// 401.
func (s *Server) whoAmI(c *gin.Context) {
	si, err := s.cfg.Run.Session(c.Request.Context(), s.sessionValue(c.Request))
	if err != nil {
		s.toolsRefusal(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusOK, "application/json", answerOf(si, ""))
}

// signOut is DELETE /api/v1/auth/session: the session is deleted and both
// cookies cleared, 204 also when there was none. A signed-in session's
// sign-out passes the CSRF check, so that another site cannot sign a
// browser out.
func (s *Server) signOut(c *gin.Context) {
	if err := s.cfg.Run.SignOut(c.Request.Context(), s.sessionValue(c.Request), s.csrfPasses(c)); err != nil {
		if r, ok := run.AsRefusal(err); ok && r.Code == run.CSRFFailed {
			toolsProblem(c, ProblemCSRF, csrfDetail) // the detail names this server's cookie and header
			return
		}
		s.toolsRefusal(c, err)
		return
	}
	s.setSessionCookies(c, "", "", time.Time{})
	c.Status(http.StatusNoContent)
}

func answerOf(si run.SignedIn, csrf string) signInAnswer {
	return signInAnswer{Tier: si.Tier.String(), User: si.User,
		Expires: si.Expires.UTC().Format("2006-01-02T15:04:05.000Z"), CSRFToken: csrf}
}

// setSessionCookies sets the session cookie (HttpOnly) and the CSRF
// cookie (readable by scripts) until expires; an empty value clears both.
func (s *Server) setSessionCookies(c *gin.Context, value, csrf string, expires time.Time) {
	secure := s.secure(c.Request)
	for _, ck := range []*http.Cookie{
		{Name: s.sessionCookie, Value: value, HttpOnly: true},
		{Name: CSRFCookie, Value: csrf},
	} {
		ck.Path, ck.Secure, ck.SameSite = "/", secure, http.SameSiteStrictMode
		if value == "" {
			ck.MaxAge = -1 // Max-Age=0: delete it now
		} else {
			ck.Expires = expires
		}
		http.SetCookie(c.Writer, ck)
	}
}

// secure reports whether r came over TLS, directly or through a trusted
// proxy saying X-Forwarded-Proto: https.
func (s *Server) secure(r *http.Request) bool {
	return r.TLS != nil || (s.trusted(r.RemoteAddr) && r.Header.Get("X-Forwarded-Proto") == "https")
}

// sessionValue is the session cookie of r; "" when it has none.
func (s *Server) sessionValue(r *http.Request) string {
	ck, err := r.Cookie(s.sessionCookie)
	if err != nil {
		return ""
	}
	return ck.Value
}

const csrfDetail = "A state-changing request with the session cookie needs the same origin and the " +
	CSRFHeader + " header equal to the " + CSRFCookie + " cookie (docs/hub-auth.md)."

// checkCSRF refuses, with 403 auth.csrf in the route's dialect (seed says
// which), a state-changing request of a signed-in session that fails the
// CSRF check, and reports whether the request may go on. Requests with a
// bearer token, of other callers, and safe methods pass.
func (s *Server) checkCSRF(c *gin.Context, signedIn bool, seed bool) bool {
	if !signedIn || safeMethod(c.Request.Method) || s.csrfPasses(c) {
		return true
	}
	if seed {
		problem(c, ProblemCSRF, csrfDetail)
	} else {
		toolsProblem(c, ProblemCSRF, csrfDetail)
	}
	return false
}

// csrfPasses reports whether the request is same-origin (Sec-Fetch-Site,
// or else Origin against Host) and its CSRF header, its CSRF cookie and
// the token derived from its session cookie are equal.
func (s *Server) csrfPasses(c *gin.Context) bool {
	r := c.Request
	switch site := r.Header.Get("Sec-Fetch-Site"); {
	case site == "same-origin":
	case site != "":
		return false
	default:
		o := r.Header.Get("Origin")
		u, err := url.Parse(o)
		if o == "" || err != nil || u.Host == "" || u.Host != r.Host {
			return false
		}
	}
	header := r.Header.Get(CSRFHeader)
	ck, err := r.Cookie(CSRFCookie)
	value := s.sessionValue(r)
	if err != nil || header == "" || value == "" {
		return false
	}
	want := csrfToken(value)
	return subtle.ConstantTimeCompare([]byte(header), []byte(want)) == 1 &&
		subtle.ConstantTimeCompare([]byte(ck.Value), []byte(want)) == 1
}

// crossSite reports whether a browser says r comes from another site:
// Sec-Fetch-Site other than same-origin or none (typed or bookmarked), or
// an Origin whose host is not r's Host. A request with neither header is
// not a browser's and is not cross-site.
func crossSite(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site != "same-origin" && site != "none"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err != nil || u.Host != r.Host
	}
	return false
}

// safeMethod reports whether method changes nothing (RFC 9110 §9.2.1).
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// csrfToken is the CSRF token of a session value: HMAC-SHA256 keyed with
// the value, in unpadded base64url. Only the holder of the session
// value can compute it, and it tells nothing about the value; so a CSRF
// cookie planted by another site matches no session it did not come from.
func csrfToken(session string) string {
	m := hmac.New(sha256.New, []byte(session))
	m.Write([]byte("toolhost csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

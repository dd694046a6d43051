package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The legacy routes of the old per-satellite APIs (ADR-027, "Legacy
// endpoints get deprecation headers"): /api/process (and /direct, /multi,
// /info), /api/net/* and /api/dev/* keep working through the descriptors'
// run.legacy mapping, and every answer says they are deprecated.

// LegacySunset is when the legacy routes may go.
const LegacySunset = "Thu, 31 Dec 2026 23:59:59 GMT"

// LegacyDeprecated is when ADR-027 deprecated the legacy routes (it was
// accepted on 2026-09-23), the date of RFC 9745's form of the Deprecation
// field.
var LegacyDeprecated = time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)

// ParseDeprecation returns the Deprecation field value a setting names:
// "true" (ADR-027's value, the default), "rfc9745" (RFC 9745's
// "@<unix seconds>" of LegacyDeprecated), "@<unix seconds>", or a date
// (2006-01-02) or RFC 3339 time, written in RFC 9745's form. Anything else
// is an error naming the forms.
func ParseDeprecation(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "true":
		return "true", nil
	case "rfc9745":
		return "@" + strconv.FormatInt(LegacyDeprecated.Unix(), 10), nil
	}
	if n, ok := strings.CutPrefix(s, "@"); ok {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil && v >= 0 {
			return "@" + strconv.FormatInt(v, 10), nil
		}
	} else if t, err := time.Parse(time.DateOnly, s); err == nil {
		return "@" + strconv.FormatInt(t.Unix(), 10), nil
	} else if t, err := time.Parse(time.RFC3339, s); err == nil {
		return "@" + strconv.FormatInt(t.Unix(), 10), nil
	}
	return "", fmt.Errorf("the Deprecation value %q is none of true, rfc9745, @<unix seconds>, a date (2006-01-02) or an RFC 3339 time", s)
}

// legacyPrefixes are the legacy API roots.
var legacyPrefixes = []string{"/api/process", "/api/net", "/api/dev"}

func (s *Server) registerLegacy() {
	for _, prefix := range legacyPrefixes {
		s.engine.Any(prefix, s.legacyHeaders, s.resolveCaller, s.legacy)
		s.engine.Any(prefix+"/*rest", s.legacyHeaders, s.resolveCaller, s.legacy)
	}
}

// legacyHeaders sets the deprecation headers before anything can answer,
// so that every answer of a legacy route carries them — a bad token's 401
// from resolveCaller too. legacy narrows Link to the tool's run route
// once it knows the tool.
func (s *Server) legacyHeaders(c *gin.Context) {
	c.Header("Deprecation", s.cfg.Deprecation)
	c.Header("Sunset", LegacySunset)
	c.Header("Link", "</api/v1/tools>; rel=\"successor-version\"")
	c.Next()
}

// legacy runs a legacy request through run.App.Legacy and answers in the
// old shapes: the result document of a sync run, {"success": false,
// "error"} for a failed one, {success, download} with a signed URL for a
// job tool's job that succeeded, 202 with the job's Location while it
// runs. The successor link names the tool once it is known.
func (s *Server) legacy(c *gin.Context) {
	start := time.Now()
	call := run.LegacyCall{Origin: origin(c), Method: c.Request.Method, Path: strings.TrimSuffix(c.Request.URL.EscapedPath(), "/"),
		Query: c.Request.URL.Query(), Start: start, Stop: s.drained,
		Tool: func(id string) { c.Header("Link", "<"+contracts.RunEndpoint(id)+">; rel=\"successor-version\"") }}
	if c.Request.Method != http.MethodGet {
		call.Body = s.newBody(c, legacyShape)
	}
	ans, err := s.cfg.Run.Legacy(c.Request.Context(), call)
	if err != nil {
		s.runRefusal(c, err)
		return
	}
	setLimits(c, ans.Limits)
	if ans.Info != nil {
		writeJSON(c, http.StatusOK, "application/json", map[string]any{"tools": ans.Info})
		return
	}
	if ans.Result != nil {
		answerLegacy(c, ans.Result)
		return
	}
	answerLegacyJob(c, ans.Job)
}

// legacyAnswer is the old APIs' answer to a file-producing run.
type legacyAnswer struct {
	Success bool `json:"success"`
	// Download is the signed URL of the first result file.
	Download string         `json:"download,omitempty"`
	Files    []string       `json:"files,omitempty"`
	Job      string         `json:"job"`
	Status   string         `json:"status"`
	Error    *toolerr.Error `json:"error,omitempty"`
}

// answerLegacyJob answers a job tool's legacy run with its job d: {success,
// download} once it succeeded, {success: false, error} when it failed,
// 202 with its Location while it runs.
func answerLegacyJob(c *gin.Context, d *contracts.Job) {
	a := legacyAnswer{Job: d.ID, Status: string(d.State)}
	switch d.State {
	case contracts.RunSucceeded:
		a.Success = true
		for _, f := range d.Files {
			a.Files = append(a.Files, f.URL)
		}
		if len(a.Files) > 0 {
			a.Download = a.Files[0]
		}
		writeJSON(c, http.StatusOK, "application/json", a)
	case contracts.RunFailed, contracts.RunCancelled:
		a.Error = d.Error
		writeJSON(c, http.StatusOK, "application/json", a)
	default:
		a.Success = true
		c.Header("Location", contracts.JobLocation(d.ID))
		writeJSON(c, http.StatusAccepted, "application/json", a)
	}
}

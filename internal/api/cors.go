package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CORS for the open API (issue 16 item 27): the ADR's tools are open, so a
// page of an allowed origin may read the registry (the tool list,
// descriptors, schemas, contracts, /openapi.json), run tools and follow
// its jobs from the browser. The seed-000 routes, the probes and /metrics
// send no CORS headers. Config.CORSOrigins lists the allowed origins: "*"
// allows every origin without credentials (Access-Control-Allow-Origin: *,
// never with Access-Control-Allow-Credentials); a listed origin is echoed
// with Access-Control-Allow-Credentials: true, so its pages may send the
// session cookie. Empty sends no CORS headers at all.

// corsMaxAgeSeconds is how long a browser may keep a preflight's answer.
const corsMaxAgeSeconds = "600"

// corsAllowHeaders are the request headers a cross-origin request may send
// beyond the CORS-safelisted ones.
const corsAllowHeaders = "Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id"

// corsExposeHeaders are the answer headers a cross-origin page may read.
const corsExposeHeaders = "ETag, Location, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Deprecation, Sunset, Link, X-Request-Id, Idempotent-Replayed"

// ParseOrigin checks one --cors-origin value: "*", or an origin
// (scheme://host[:port], http or https, nothing after it), returned in
// its canonical lower-case form.
func ParseOrigin(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the CORS origin %q is neither * nor scheme://host[:port] (http or https)", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// corsRoute reports whether path is one of the open API's routes.
func corsRoute(path string) bool {
	switch path {
	case "/openapi.json", Prefix + "/tools", Prefix + "/jobs":
		return true
	case Prefix + "/tools/catalog", Prefix + "/tools/compute", Prefix + "/tools/diagnostics":
		return false
	}
	return strings.HasPrefix(path, Prefix+"/tools/") || strings.HasPrefix(path, Prefix+"/jobs/") ||
		strings.HasPrefix(path, Prefix+"/contracts/")
}

// cors sets the CORS headers of a request to the open API from an allowed
// origin and answers its preflight (204); it reports whether it answered.
// A request without Origin, from an origin not allowed, or to another
// route is left as it is (its preflight meets the route's 405).
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.cfg.CORSOrigins) == 0 || !corsRoute(r.URL.Path) {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	switch {
	case slices.Contains(s.cfg.CORSOrigins, strings.ToLower(origin)):
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	case slices.Contains(s.cfg.CORSOrigins, "*"):
		h.Set("Access-Control-Allow-Origin", "*")
	default:
		return false
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAgeSeconds)
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	return false
}

package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Hub is the web app the server hosts at / (*hub.Hub): an http.Handler of
// GET routes.
type Hub interface {
	http.Handler
	// Routes are the GET patterns the hub answers, in gin's syntax.
	Routes() []string
}

// registerHub mounts the hub's routes on the engine, after every route of
// the API: a pattern the API already serves is left to the API, so the
// hub can never shadow /api, /openapi.json, /metrics or the probes. A
// path no route takes stays the API's 404 not_found; there is no catch-all
// fallback to the app.
func (s *Server) registerHub() {
	if s.cfg.Hub == nil {
		return
	}
	taken := map[string]bool{}
	for _, r := range s.engine.Routes() {
		if r.Method == http.MethodGet {
			taken[r.Path] = true
		}
	}
	h := gin.WrapH(s.cfg.Hub)
	for _, p := range s.cfg.Hub.Routes() {
		if !taken[p] {
			s.engine.GET(p, h)
		}
	}
}

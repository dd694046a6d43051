// Package api serves Toolhost over HTTP with gin: the authenticated
// seed-000 routes (catalog, compute, diagnostics) under /api/v1/tools, and
// the process probes /healthz and /readyz. It owns the transport: bounded
// body reads, strict JSON, envelope validation, request deadlines, status
// codes and problem documents. What an item does is the executor's.
package api

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/run"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1"

// Config is what the server needs.
type Config struct {
	// Run is the application layer every run goes through: callers,
	// admission, items, outcomes. Required for every route but the
	// probes.
	Run *run.App
	// Process is what diagnostics and /readyz read of the process beside
	// the registry: its id, capabilities, executor pool, native workers
	// and the tools folder's loads in progress.
	Process catalog.Process
	// Started is closed once the tools folder's first scan is loaded
	// (registry.Registry.Started); until then /readyz answers 503
	// "starting". nil is started.
	Started <-chan struct{}
	// FirstScan counts the module files the tools folder's first scan
	// found and those whose load has ended (registry.Registry.FirstScan),
	// for /readyz's "starting" answer; nil leaves the counts out.
	FirstScan func() (found, ended int)
	// Checks are the engines /readyz asks at each probe (the store,
	// Redis): while one fails, it answers 503 "unavailable" and names it
	// (ReadyCheck).
	Checks []ReadyCheck
	// Version is the server's version, for the OpenAPI document.
	Version string
	// MetricsElsewhere keeps /metrics off this handler: the process serves
	// it on a listener of its own (serve --metrics-addr); Metrics still
	// counts.
	MetricsElsewhere bool
	// CORSOrigins are the origins whose pages may use the open API from a
	// browser (cors.go): "*" for any, without credentials; each a
	// ParseOrigin form. Empty sends no CORS headers.
	CORSOrigins []string
	Logger      *slog.Logger
	// Metrics is served at /metrics and counts the form gate's refusals;
	// nil serves and counts nothing.
	Metrics *metrics.Metrics
	// Deprecation is the value of the legacy routes' Deprecation field:
	// ADR-027's "true" when empty, or RFC 9745's "@<unix seconds>" (see
	// ParseDeprecation).
	Deprecation string
	// EventsHeartbeat is how often a job's event stream sends a heartbeat
	// comment when nothing else was sent; zero is DefaultEventsHeartbeat
	// (15 s). Tests shorten it.
	EventsHeartbeat time.Duration
	// Hub is the web app served at / (internal/hub): its Routes are
	// registered for GET after the API's own, skipping any the API serves,
	// so the API's routes always win; nil serves no hub.
	Hub Hub
	// ReadBudget is the request budget of the catalogue and diagnostics
	// routes; zero is DefaultReadBudget (seed 000's 20 s, read.go).
	ReadBudget time.Duration
}

// Server is the HTTP surface. Create it with New.
type Server struct {
	cfg      Config
	engine   *gin.Engine
	draining atomic.Bool
	// drained is closed by Drain: runs waiting for their jobs answer and
	// event streams end, so that the listener's shutdown is not held up.
	drained   chan struct{}
	drainOnce sync.Once
	// sessionCookie and tokenCookie name the cookies a browser's session
	// and an account's token are read from; trusted says whether a peer
	// is a trusted proxy: the application layer's, or the guard's
	// defaults and none without one.
	sessionCookie, tokenCookie string
	trusted                    func(peer string) bool
	// platform is the application layer's platform policy, or the
	// default one.
	platform policy.Platform
}

// New returns a Server. gin runs in release mode: the server logs through
// cfg.Logger only.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: cfg, engine: gin.New(), drained: make(chan struct{})}
	if s.cfg.Deprecation == "" {
		s.cfg.Deprecation = "true"
	}
	s.platform = policy.DefaultPlatform()
	s.sessionCookie, s.tokenCookie, s.trusted = "ov_tools_jobs", "ov_token", func(string) bool { return false }
	if a := cfg.Run; a != nil {
		s.platform, s.sessionCookie, s.tokenCookie, s.trusted = a.Platform(), a.SessionCookie(), a.TokenCookie(), a.TrustedPeer
	}
	// HEAD is served by the GET routes and request ids are given out in
	// Handler (requestid.go); gin's trees list GET only.
	s.engine.HandleMethodNotAllowed = true
	// The access log is outside the recoverer, so that it logs the 500
	// of a panic.
	s.engine.Use(s.accessLog, s.recoverer)
	s.engine.NoRoute(func(c *gin.Context) {
		problem(c, "not_found", "No such route.")
	})
	s.engine.NoMethod(methodNotAllowed)
	s.engine.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	s.engine.GET("/readyz", s.ready)
	if cfg.Metrics != nil && !cfg.MetricsElsewhere {
		s.engine.GET("/metrics", gin.WrapH(cfg.Metrics.Handler()))
	}

	tools := s.engine.Group(Prefix+"/tools", s.authenticate)
	reads := s.engine.Group(Prefix+"/tools", s.readBudget, s.authenticate) // authentication within the budget
	reads.GET("/catalog", s.catalog)
	tools.POST("/compute", s.compute)
	reads.GET("/diagnostics", s.diagnostics)
	s.registerTools()
	s.registerJobs()
	s.registerLegacy()
	s.registerSignIn()
	s.registerHub()
	return s
}

// Handler returns the HTTP handler: every route, /metrics when
// Config.Metrics is set, HEAD wherever GET is served, and the request id
// of every answer.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Drain marks the server as draining: /readyz answers 503 so that a load
// balancer stops sending requests, while requests in flight finish.
// Runs waiting for their jobs answer at once (202) and job event streams
// end. It is safe to call more than once.
func (s *Server) Drain() {
	s.draining.Store(true)
	s.drainOnce.Do(func() { close(s.drained) })
}

func (s *Server) ready(c *gin.Context) {
	if s.draining.Load() {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "draining"})
		return
	}
	// The process listens before its tools folder is loaded: it is not
	// ready until the modules of the first scan are published (or failed).
	// Later loads (a module dropped into the folder) are reported, never a
	// reason to be unready.
	if s.cfg.Started != nil {
		select {
		case <-s.cfg.Started:
		default:
			tc, _ := s.cfg.Process.ToolsCheck()
			body := gin.H{"status": "starting", "checks": gin.H{"tools": tc}}
			if s.cfg.FirstScan != nil {
				// The first scan's progress: its module files, and those
				// loaded or refused so far.
				body["modules_total"], body["modules_ready"] = s.cfg.FirstScan()
			}
			c.JSON(http.StatusServiceUnavailable, body)
			return
		}
	}
	checks := gin.H{}
	if tc, ok := s.cfg.Process.ToolsCheck(); ok {
		checks["tools"] = tc
	}
	if failed := s.runChecks(c.Request.Context(), checks); failed {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "checks": checks})
		return
	}
	// A full data folder: jobs are refused (507) and wait; the check
	// names the folder (docs/jobs.md).
	if s.cfg.Run != nil {
		if st := s.cfg.Run.JobsStorage(); st.Full {
			checks["storage"] = st
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "storage_full", "checks": checks})
			return
		}
	}
	if len(checks) == 0 {
		c.JSON(http.StatusOK, gin.H{"status": "ready"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": checks})
}

// recoverer turns a panic in a handler into a logged 500 problem, never a
// dropped connection; it is a bug when it runs.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.cfg.Logger.Error("handler panicked", "path", c.FullPath(), "panic", r, "request_id", RequestID(c))
			if !c.Writer.Written() {
				problem(c, "internal_error", "The server failed to handle the request.")
			}
			c.Abort()
		}
	}()
	c.Next()
}

// accessLog logs each request's method (HEAD for a HEAD served by its GET
// route), route, status, duration and request id: never a body, a query,
// an address or another header.
//
// The record is built from typed attributes (LogAttrs), not from
// key-value pairs, so that no value is boxed in an interface: the line is
// the same, without an allocation per attribute.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	done := s.cfg.Metrics.StartRequest(method(c), c.FullPath())
	c.Next()
	done(c.Writer.Status())
	ctx := c.Request.Context()
	if !s.cfg.Logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "request",
		slog.String("method", method(c)),
		slog.String("route", c.FullPath()),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1e3),
		slog.String("request_id", RequestID(c)))
}

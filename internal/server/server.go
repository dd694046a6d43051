// Package server composes one Toolhost process: the store and accounts,
// the WASM host and loader, the supervisor of native workers, the registry
// over the tools folder and the native packages, the executor and the HTTP
// API. cmd/toolhost's serve command is a thin shell
// around it, and end-to-end tests run it on loopback as it is.
package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/hub"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// DatabaseFile is the SQLite database's name in the data folder.
const DatabaseFile = "toolhost.db"

// ScratchDir is the folder in the data folder under which each native
// item gets its scratch folder (supervisor.Config.ScratchDir), unless the
// supervisor's configuration names another.
const ScratchDir = "scratch"

// Config configures a process. The zero value of every field but DataDir
// is a usable default.
type Config struct {
	// ToolsDir is the drop-in folder of tool modules; empty for none.
	ToolsDir string
	// DataDir holds the database (DatabaseFile) unless Store names
	// another, and the job files. Required.
	DataDir string
	// Store is a postgres:// URL of the database replicas share (serve
	// --store, docs/store.md); empty opens DataDir's SQLite file. A URL
	// that does not parse, or a server that does not answer, fails New.
	Store string
	// CacheDir is where compiled modules are cached; empty for none.
	CacheDir string
	// Platform is the platform policy; zero means policy.DefaultPlatform().
	Platform policy.Platform
	// AdmissionWaiters bounds the runs that wait for the executor's
	// pending items rather than being refused at once (the run route,
	// jobs; executor.Config.AdmissionWaiters): 0 means
	// executor.DefaultAdmissionWaiters, negative none.
	AdmissionWaiters int
	// Rescan and Settle tune the live tools folder (registry.Config).
	Rescan, Settle time.Duration
	// Loading bounds how the tools folder's modules load and how long New
	// waits for them (docs/registry.md, "Loading is bounded"); its zero
	// values take the defaults.
	Loading LoadingConfig
	// Natives are the native tool packages compiled into the binary; they
	// run in worker processes of a supervisor configured by Supervisor
	// (its Logger is this Config's).
	Natives    []*native.Package
	Supervisor supervisor.Config
	// Version is the build's version, for the OpenAPI document.
	Version string
	Logger  *slog.Logger
	// LogLevel is the level WASM tools read through Extism's
	// get_log_level; their log calls below it are dropped
	// (host.Config.LogLevel). The zero value is slog.LevelInfo. It should
	// be Logger's level, which logs each guest line at its own level.
	LogLevel slog.Level
	// Jobs tunes the jobs subsystem (jobs.Config): its zero values take
	// the subsystem's defaults.
	Jobs JobsConfig
	// Guard configures the guard in front of every run (docs/guard.md).
	Guard GuardConfig
	// ProbeAllow is the operator's allow-list of the network probes
	// (comma-separated CIDRs, netprobe.AllowEnv), passed to the native
	// workers; empty refuses every private and loopback target.
	ProbeAllow string
	// DrainDelay is how long Shutdown keeps the listener open after
	// /readyz turned 503, so that a load balancer sees it and stops
	// sending requests before connections are refused; requests are
	// served as usual meanwhile (docs/lifecycle.md). Zero (tests) closes
	// the listener at once; `serve` sets DefaultDrainDelay. Shutdown
	// spends at most half of its drain on it.
	DrainDelay time.Duration
	// Deprecation is the legacy routes' Deprecation field (api.Config's):
	// "true" when empty, or RFC 9745's "@<unix seconds>"
	// (api.ParseDeprecation).
	Deprecation string
	// MetricsElsewhere serves /metrics only from MetricsHandler, on a
	// listener of the caller's (serve --metrics-addr), not from the API.
	MetricsElsewhere bool
	// CORSOrigins are the origins whose pages may use the open API from a
	// browser (api.Config.CORSOrigins, docs/http.md): "*" for any, without
	// credentials; empty sends no CORS headers.
	CORSOrigins []string
	// SessionCookie names the browser session cookie the server reads and
	// issues; auth.SessionCookie (ADR-027's ov_tools_jobs) when empty.
	SessionCookie string
	// HubFS holds the hub's built web app (index.html, assets/) served at
	// / (internal/hub, docs/hub.md); nil serves the dist embedded in the
	// binary, which answers 503 hub.not_built when built without Node.
	HubFS fs.FS
	// Redis is the redis:// URL of what replicas share exactly (serve
	// --redis, docs/scale-out.md): the guard's quotas, throttles and
	// semaphores and the abuse log's daily salt, and a /readyz check.
	// Empty keeps them in the process.
	Redis string
}

// DefaultDrainDelay is the DrainDelay of `serve` (--drain-delay): about
// two periods of a load balancer's readiness probe at 1 s.
const DefaultDrainDelay = 2 * time.Second

// DefaultLoadWait is how long New waits for the first loads of the tools
// folder before it returns, so that the server listens within about a
// second whatever the folder holds (DESIGN: "listen first and publish
// modules as they become ready"). A module still loading then is
// published in a later generation when its load ends.
const DefaultLoadWait = time.Second

// LoadingConfig is the part of registry.Config and wasmtool.Config a
// process chooses.
type LoadingConfig struct {
	// Wait is how long New waits for the first loads (registry.Config's
	// LoadWait). Default [DefaultLoadWait]; it cannot be "until every
	// load ends", which would hold the listener for as long as the
	// slowest phase deadline.
	Wait time.Duration
	// Background makes New wait for no load at all, whatever Wait says:
	// it returns once the store is open and the folder scanned, the
	// modules are published as each loads, and /readyz answers 503
	// "starting" until the first scan's have all loaded or failed
	// (registry.Registry.Started). `toolhost serve` sets it, so that it
	// listens at once.
	Background bool
	// BatchWait is how long a rescan of the live folder waits for its
	// loads before publishing what is ready (registry.Config).
	BatchWait time.Duration
	// Read, Instrument, Compile, Image and Describe are the deadlines of
	// a load's phases (wasmtool.Config's …Timeout fields); MaxLoads bounds
	// the loads running at once, abandoned ones included.
	Read, Instrument, Compile, Image, Describe time.Duration
	MaxLoads                                   int
	// Untiered turns the tiered start off (ToolsConfig.Tiered): every
	// module is published only once its optimised compile has ended.
	Untiered bool
}

// GuardConfig is the part of guard.Config a process chooses.
type GuardConfig struct {
	// Mode is guard.Report (the zero value) or guard.Enforce.
	Mode guard.Mode
	// Trusted are the proxy hops whose X-Forwarded-For is believed.
	Trusted []netip.Prefix
	// Quotas is the quota table; nil means guard.DefaultTable().
	Quotas *guard.Table
	// Now is the guard's clock (time.Now when nil); tests move it.
	Now func() time.Time
}

// JobsConfig is the part of jobs.Config a process chooses; the rest
// (store, data directory, handlers, signing key, logger) comes from the
// server.
type JobsConfig struct {
	// FileTTL is how long a finished job's files are kept.
	FileTTL time.Duration
	// PollInterval is how often the runner looks for queued jobs when it
	// missed a notification.
	PollInterval time.Duration
	// MaxWorkers is how many jobs run at once.
	MaxWorkers int
	// Now is the clock of file expiry and signed URLs (time.Now); tests
	// move it.
	Now func() time.Time
	// MinFreeBytes and StorageInterval are the free space below which the
	// data folder counts as full, and how often it is measured
	// (jobs.Config; docs/jobs.md).
	MinFreeBytes    int64
	StorageInterval time.Duration
	// EventsHeartbeat is how often a job's event stream sends a heartbeat
	// comment (api.DefaultEventsHeartbeat, 15 s, when zero).
	EventsHeartbeat time.Duration
	// RescueAfter and LeaseTTL are how a replica's dead jobs are re-run
	// on a PostgreSQL store (jobs.Config; docs/store.md); zero takes the
	// defaults.
	RescueAfter, LeaseTTL time.Duration
	// FilesDir is the job files' folder (jobs.Config.FilesDir, serve
	// --files-dir): a volume the replicas of a PostgreSQL store share;
	// DataDir/jobs when empty.
	FilesDir string
	// WriteTimeout replaces the HTTP server's write timeout (the
	// platform's client deadline) when positive; tests shorten it to
	// show that an event stream outlives it.
	WriteTimeout time.Duration
}

// SigningKeyFile is the file in the data folder holding the key of signed
// download URLs: 32 random bytes, mode 0600, made once.
const SigningKeyFile = "signing.key"

// Server is a composed process. Create it with New, serve with Serve, stop
// with Shutdown.
type Server struct {
	cfg        Config
	log        *slog.Logger
	store      *store.Store
	accounts   *auth.Accounts
	runtime    *host.Runtime
	supervisor *supervisor.Supervisor
	registry   *registry.Registry
	executor   *executor.Executor
	jobs       *jobs.Service
	abuse      *abuse.Log
	metrics    *metrics.Metrics
	guard      *guard.Guard
	run        *run.App
	api        *api.Server
	http       *http.Server
	loader     *wasmtool.Loader
	shared     *shared // nil without Config.Redis

	// serving is set by Serve: Shutdown waits DrainDelay only for a
	// process that listened.
	serving atomic.Bool
	// The first Shutdown runs the teardown; every call waits for it.
	shutOnce sync.Once
	shutDone chan struct{}
	shutErr  error
}

// New opens everything a process needs and runs the first discovery of
// the tools folder, waiting for its loads up to cfg.Loading.Wait: the
// modules still loading then are published when they are ready, so that
// the caller can listen at once. On an error it closes what it opened.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.DataDir == "" {
		return nil, errors.New("server: DataDir is required")
	}
	// A probe allow-list that does not parse would fail every probe item:
	// refuse to start instead, naming the entry.
	if _, err := netprobe.ParseAllowList(cfg.ProbeAllow); err != nil {
		return nil, fmt.Errorf("server: reading the probes' allow-list: %w", err)
	}
	if cfg.Platform == (policy.Platform{}) {
		cfg.Platform = policy.DefaultPlatform()
	}
	// The API's contracts compile while the store opens and the tools
	// load, not in the first request that validates one.
	go contracts.Precompile()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	defer func() {
		if err != nil {
			s.close(context.Background())
		}
	}()
	if s.store, err = openStore(ctx, cfg); err != nil {
		return nil, err
	}
	// Known tokens and sessions answer from memory for a few seconds, so
	// that a run never waits on the database for them (docs/accounts.md,
	// "The credential cache").
	s.accounts = auth.New(s.store, auth.WithCache(auth.DefaultCacheTTL, auth.DefaultCacheEntries))
	// The tool side — runtime, loader, supervisor, builtins, registry — is
	// composed as the command line composes it (OpenTools).
	ld := cfg.Loading
	switch {
	case ld.Background:
		ld.Wait = time.Nanosecond // the registry's LoadWait: 0 would wait for every load
	case ld.Wait <= 0:
		ld.Wait = DefaultLoadWait
	}
	sup := cfg.Supervisor
	if sup.ScratchDir == "" {
		// Each native item's scratch folder lives under the data folder
		// (docs/supervisor.md, "Scratch folders").
		sup.ScratchDir = filepath.Join(cfg.DataDir, ScratchDir)
	}
	tools, err := OpenTools(ctx, ToolsConfig{
		Dir: cfg.ToolsDir, CacheDir: cfg.CacheDir, Platform: cfg.Platform,
		Natives: cfg.Natives, Supervisor: sup, ProbeAllow: cfg.ProbeAllow,
		Loading: ld, Rescan: cfg.Rescan, Settle: cfg.Settle, Logger: cfg.Logger,
		Tiered: !ld.Untiered, LogLevel: cfg.LogLevel,
	})
	if err != nil {
		return nil, err
	}
	// The teardown closes them one by one, interleaved with the executor
	// and the abuse log (Server.teardown).
	s.runtime, s.loader, s.supervisor, s.registry = tools.Runtime, tools.Loader, tools.Supervisor, tools.Registry
	go releaseLoadingHeap(s.registry.Started())
	memoryMode := tools.MemoryMode()
	if s.executor, err = executor.New(executor.Config{
		Platform: cfg.Platform, Snapshot: s.registry.Snapshot, Logger: cfg.Logger,
		AdmissionWaiters: cfg.AdmissionWaiters,
	}); err != nil {
		return nil, err
	}
	key, err := s.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	s.metrics = metrics.New(metrics.WithLanes(func() metrics.Lanes {
		p := s.executor.Pool()
		return metrics.Lanes{Lanes: p.Lanes, Active: p.Active, Degraded: p.Degraded, Queued: p.Queued, Waiting: p.Waiting}
	}), metrics.WithInstances(func() metrics.Instances {
		st := s.runtime.InstanceStats()
		return metrics.Instances{Instantiated: st.Instantiated, Reused: st.Reused, Discarded: st.Discarded}
	}), metrics.WithCaches(func() metrics.Caches {
		st := s.runtime.CacheStats()
		return metrics.Caches{CodeHits: st.CodeHits, CodeMisses: st.CodeMisses, ImageHits: st.ImageHits, ImageMisses: st.ImageMisses}
	}), metrics.WithSpares(spareStats(s.supervisor)), metrics.WithCollectors(abuseCollectors(&s.abuse)...),
		metrics.WithCollectors(registryCollectors(s)...), metrics.WithCollectors(jobCollector{s}))
	s.metrics.SetBuildInfo(cfg.Version)
	if s.shared, err = openShared(cfg.Redis); err != nil {
		return nil, err
	}
	if s.abuse, err = abuse.New(abuse.Config{Store: s.store, Logger: cfg.Logger, Salts: s.shared.salts()}); err != nil {
		return nil, err
	}
	gc := guard.Config{Mode: cfg.Guard.Mode, Trusted: cfg.Guard.Trusted, Quotas: guard.DefaultTable(),
		Now: cfg.Guard.Now, SessionCookie: cfg.SessionCookie}
	if gc.SessionCookie == "" {
		gc.SessionCookie = auth.SessionCookie
	}
	if cfg.Guard.Quotas != nil {
		gc.Quotas = *cfg.Guard.Quotas
	}
	s.shared.guard(&gc)
	if s.guard, err = guard.New(gc); err != nil {
		return nil, err
	}
	if s.run, err = run.New(run.Config{
		Platform: cfg.Platform, Snapshot: s.registry.Snapshot, Started: s.registry.Started(), Executor: s.executor, Guard: s.guard,
		Credentials: credentials{s.accounts}, Sessions: s.accounts, SignIns: signIns{s.accounts}, Abuse: s.abuse, Metrics: s.metrics, Logger: cfg.Logger,
	}); err != nil {
		return nil, err
	}
	// Job types are resolved against the live snapshot at each
	// submission and run (run.App.ResolveJob), so a job tool dropped into
	// the folder runs without a restart.
	if s.jobs, err = jobs.Open(ctx, jobs.Config{
		Store: s.store, DataDir: cfg.DataDir, Resolve: s.run.ResolveJob, SigningKey: key, Logger: cfg.Logger,
		FileTTL: cfg.Jobs.FileTTL, PollInterval: cfg.Jobs.PollInterval, MaxWorkers: cfg.Jobs.MaxWorkers,
		StopGrace: time.Duration(cfg.Platform.CleanupTimeoutMS) * time.Millisecond, Now: cfg.Jobs.Now,
		MinFreeBytes: cfg.Jobs.MinFreeBytes, StorageInterval: cfg.Jobs.StorageInterval,
		RescueAfter: cfg.Jobs.RescueAfter, LeaseTTL: cfg.Jobs.LeaseTTL, FilesDir: cfg.Jobs.FilesDir,
	}); err != nil {
		return nil, err
	}
	var hubOpts []hub.Option
	if cfg.HubFS != nil {
		hubOpts = append(hubOpts, hub.WithFS(cfg.HubFS))
	}
	webApp, err := hub.New(hubOpts...)
	if err != nil {
		return nil, fmt.Errorf("reading the hub: %w", err)
	}
	s.api = api.New(api.Config{
		Hub:      webApp,
		Run:      s.run,
		Metrics:  s.metrics,
		Jobs:     s.jobs,
		Checks:   append(s.storeChecks(), s.shared.checks()...),
		OwnerKey: ownerKey(key),
		Executor: s.executor,
		Loading:  s.registry.Loading,
		Started:  s.registry.Started(),
		Capabilities: api.Capabilities{
			Memory:     memoryMode,
			WASMMemory: engine.MemoryWASMHard,
		},
		RuntimeID:        runtimeID(),
		Version:          cfg.Version,
		Logger:           cfg.Logger,
		NativeWorkers:    nativeWorkers(s.supervisor),
		Deprecation:      cfg.Deprecation,
		EventsHeartbeat:  cfg.Jobs.EventsHeartbeat,
		CORSOrigins:      cfg.CORSOrigins,
		MetricsElsewhere: cfg.MetricsElsewhere,
	})
	// The API serves /metrics too (api.Config.Metrics), with HEAD, 405 and
	// request ids like every route.
	s.http = &http.Server{
		Handler:           s.api.Handler(),
		ReadHeaderTimeout: time.Duration(cfg.Platform.IngressTimeoutMS) * time.Millisecond,
		// A backstop for bodies no handler reads under its own deadline
		// (JSON bodies get the ingress budget, multipart bodies a
		// minimum rate per part and the request deadline: docs/http.md,
		// "Bounded requests"); the handlers' read deadlines replace it.
		ReadTimeout: time.Duration(cfg.Platform.ClientTimeoutMS) * time.Millisecond,
		// A response may take the longest request budget plus its
		// reserve; the handler bounds itself, this only reaps stuck
		// connections.
		WriteTimeout: time.Duration(cfg.Platform.ClientTimeoutMS) * time.Millisecond,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	if cfg.Jobs.WriteTimeout > 0 {
		s.http.WriteTimeout = cfg.Jobs.WriteTimeout
	}
	return s, nil
}

// Accounts returns the process's accounts, for the commands that manage
// them and for tests.
func (s *Server) Accounts() *auth.Accounts { return s.accounts }

// Registry returns the process's registry.
func (s *Server) Registry() *registry.Registry { return s.registry }

// Serve serves HTTP on l until Shutdown; it returns http.ErrServerClosed
// after a shutdown.
// MetricsHandler serves the process's metrics in the Prometheus
// exposition formats, for a listener of their own (Config.MetricsElsewhere).
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }

func (s *Server) Serve(l net.Listener) error {
	s.log.Info("serving", "addr", l.Addr().String(), "tools_dir", s.cfg.ToolsDir,
		"services", len(s.registry.Snapshot().Services()))
	s.serving.Store(true)
	return s.http.Serve(l)
}

// ErrShutdownDeadline is returned by Shutdown when its context's deadline
// came before the teardown ended; what is left of it goes on in the
// background, told to stop.
var ErrShutdownDeadline = errors.New("server: the shutdown's deadline passed before the teardown ended")

// Shutdown drains and stops the process: /readyz turns 503 and, after
// Config.DrainDelay (at most half the drain) during which requests are
// still served and new connections accepted, the listener closes;
// requests in flight get until ctx's deadline less a cleanup
// reserve to finish (then their connections are closed), the jobs stop,
// the executor and the supervisor cancel and reap what is left within the
// reserve, the abuse log writes its pending rows, then the registry
// (abandoning the loads still running), the runtime and the store close.
//
// With a deadline, Shutdown returns by it whatever a load, an item or a
// request is doing: the reserve is the platform's cleanup budget, or half
// the time left when that is shorter, and a teardown still running at the
// deadline is left to end in the background, its contexts ended, and
// ErrShutdownDeadline returned. Without a deadline, requests get as long
// as they take and the teardown the cleanup budget after them. It is safe
// to call more than once: later calls wait for the first one's teardown.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.api.Drain()
		s.shutDone = make(chan struct{})
		drain, cleanup, cancel := s.shutdownBudgets(ctx)
		go func() {
			defer close(s.shutDone)
			defer cancel()
			s.drainDelay(drain)
			err := s.http.Shutdown(drain)
			// Requests still running past the drain have their items
			// cancelled by the teardown, get a moment to answer, and
			// then their connections close.
			s.shutErr = errors.Join(err, s.teardown(drain, cleanup, err != nil))
		}()
	})
	var deadline <-chan time.Time
	if d, ok := ctx.Deadline(); ok {
		t := time.NewTimer(time.Until(d))
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-s.shutDone:
		return s.shutErr
	case <-deadline:
		return ErrShutdownDeadline
	}
}

// drainDelay waits Config.DrainDelay, or half of what is left of drain
// when that is shorter, or until drain ends, with the listener open:
// /readyz already answers 503, other requests are served, and keep-alive
// connections close after their next answer (idle ones at once), so that
// their clients reconnect through a load balancer that has seen the 503.
// It returns at once for a process that never served.
func (s *Server) drainDelay(drain context.Context) {
	d := s.cfg.DrainDelay
	if d <= 0 || !s.serving.Load() {
		return
	}
	if deadline, ok := drain.Deadline(); ok {
		d = min(d, time.Until(deadline)/2)
	}
	s.http.SetKeepAlivesEnabled(false)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-drain.Done():
	}
}

// shutdownBudgets splits ctx's time between draining requests and tearing
// down: drain ends a cleanup reserve before ctx's deadline, cleanup at it
// (and not earlier when ctx is cancelled before it); without a deadline,
// drain is ctx and cleanup has the cleanup budget from when it is first
// used. cancel releases both.
func (s *Server) shutdownBudgets(ctx context.Context) (drain, cleanup context.Context, cancel context.CancelFunc) {
	budget := time.Duration(s.cfg.Platform.CleanupTimeoutMS) * time.Millisecond
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, nil, func() {}
	}
	reserve := min(budget, time.Until(deadline)/2)
	drain, cancelDrain := context.WithDeadline(ctx, deadline.Add(-reserve))
	cleanup, cancelCleanup := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	return drain, cleanup, func() { cancelDrain(); cancelCleanup() }
}

// close releases everything New opened, in reverse order, after a failed
// New.
func (s *Server) close(ctx context.Context) error { return s.teardown(ctx, nil, false) }

// lateAnswerWait is how long requests that outlived the drain get to
// answer once their items are cancelled, before their connections close.
const lateAnswerWait = 500 * time.Millisecond

// teardown releases everything New opened, in reverse order: what waits
// for requests and jobs gets until drain ends, what cancels and reaps
// gets until cleanup ends (nil: the platform's cleanup budget from the
// moment the jobs have stopped). With late, requests are still running:
// once the executor has cancelled their items they get lateAnswerWait to
// answer, then their connections are closed.
func (s *Server) teardown(drain, cleanup context.Context, late bool) error {
	ctx := drain
	var errs []error
	if s.jobs != nil {
		// First the jobs stop taking work: running handlers get until
		// drain ends to finish, then their contexts end, which cancels
		// their items in the executor, and the subsystem waits for them
		// within its StopGrace (the cleanup budget). Only then does the
		// executor close, with what is left for it.
		errs = append(errs, s.jobs.Close(ctx))
	}
	// Past the drain (requests that outlived it), the executor and the
	// supervisor still get the cleanup reserve to cancel and reap items.
	cctx := cleanup
	if cctx == nil {
		budget := time.Duration(s.cfg.Platform.CleanupTimeoutMS) * time.Millisecond
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), budget)
		defer cancel()
	}
	if s.executor != nil {
		errs = append(errs, s.executor.Shutdown(cctx))
	}
	if s.supervisor != nil {
		// Whatever the executor could not reap in its budget is killed
		// here, its subtree confirmed gone.
		errs = append(errs, s.supervisor.Close(cctx))
	}
	if late && s.http != nil {
		actx, cancel := context.WithTimeout(cctx, lateAnswerWait)
		if err := s.http.Shutdown(actx); err != nil {
			errs = append(errs, s.http.Close())
		}
		cancel()
	}
	if s.abuse != nil {
		// What the abuse log's writer has not stored yet is written
		// within the cleanup budget, before abandoned loads can take
		// what is left of it. No request records anything any more.
		errs = append(errs, s.abuse.Shutdown(cctx))
	}
	// Semaphore slots still held lapse with their leases.
	errs = append(errs, s.shared.close())
	if s.registry != nil {
		// Loads still running are abandoned: Close returns promptly
		// whatever they do, and waits for running items within cctx.
		errs = append(errs, s.registry.Close(cctx))
	}
	if s.loader != nil {
		// Abandoned work (a compile wazero cannot interrupt) gets the
		// rest of the reserve to end before the runtime closes under it.
		if err := s.loader.Wait(cctx); err != nil {
			errs = append(errs, fmt.Errorf("closing the loader: %w", err))
		}
	}
	if s.runtime != nil {
		errs = append(errs, s.runtime.Close(cctx))
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

// credentials adapts the accounts to the guard: a token resolves to a
// user or app identity with the token's capabilities, a session cookie to
// a session identity. The principal is the account's, app's or session's
// key ("user:ID", "app:ID", "session:ID").
type credentials struct{ a *auth.Accounts }

func (c credentials) Token(ctx context.Context, token string) (guard.Identity, error) {
	pr, err := c.a.Authenticate(ctx, token)
	if err != nil {
		return guard.Identity{}, unavailable(err)
	}
	return identity(pr)
}

func (c credentials) Session(ctx context.Context, value string) (guard.Identity, error) {
	sess, err := c.a.Session(ctx, value)
	if err != nil {
		return guard.Identity{}, unavailable(err)
	}
	return identity(sess.Principal())
}

// unavailable marks an error of a store too busy to answer (store.ErrBusy)
// as guard.ErrUnavailable, which the API answers 503 rather than 401.
func unavailable(err error) error {
	if errors.Is(err, store.ErrBusy) {
		return fmt.Errorf("%w: %w", guard.ErrUnavailable, err)
	}
	return err
}

// nativeWorkers is the supervisor's Stats for diagnostics; nil without
// natives.
func nativeWorkers(sup *supervisor.Supervisor) func() supervisor.Stats {
	if sup == nil {
		return nil
	}
	return sup.Stats
}

// spareStats reads the supervisor's spare workers for /metrics at each
// scrape; nil without natives.
func spareStats(sup *supervisor.Supervisor) func() metrics.Spares {
	if sup == nil {
		return nil
	}
	return func() metrics.Spares {
		st := sup.Stats()
		return metrics.Spares{Running: st.Jobs, Ready: st.SparesReady, Starting: st.SparesStarting,
			JobCgroups: st.JobCgroups, Used: st.SparesUsed, Fresh: st.FreshWorkers, Lost: st.SparesLost}
	}
}

// abuseCollectors are the abuse log's counters in /metrics, read at each
// scrape through l, which New sets after the metrics are made.
func abuseCollectors(l **abuse.Log) []prometheus.Collector {
	stat := func(f func(abuse.Stats) uint64) func() float64 {
		return func() float64 {
			if *l == nil {
				return 0
			}
			return float64(f((*l).Stats()))
		}
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_dropped_total",
			Help: "Abuse-log events dropped because the pending rows were full (or could not be written at shutdown).",
		}, stat(func(s abuse.Stats) uint64 { return s.Dropped })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_events_written_total",
			Help: "Abuse-log events stored by the log's writer.",
		}, stat(func(s abuse.Stats) uint64 { return s.Written })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_flush_errors_total",
			Help: "Abuse-log flushes that failed (the database busy) and were retried.",
		}, stat(func(s abuse.Stats) uint64 { return s.FlushErrors })),
	}
}

// identity maps an auth principal to a guard identity; the tiers share
// their names.
func identity(pr *auth.Principal) (guard.Identity, error) {
	var tier guard.Tier
	if err := tier.UnmarshalText([]byte(pr.Tier.String())); err != nil {
		return guard.Identity{}, fmt.Errorf("mapping the tier of %s: %w", pr.Key, err)
	}
	return guard.Identity{Tier: tier, Principal: pr.Key, Capabilities: pr.Capabilities, Sandbox: pr.Sandbox}, nil
}

// signingKey reads the signing key at path, making it the first time:
// 32 random bytes, readable by the owner alone. A key shorter than 32
// bytes is refused rather than used.
func signingKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("making the signing key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("creating the signing key: %w", err)
		}
		_, err = f.Write(key)
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
		if err != nil {
			_ = os.Remove(path)
			return nil, fmt.Errorf("writing the signing key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("the signing key %s is %d bytes, fewer than 32", path, len(key))
	}
	return key, nil
}

// ownerKey derives the key of anonymous job owners from the signing key,
// so that anonymous callers keep their jobs across a restart.
func ownerKey(signing []byte) []byte {
	m := hmac.New(sha256.New, signing)
	m.Write([]byte("github.com/toolhost/toolhost/jobs/anonymous-owner/v1"))
	return m.Sum(nil)
}

// runtimeID is an opaque identifier of this process for diagnostics: random,
// so that it says nothing about the host.
func runtimeID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("server: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// Abuse returns the process's abuse log, for the abuse command and tests.
func (s *Server) Abuse() *abuse.Log { return s.abuse }

// releaseLoadingHeap hands the heap that the first scan freed back to the
// operating system once started is closed. Loading a module allocates many
// times what the loaded module keeps (reading, instrumenting, imaging and
// compiling it: about 800 MB for the bundled modules on a cold cache, 60
// MB warm), and the runtime's scavenger returns that only slowly; without
// this the idle process holds it for minutes (docs/performance.md,
// "Memory").
func releaseLoadingHeap(started <-chan struct{}) {
	<-started
	debug.FreeOSMemory()
}

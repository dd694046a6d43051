// Package server composes one Toolhost process: the store and accounts,
// the WASM host and loader, the supervisor of native workers, the registry
// over the tools folder and the native packages, the executor and the HTTP
// API. cmd/toolhost's serve command is a thin shell
// around it, and end-to-end tests run it on loopback as it is.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/hub"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

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
			err = errors.Join(err, s.close(context.Background()))
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
		return metrics.Caches{CodeHits: st.CodeHits, CodeMisses: st.CodeMisses, ImageHits: st.ImageHits, ImageMisses: st.ImageMisses,
			LoadHits: st.LoadHits, LoadMisses: st.LoadMisses}
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
		OwnerKey: ownerKey(key),
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
		EventPoll: cfg.Jobs.EventPoll,
		// A job's concurrency slots are the guard's, kept by the job.
		Slots: s.run,
	}); err != nil {
		return nil, err
	}
	s.run.UseJobs(s.jobs)
	var hubOpts []hub.Option
	if cfg.HubFS != nil {
		hubOpts = append(hubOpts, hub.WithFS(cfg.HubFS))
	}
	webApp, err := hub.New(hubOpts...)
	if err != nil {
		return nil, fmt.Errorf("reading the hub: %w", err)
	}
	s.api = api.New(api.Config{
		Hub:     webApp,
		Run:     s.run,
		Metrics: s.metrics,
		Checks:  append(s.storeChecks(), s.shared.checks()...),
		Process: catalog.Process{
			RuntimeID:     runtimeID(),
			Capabilities:  catalog.Capabilities{Memory: memoryMode, WASMMemory: engine.MemoryWASMHard},
			Pool:          s.executor.Pool,
			NativeWorkers: nativeWorkers(s.supervisor),
			Loading:       s.registry.Loading,
		},
		Started:          s.registry.Started(),
		FirstScan:        s.registry.FirstScan,
		Version:          cfg.Version,
		Logger:           cfg.Logger,
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

// MetricsHandler serves the process's metrics in the Prometheus
// exposition formats, for a listener of their own (Config.MetricsElsewhere).
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }

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

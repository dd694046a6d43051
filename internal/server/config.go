package server

import (
	"io/fs"
	"log/slog"
	"net/netip"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/supervisor"
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
	// InterpretedBytes bounds the memory of the modules served from the
	// interpreter at once during a tiered start
	// (host.Config.MaxInterpretedBytes): 0 takes
	// host.DefaultMaxInterpretedBytes, negative is no bound.
	InterpretedBytes int64
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
	// EventPoll is how often the jobs followed by event streams are read
	// again, the safety net for a lost event (jobs.Config.EventPoll, serve
	// --job-event-poll); zero takes the default.
	EventPoll time.Duration
	// FilesDir is the job files' folder (jobs.Config.FilesDir, serve
	// --files-dir): a volume the replicas of a PostgreSQL store share;
	// DataDir/jobs when empty.
	FilesDir string
	// WriteTimeout replaces the HTTP server's write timeout (the
	// platform's client deadline) when positive; tests shorten it to
	// show that an event stream outlives it.
	WriteTimeout time.Duration
}

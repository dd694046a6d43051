package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The defaults of a Config.
const (
	// DefaultCgroupParent is the cgroup, relative to the server's own, under
	// which job cgroups are made.
	DefaultCgroupParent = "toolhost"
	// DefaultTermGrace is how long a job's processes have to end after
	// SIGTERM before they are killed.
	DefaultTermGrace = time.Second
	// DefaultPidsLimit is the most tasks (processes and threads) a job's
	// cgroup may hold.
	DefaultPidsLimit = 128
	// DefaultCleanupTimeout bounds a job's cleanup when its policy has no
	// cleanup budget.
	DefaultCleanupTimeout = 5 * time.Second
)

var (
	// ErrConfig is returned by New when its Config is unusable; the error
	// names the field.
	ErrConfig = errors.New("supervisor: invalid configuration")
	// ErrModeUnavailable is returned by New when Config.MemoryMode forces a
	// mode this host cannot provide.
	ErrModeUnavailable = errors.New("supervisor: memory mode unavailable on this host")
	// ErrUnconfirmed is returned by Close when the end of a job's process
	// tree could not be confirmed: a job still running when Close's context
	// ended, or a job whose cleanup failed.
	ErrUnconfirmed = errors.New("supervisor: job cleanup not confirmed")
)

// Config configures a Supervisor. New validates it once; the Supervisor
// keeps a copy.
type Config struct {
	// Executable is the worker binary. Default: the running binary
	// (/proc/self/exe, which stays the binary the server started from even
	// when the file is replaced on disk).
	Executable string
	// Args are the worker's arguments after argv[0]. Default: ["worker"].
	Args []string
	// Env holds extra "KEY=value" entries for the worker's environment,
	// which otherwise holds only PATH, HOME, TMPDIR, LANG, LC_ALL and TZ
	// from the server's and the execution id (never the server's secrets).
	Env []string
	// CgroupParent is the cgroup under which this process makes its job
	// cgroups: relative to the server's own cgroup (in each hierarchy), or
	// absolute from the hierarchy's root when it starts with "/". A
	// relative path may climb with "..": "../jobs" beside a delegated
	// leaf. Default [DefaultCgroupParent].
	CgroupParent string
	// MemoryMode forces a memory mode (an engine.Memory* native mode)
	// instead of detecting the strongest one; New fails with
	// ErrModeUnavailable when the host cannot provide it. Forcing
	// process_tree_observed keeps cgroups out entirely.
	MemoryMode string
	// PidsLimit is the most tasks (processes and threads) a job's cgroup
	// may hold, where the pids controller exists. Default
	// [DefaultPidsLimit]; negative means no limit.
	PidsLimit int64
	// TermGrace is how long a job's processes have after SIGTERM before
	// they are killed; it is capped at half the job's cleanup budget.
	// Default [DefaultTermGrace].
	TermGrace time.Duration
	// Logger receives the operator's log: handshake refusals, crashes with
	// the worker's stderr, cleanups that escalated or failed. Default
	// slog.Default().
	Logger *slog.Logger
	// Spares is how many spare workers New keeps started and verified up
	// to their ready frame, so that an item does not wait for a worker's
	// start (docs/supervisor.md, "Spare workers"). Each is handed one item
	// and replaced after it. Zero (the default) keeps none: every item
	// starts a fresh worker. `toolhost serve` sets [DefaultSpares].
	Spares int
	// ScratchDir is the folder under which each item gets its own scratch
	// folder (<ScratchDir>/<instance>/item-<execution id>, mode 0700, the
	// instance named as the cgroup instances are), made before the
	// worker is handed the item and removed once its process tree is
	// confirmed gone, whatever the outcome. The worker's engines keep
	// every temporary file there (native.Context.ScratchDir; the worker's
	// TMPDIR points at it). New removes the instance folders of processes
	// that are gone (a crashed server's). Default: toolhost-scratch in
	// os.TempDir();
	// `toolhost serve` uses <data>/scratch.
	ScratchDir string
}

// DefaultSpares is the Spares of `toolhost serve` (--spare-workers): one
// per default executor lane.
const DefaultSpares = 2

// withDefaults validates c and fills its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Args == nil {
		c.Args = []string{"worker"}
	}
	for i, e := range c.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return c, fmt.Errorf("%w: Env[%d] is not KEY=value", ErrConfig, i)
		}
	}
	if c.CgroupParent == "" {
		c.CgroupParent = DefaultCgroupParent
	}
	if strings.ContainsRune(c.CgroupParent, 0) {
		return c, fmt.Errorf("%w: CgroupParent holds a NUL byte", ErrConfig)
	}
	switch c.MemoryMode {
	case "", engine.MemoryCgroupV2Hard, engine.MemoryCgroupV1Hard, engine.MemoryProcessTreeObserved, engine.MemoryUnavailable:
	default:
		return c, fmt.Errorf("%w: MemoryMode %q is not a native memory mode", ErrConfig, c.MemoryMode)
	}
	if c.PidsLimit == 0 {
		c.PidsLimit = DefaultPidsLimit
	}
	switch {
	case c.TermGrace < 0:
		return c, fmt.Errorf("%w: TermGrace is negative", ErrConfig)
	case c.TermGrace == 0:
		c.TermGrace = DefaultTermGrace
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Spares < 0 {
		return c, fmt.Errorf("%w: Spares is negative", ErrConfig)
	}
	if c.ScratchDir == "" {
		c.ScratchDir = filepath.Join(os.TempDir(), "toolhost-scratch")
	}
	if !filepath.IsAbs(c.ScratchDir) {
		abs, err := filepath.Abs(c.ScratchDir)
		if err != nil {
			return c, fmt.Errorf("%w: ScratchDir: %v", ErrConfig, err)
		}
		c.ScratchDir = abs
	}
	return c, nil
}

// Supervisor runs items of native packages in worker processes it owns
// from spawn to confirmed cleanup. It is safe for concurrent use; each
// item is its own worker.
type Supervisor struct {
	cfg    Config
	log    *slog.Logger
	mode   string
	sys    *host      // the platform's machinery; nil when no job can run
	spares *sparePool // nil without spares
	// scratch is this supervisor's folder of item scratch folders:
	// <Config.ScratchDir>/<instance>, made with the first item.
	scratch string
	// freshWorkers counts the items that started a fresh worker.
	freshWorkers atomic.Uint64
	// removing tracks the removals of emptied job cgroups (removeEmpty);
	// removeFailures counts those that failed.
	removing       sync.WaitGroup
	removeFailures atomic.Uint64

	mu          sync.Mutex
	closed      bool
	active      int
	running     map[uint64]context.CancelFunc
	nextJob     uint64
	unconfirmed int
	drained     chan struct{}
	drainOnce   sync.Once
	released    bool
	releaseErr  error
}

// New returns a Supervisor: it detects the memory mode (or checks the
// forced one) and reaps the job cgroups that a previous run of the server
// left behind, killing whatever still runs in them. With Config.Spares it
// starts that many spare workers in the background; otherwise it starts
// no worker.
func New(cfg Config) (*Supervisor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Supervisor{
		cfg:     cfg,
		log:     cfg.Logger,
		running: map[uint64]context.CancelFunc{},
		drained: make(chan struct{}),
	}
	if err := s.setup(); err != nil {
		return nil, err
	}
	if cfg.Spares > 0 && s.sys != nil {
		s.spares = newSparePool(s, cfg.Spares)
	}
	return s, nil
}

// Stats are a supervisor's counters and gauges at one instant, for
// diagnostics and metrics. The counters start at zero with New.
type Stats struct {
	// Jobs is the number of items running now.
	Jobs int `json:"jobs"`
	// Spares is Config.Spares: how many spare workers are kept.
	Spares int `json:"spares"`
	// SparesReady are started, verified and idle; SparesStarting are
	// between their spawn and their ready frame.
	SparesReady    int `json:"spares_ready"`
	SparesStarting int `json:"spares_starting"`
	// SparesStarted counts the spare workers spawned; SparesReplaced the
	// ones of them spawned to take the place of a spare used, lost or
	// failed (all but the first Spares).
	SparesStarted  uint64 `json:"spares_started"`
	SparesReplaced uint64 `json:"spares_replaced"`
	// SparesUsed counts the items handed to a spare.
	SparesUsed uint64 `json:"spares_used"`
	// SparesLost counts the spares that died while idle or were found
	// unusable when an item took them (killed from outside); none of them
	// was handed an item.
	SparesLost uint64 `json:"spares_lost"`
	// SparesFailed counts the spares that did not start: a failed spawn,
	// a ready frame refused or missing.
	SparesFailed uint64 `json:"spares_failed"`
	// FreshWorkers counts the items that found no spare ready (or spares
	// off) and started a fresh worker.
	FreshWorkers uint64 `json:"fresh_workers"`
	// SpareMemoryBytes is the resident memory of the ready spares, read
	// from /proc now. They are charged to the server's own cgroup until an
	// item takes one into its job cgroup.
	SpareMemoryBytes int64 `json:"spare_memory_bytes"`
	// CgroupRemovalsFailed counts the emptied job cgroups whose removal
	// failed (they hold no process; Close, or the next start, removes
	// them).
	CgroupRemovalsFailed uint64 `json:"cgroup_removals_failed"`
	// JobCgroups is the number of job cgroups this supervisor has now, as
	// the kernel lists them: one per running item and per placed spare,
	// and emptied ones whose removal is in progress or failed. 0 without
	// cgroups (process_tree_observed, unavailable).
	JobCgroups int `json:"job_cgroups"`
}

// Stats returns the supervisor's counters. It is safe to call at any
// time, from any goroutine; it reads /proc once per ready spare and the
// instance's cgroup directory once.
func (s *Supervisor) Stats() Stats {
	var st Stats
	s.mu.Lock()
	st.Jobs = s.active
	s.mu.Unlock()
	st.JobCgroups = s.sys.jobCgroups()
	st.FreshWorkers = s.freshWorkers.Load()
	st.CgroupRemovalsFailed = s.removeFailures.Load()
	s.spares.stats(&st)
	return st
}

// MemoryMode returns the memory enforcement mode of this supervisor's
// jobs: engine.MemoryCgroupV2Hard, MemoryCgroupV1Hard,
// MemoryProcessTreeObserved or MemoryUnavailable (no native job can run).
func (s *Supervisor) MemoryMode() string { return s.mode }

// Close shuts the supervisor down: it refuses new items
// (service_unavailable), cancels the running ones, whose Run kills their
// whole process tree and confirms it gone, reaps the spare workers and
// confirms them gone, waits for all of it within ctx, and removes this
// process's cgroups. It returns ErrUnconfirmed when a job or a spare was
// still running when ctx ended or when any cleanup failed. It is safe to
// call more than once.
func (s *Supervisor) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, cancel := range s.running {
		cancel()
	}
	if s.active == 0 {
		s.drainOnce.Do(func() { close(s.drained) })
	}
	s.mu.Unlock()
	sparesErr := s.spares.close(ctx)
	select {
	case <-s.drained:
	case <-ctx.Done():
		s.mu.Lock()
		n := s.active
		s.mu.Unlock()
		return errors.Join(fmt.Errorf("%w: %d jobs still running", ErrUnconfirmed, n), sparesErr)
	}
	if sparesErr != nil {
		return sparesErr
	}
	s.removing.Wait()
	if s.scratch != "" {
		// Every item's own folder is gone already; this removes the
		// instance folder.
		if err := os.RemoveAll(s.scratch); err != nil {
			s.log.Error("supervisor: removing the scratch folder", "error", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.released {
		// Retried by a later Close while it fails: a job cgroup left by
		// an unconfirmed cleanup keeps the instance directory.
		s.releaseErr = s.release()
		s.released = s.releaseErr == nil
	}
	if s.unconfirmed > 0 {
		return errors.Join(fmt.Errorf("%w: %d jobs", ErrUnconfirmed, s.unconfirmed), s.releaseErr)
	}
	return s.releaseErr
}

// enter registers a job: it returns its context, which Close cancels, and
// false after Close.
func (s *Supervisor) enter(ctx context.Context) (context.Context, func(), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false
	}
	s.active++
	id := s.nextJob
	s.nextJob++
	ctx, cancel := context.WithCancel(ctx)
	s.running[id] = cancel
	return ctx, func() {
		cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.running, id)
		s.active--
		if s.closed && s.active == 0 {
			s.drainOnce.Do(func() { close(s.drained) })
		}
	}, true
}

// quarantined counts a job whose cleanup was not confirmed.
func (s *Supervisor) quarantined() {
	s.mu.Lock()
	s.unconfirmed++
	s.mu.Unlock()
}

// Runner returns the Runner of pkg's services: each Run is one item in a
// worker process of its own, a spare or a fresh one, never reused. The worker finds pkg by its Name among the
// packages its WorkerMain was given, so the binary's worker entry point
// must list the same packages. A declaration that does not decode makes
// every item tool_unavailable (the registry refuses it first).
func (s *Supervisor) Runner(pkg *native.Package) engine.Runner {
	r := &runner{s: s, pkg: pkg, services: map[string]*service{}}
	if pkg == nil || pkg.Compute == nil {
		r.err = fmt.Errorf("%w: a nil package or Compute", ErrConfig)
		return r
	}
	decl, err := tooldef.Decode(pkg.Declaration, tooldef.Options{})
	if err != nil {
		r.err = err
		return r
	}
	for _, d := range decl.Services {
		if d.Definition == nil {
			continue
		}
		out, err := schema.Compile(d.Definition.OutputSchema)
		if err != nil {
			continue
		}
		r.services[d.Definition.ToolCode] = &service{def: d.Definition, output: out}
	}
	return r
}

// runner runs the items of one native package.
type runner struct {
	s        *Supervisor
	pkg      *native.Package
	err      error
	services map[string]*service
}

// service is one usable service of a runner's package, as the supervisor
// decoded it: the pins it sends, the validator it re-checks results with.
type service struct {
	def    *tooldef.Definition
	output *schema.Validator
}

// Run runs job in a worker of its own (a spare when one is ready): see the
// package documentation for the protocol, the outcomes and the cleanup. It returns only once the
// worker's whole process tree is confirmed gone, or with cleanup_failed.
func (r *runner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	if r.err != nil {
		r.s.log.Error("supervisor: package cannot run", "package", r.pkgName(), "error", r.err)
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	svc, ok := r.services[job.ToolCode]
	if !ok {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if !slices.Contains(svc.def.OperationNames(), job.Operation.Name) {
		r.s.log.Error("supervisor: job names an undeclared operation",
			"tool_code", job.ToolCode, "operation", job.Operation.Name, "execution_id", job.ExecutionID)
		return nil, toolerr.New(toolerr.ExecutionFailed)
	}
	if r.s.sys == nil {
		// No way to own a process tree here (no Linux, no /proc): the
		// platform's one non-retryable service_unavailable.
		return nil, toolerr.Raised(toolerr.ServiceUnavailable, false)
	}
	ctx, leave, ok := r.s.enter(ctx)
	if !ok {
		return nil, toolerr.New(toolerr.ServiceUnavailable)
	}
	defer leave()
	scratch, err := r.s.makeScratch(job.ExecutionID)
	if err != nil {
		r.s.log.Error("supervisor: making the item's scratch folder", "execution_id", job.ExecutionID, "error", err)
		return nil, toolerr.New(toolerr.ServiceUnavailable)
	}
	// Removed after the worker's whole tree is confirmed gone (or its
	// cleanup given up on): every exit path of the item passes here.
	defer r.s.removeScratch(job.ExecutionID, scratch)
	now := time.Now()
	if job.Hard.IsZero() {
		job.Hard = now.Add(time.Duration(job.Operation.HardTimeoutMS) * time.Millisecond)
	}
	if job.Soft.IsZero() {
		job.Soft = now.Add(time.Duration(job.Operation.SoftTimeoutMS) * time.Millisecond)
	}
	return r.s.run(ctx, r.pkg.Name, svc, job, scratch)
}

// makeScratch makes the scratch folder of execution id, owned by the item
// alone (0700), in this supervisor's instance folder under
// Config.ScratchDir.
func (s *Supervisor) makeScratch(id string) (string, error) {
	root := s.scratch
	if root == "" {
		root = s.cfg.ScratchDir
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	dir := filepath.Join(root, "item-"+id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// removeScratch removes an item's scratch folder and all it holds; a
// failure is logged (the folder may hold the caller's data).
func (s *Supervisor) removeScratch(id, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		s.log.Error("supervisor: removing the item's scratch folder", "execution_id", id, "error", err)
	}
}

func (r *runner) pkgName() string {
	if r.pkg == nil {
		return ""
	}
	return r.pkg.Name
}

var _ engine.Runner = (*runner)(nil)

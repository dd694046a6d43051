package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/engines/pages"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// ToolsConfig configures the tool side of a process ([OpenTools]): what
// `serve` publishes and what the one-shot commands (`run`, `list`,
// `export`, `check`) see. The zero value of every field is a usable
// default.
type ToolsConfig struct {
	// Dir is the drop-in folder of tool modules; empty for none (only the
	// builtins are published).
	Dir string
	// CacheDir is where compiled modules are cached; empty for none.
	CacheDir string
	// Platform is the platform policy; zero means policy.DefaultPlatform().
	Platform policy.Platform
	// Natives are the native tool packages compiled into the binary
	// (engines.Packages() in the binary). They run in worker processes of
	// a supervisor configured by Supervisor (its Logger is this Config's);
	// with none, no supervisor is started.
	Natives    []*native.Package
	Supervisor supervisor.Config
	// ProbeAllow is the operator's allow-list of the network probes
	// (netprobe.AllowEnv), passed to the native workers.
	ProbeAllow string
	// Loading bounds how the folder's modules load. Its Wait is the
	// registry's LoadWait: zero waits for every load (each ends by its
	// phase deadlines); [New] sets [DefaultLoadWait] instead.
	Loading LoadingConfig
	// Rescan and Settle tune the live folder (registry.Config).
	Rescan, Settle time.Duration
	// Static turns the live folder off (no watcher, no rescan), for
	// one-shot commands.
	Static bool
	// Tiered serves a module whose optimised code is not in the cache
	// from wazero's interpreter at once, and swaps the optimised code in
	// when its compile in the background ends (wasmtool.Config.Tiered,
	// docs/host.md "Tiered start"). [New] sets it; the one-shot commands
	// do not, so that what they compile fills the cache.
	Tiered bool
	// Logger receives the operator's log. Default slog.Default().
	Logger *slog.Logger
	// LogLevel is the WASM tools' log level (host.Config.LogLevel);
	// the zero value is slog.LevelInfo.
	LogLevel slog.Level
}

// Tools is the tool side of a process, composed once for `serve` and for
// the command line: the WASM host runtime, the loader of the tools
// folder's modules, the supervisor of the native packages' workers (nil
// without natives), and the registry over the folder, the native packages
// and the page-only tools (internal/engines/pages). Its fields are owned by
// Tools: release them with Close, not one by one.
type Tools struct {
	Runtime    *host.Runtime
	Loader     *wasmtool.Loader
	Supervisor *supervisor.Supervisor
	Registry   *registry.Registry
}

// OpenTools composes the tools: it opens the runtime and the loader, starts
// the supervisor when there are natives, and opens the registry, which runs
// the first discovery (waiting for loads as cfg.Loading.Wait says). Every
// builtin is registered as the server registers it: the page-only tools
// (listed, never run) and each native package, published unavailable when
// its engine is missing. On an error it closes what it opened.
func OpenTools(ctx context.Context, cfg ToolsConfig) (_ *Tools, err error) {
	if cfg.Platform == (policy.Platform{}) {
		cfg.Platform = policy.DefaultPlatform()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// An allow-list that does not parse would fail every probe item:
	// refuse it here, naming the entry.
	if _, err := netprobe.ParseAllowList(cfg.ProbeAllow); err != nil {
		return nil, fmt.Errorf("reading the probes' allow-list: %w", err)
	}
	t := &Tools{}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.Close(context.Background()))
		}
	}()
	if t.Runtime, err = host.NewRuntime(ctx, host.Config{CacheDir: cfg.CacheDir, LogLevel: cfg.LogLevel,
		MaxInterpretedBytes: cfg.Loading.InterpretedBytes}); err != nil {
		return nil, fmt.Errorf("opening the WASM runtime: %w", err)
	}
	ld := cfg.Loading
	if t.Loader, err = wasmtool.NewLoader(t.Runtime, wasmtool.Config{Platform: cfg.Platform,
		ReadTimeout: ld.Read, InstrumentTimeout: ld.Instrument, CompileTimeout: ld.Compile,
		ImageTimeout: ld.Image, DescribeTimeout: ld.Describe, MaxLoads: ld.MaxLoads, Tiered: cfg.Tiered}); err != nil {
		return nil, fmt.Errorf("opening the module loader: %w", err)
	}
	// The page-only tools are listed, never run (ADR-027).
	builtins := []registry.Builtin{{Name: pages.Name, Declaration: pages.Declaration(), Runner: pages.Runner{}}}
	if len(cfg.Natives) > 0 {
		sc := cfg.Supervisor
		sc.Logger = cfg.Logger
		if cfg.ProbeAllow != "" {
			sc.Env = append(slices.Clip(sc.Env), netprobe.AllowEnv+"="+cfg.ProbeAllow)
		}
		if t.Supervisor, err = supervisor.New(sc); err != nil {
			return nil, fmt.Errorf("starting the supervisor: %w", err)
		}
		for _, p := range cfg.Natives {
			builtins = append(builtins, registry.Builtin{
				Name: p.Name, Declaration: p.Declaration, Runner: t.Supervisor.Runner(p),
				MissingEngines: p.MissingEngines(),
			})
		}
	}
	if t.Registry, err = registry.Open(ctx, registry.Config{
		Dir: cfg.Dir, Loader: t.Loader, Platform: cfg.Platform, Builtins: builtins,
		Interval: cfg.Rescan, Settle: cfg.Settle, Static: cfg.Static, Logger: cfg.Logger,
		LoadWait: ld.Wait, BatchWait: ld.BatchWait,
		// A module's compile frees many times what it keeps, and the
		// runtime's scavenger returns that only slowly (releaseLoadingHeap).
		PromotionsIdle: debug.FreeOSMemory,
	}); err != nil {
		return nil, err
	}
	return t, nil
}

// MemoryMode is the memory enforcement of the native jobs: the
// supervisor's mode, or engine.MemoryUnavailable without natives.
func (t *Tools) MemoryMode() string {
	if t.Supervisor == nil {
		return engine.MemoryUnavailable
	}
	return t.Supervisor.MemoryMode()
}

// Close releases the tools in reverse order within ctx: the supervisor
// (killing what still runs), the registry (abandoning loads still
// running), the loader's abandoned work, the runtime. A process that runs
// items through an executor shuts the executor down first. It is safe to
// call more than once, and after a failed OpenTools.
func (t *Tools) Close(ctx context.Context) error {
	var errs []error
	if t.Supervisor != nil {
		errs = append(errs, t.Supervisor.Close(ctx))
	}
	if t.Registry != nil {
		errs = append(errs, t.Registry.Close(ctx))
	}
	if t.Loader != nil {
		// Abandoned work (a compile wazero cannot interrupt) gets until
		// ctx ends before the runtime closes under it.
		if err := t.Loader.Wait(ctx); err != nil {
			errs = append(errs, fmt.Errorf("closing the loader: %w", err))
		}
	}
	if t.Runtime != nil {
		errs = append(errs, t.Runtime.Close(ctx))
	}
	return errors.Join(errs...)
}

package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/toolhost/toolhost/host/internal/switches"
)

// Config configures a [Runtime]: what an embedder sets. The zero value is
// usable: no compilation cache on disk, memory capped at 1 GiB per
// instance, the default module limits.
type Config struct {
	// CacheDir, when set, holds compiled modules so that a restart does not
	// recompile. It is created if missing.
	CacheDir string
	// MaxMemoryBytes caps any instance's linear memory, whatever a call's
	// Limits say. Default [DefaultMemoryBytes].
	MaxMemoryBytes uint64
	// IdleInstances bounds the reset instances kept per module. Zero
	// means one per processor, at least two.
	IdleInstances int
	// LogLevel is the level a guest's get_log_level reports, in the Extism
	// encoding (below Debug is trace, then debug, info, warn, error); a
	// log_* call below it is dropped unread. Default (the zero value)
	// slog.LevelInfo.
	LogLevel slog.Level
	// MaxInterpretedBytes bounds the memory the interpreter tier holds at
	// once (docs/host.md, "Tiered start"), estimated at
	// [InterpretedBytesPerModuleByte] per byte of each module served from
	// it: a module loaded under [WithTiering] whose estimate does not fit
	// beside the modules already on the interpreter is compiled with the
	// optimising compiler at once, as without tiering. Zero means
	// [DefaultMaxInterpretedBytes]; negative, no bound.
	MaxInterpretedBytes int64
	// ModuleLimits are the structure limits [Runtime.Load] checks before
	// it compiles a module. The zero value is the defaults.
	ModuleLimits ModuleLimits
}

// DefaultMaxInterpretedBytes is the default [Config.MaxInterpretedBytes]:
// room for one or two of the bundled modules on the interpreter at once.
const DefaultMaxInterpretedBytes = 128 << 20

// InterpretedBytesPerModuleByte is how much memory wazero's interpreter
// holds per byte of the module it compiled: its lowered code for every
// function, about 22 bytes per module byte for the Go guests measured
// (811 MB of lowered code for the 37 MB of the seven bundled modules,
// docs/performance.md), rounded up.
const InterpretedBytesPerModuleByte = 24

// Runtime compiles and runs tool modules. It is safe for concurrent use.
// Close releases it; modules loaded from it stop working.
type Runtime struct {
	cfg      Config
	switches switches.Switches // hosttest's, for tests and measurements
	wazero   wazero.Runtime
	allowed  map[string]map[string]signature // import module → function name → type
	logLevel int32                           // Config.LogLevel, in the Extism encoding

	counters instanceCounters
	cache    cacheCounters

	// templates is the interpreter runtime the templates of
	// pre-initialisation run in (see templateRuntime), made on first use.
	templates     wazero.Runtime
	templatesErr  error
	templatesOnce sync.Once

	mu     sync.Mutex
	closed bool
	// interpreted is the estimated memory of the interpreter tiers
	// serving now (Config.MaxInterpretedBytes).
	interpreted int64
	images      []*memoryImage                  // stopped by Close with the runtime
	compiled    map[compiledKey]*sharedCompiled // by engine and module content; see compile
}

// track registers an image whose restorer Close must stop.
func (r *Runtime) track(img *memoryImage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		img.close()
		return
	}
	r.images = append(r.images, img)
}

// NewRuntime creates a Runtime with the host functions of docs/guest-abi.md.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.MaxMemoryBytes == 0 {
		cfg.MaxMemoryBytes = DefaultMemoryBytes
	}
	if cfg.ModuleLimits.MaxTableElements == 0 {
		cfg.ModuleLimits.MaxTableElements = 100_000
	}
	if cfg.MaxInterpretedBytes == 0 {
		cfg.MaxInterpretedBytes = DefaultMaxInterpretedBytes
	}
	rc := wazero.NewRuntimeConfigCompiler().
		// A running guest is interrupted through the instrumented stop
		// global (Module.Call), not by wazero's per-loop check, which
		// costs a call at every loop iteration.
		WithCloseOnContextDone(false).
		WithMemoryLimitPages(uint32(min(cfg.MaxMemoryBytes>>16, 65536)))
	if cfg.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("opening compilation cache %s: %w", cfg.CacheDir, err)
		}
		rc = rc.WithCompilationCache(cache)
	}
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	rt := &Runtime{cfg: cfg, switches: switches.From(ctx), wazero: r, allowed: hostFuncSignatures(), logLevel: extismLevel(cfg.LogLevel)}
	if err := instantiateHostModule(ctx, r, ExtismModule, extismFuncs); err != nil {
		return nil, errors.Join(fmt.Errorf("instantiating %s: %w", ExtismModule, err), r.Close(ctx))
	}
	if err := instantiateHostModule(ctx, r, ToolhostModule, toolhostFuncs); err != nil {
		return nil, errors.Join(fmt.Errorf("instantiating %s: %w", ToolhostModule, err), r.Close(ctx))
	}
	wasi, err := instantiateWASI(ctx, r)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("instantiating WASI: %w", err), r.Close(ctx))
	}
	rt.allowed[WASIModule] = wasi
	return rt, nil
}

// Close releases the runtime and every module compiled in it. It is safe to
// call more than once.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	for _, img := range r.images {
		img.close()
	}
	r.images = nil
	r.templatesOnce.Do(func() {}) // none is made after Close
	var err error
	if r.templates != nil {
		err = r.templates.Close(ctx)
	}
	return errors.Join(err, r.wazero.Close(ctx))
}

// templateRuntime returns the runtime that a module's pre-initialisation
// template runs in: wazero's interpreter, with the same memory limit and
// host functions as the compiler runtime. The template runs a module's
// initialiser once, so an optimising compile of the instrumented module
// for it would be thrown away (seconds for a Go guest); the interpreter
// compiles it in a tenth of the time, and only the imaged module is
// compiled for the calls. The instrumented code, the host functions, the
// fuel, the clocks and the random source are the same in both engines, so
// the image is the one a compiled template would capture: the isolation,
// pool and bundled-tool tests run every imaged module this way.
func (r *Runtime) templateRuntime(ctx context.Context) (wazero.Runtime, error) {
	r.templatesOnce.Do(func() {
		rc := wazero.NewRuntimeConfigInterpreter().
			WithCloseOnContextDone(false).
			WithMemoryLimitPages(uint32(min(r.cfg.MaxMemoryBytes>>16, 65536)))
		t := wazero.NewRuntimeWithConfig(ctx, rc)
		for _, m := range []struct {
			name  string
			funcs []hostFunc
		}{{ExtismModule, extismFuncs}, {ToolhostModule, toolhostFuncs}} {
			if err := instantiateHostModule(ctx, t, m.name, m.funcs); err != nil {
				r.templatesErr = errors.Join(fmt.Errorf("instantiating %s for templates: %w", m.name, err), t.Close(ctx))
				return
			}
		}
		if _, err := instantiateWASI(ctx, t); err != nil {
			r.templatesErr = errors.Join(fmt.Errorf("instantiating WASI for templates: %w", err), t.Close(ctx))
			return
		}
		r.templates = t
	})
	if r.templates == nil && r.templatesErr == nil {
		return nil, ErrClosed
	}
	return r.templates, r.templatesErr
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

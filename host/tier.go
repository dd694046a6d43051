package host

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// Tiered start.
//
// wazero's optimising compiler takes seconds for a Go guest (3–7 s for a
// bundled module on the 2-core VM of DESIGN.md), its interpreter a tenth
// of that. A module loaded under [WithTiering] whose optimised code is not
// known to be in the compilation cache is compiled in the interpreter
// first and served from there at once; [Module.Optimise] then compiles the
// same bytes with the optimising compiler and swaps them in.
//
// Both tiers run the same module — the instrumented (and, when imaged,
// pre-initialised) bytes — with the same host functions, fuel, memory
// allocator, image, clocks, random source and caps: the fuel is counted by
// the module's own code, so an item uses exactly the same fuel on either
// tier and gives the same result (TestTiersAgree).
//
// The swap is one pointer under Module.tierMu. A call takes the tier
// current when it starts and holds it (tier.refs) until it ends, so an
// item started on the interpreter finishes there while every later item
// gets the compiled tier; the retired tier's idle instances are closed at
// the swap, and its compiled code once its last call has ended. Nothing
// else about the module changes: its exports, image and pool settings are
// the same, so its callers (the registry's snapshot) see one module.

// The tiers a module is served from ([Module.Tier]).
const (
	// TierInterpreter serves a module from wazero's interpreter while its
	// optimised compile has not been swapped in.
	TierInterpreter = "interpreter"
	// TierCompiled serves a module from wazero's optimising compiler.
	TierCompiled = "compiled"
)

// tier is one compiled form of a module and the calls running on it.
type tier struct {
	name     string // TierInterpreter or TierCompiled
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	release  func(context.Context) error // lets go of compiled (shared; see Runtime.compile)
	pool     *instancePool               // nil when every call gets a fresh instance

	// Guarded by Module.tierMu.
	refs    int  // calls running on it
	retired bool // no new call takes it; closed once refs is 0
}

// close closes the tier's idle instances and releases its compiled code.
// The tier is retired and no call runs on it.
func (t *tier) close(ctx context.Context) error {
	if t.pool != nil {
		t.pool.close()
	}
	return t.release(ctx)
}

type tieringKey struct{}

// WithTiering returns a context under which [Runtime.Load] serves a module
// from wazero's interpreter unless its optimised code is already in the
// compilation cache ([Config.CacheDir]); the caller then calls
// [Module.Optimise] to compile and swap in the optimised tier. Without it,
// or when the optimised code is cached, Load compiles the module with the
// optimising compiler as before.
func WithTiering(ctx context.Context) context.Context {
	return context.WithValue(ctx, tieringKey{}, true)
}

func tieringFrom(ctx context.Context) bool {
	v, _ := ctx.Value(tieringKey{}).(bool)
	return v
}

// Tier reports which tier serves the module's new calls: [TierInterpreter]
// until [Module.Optimise] has swapped in the optimised code, then
// [TierCompiled].
func (m *Module) Tier() string {
	m.tierMu.Lock()
	defer m.tierMu.Unlock()
	return m.cur.name
}

// Optimise compiles the module with wazero's optimising compiler and swaps
// the result in for the calls that start from then on; calls running on
// the interpreter tier finish there. It returns nil at once for a module
// already on [TierCompiled]. When ctx ends before the compile does (wazero
// cannot interrupt it), or the module is closed meanwhile, the compiled
// code is released and the module stays on the interpreter; a failed
// compile wraps [ErrModule] and leaves the interpreter serving too. It is
// safe for concurrent use: a second call waits for the first.
func (m *Module) Optimise(ctx context.Context) error {
	m.optimiseMu.Lock()
	defer m.optimiseMu.Unlock()
	m.tierMu.Lock()
	closed, name, final := m.closed, m.cur.name, m.final
	m.tierMu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case name == TierCompiled:
		return nil
	}
	compiled, release, err := m.rt.compile(withYieldListener(ctx, m.info), final)
	if err != nil {
		return fmt.Errorf("%w: compiling: %w", ErrModule, err)
	}
	if err := ctx.Err(); err != nil {
		return errors.Join(fmt.Errorf("compiling the optimised tier: %w", err), release(context.Background()))
	}
	m.rt.markCompiled(final, m.info)
	t := &tier{name: TierCompiled, rt: m.rt.wazero, compiled: compiled, release: release}
	if m.pooled {
		t.pool = m.newPool()
	}
	m.tierMu.Lock()
	if m.closed {
		m.tierMu.Unlock()
		return errors.Join(ErrClosed, t.close(context.Background()))
	}
	old := m.cur
	m.cur, m.final = t, nil
	old.retired = true
	idle := old.refs == 0
	m.tierMu.Unlock()
	// The idle interpreted instances go now; those in use are closed
	// when their calls end (the pool is closed), and the interpreted
	// code after the last of them.
	if old.pool != nil {
		old.pool.close()
	}
	if idle {
		old.close(context.Background()) //nolint:errcheck // the swap is done: the old tier's release frees memory only, and Optimise succeeded
	}
	return nil
}

// takeTier returns the tier a call starting now runs on, counted until
// dropTier.
func (m *Module) takeTier() *tier {
	m.tierMu.Lock()
	defer m.tierMu.Unlock()
	m.cur.refs++
	return m.cur
}

// dropTier ends a call on t, closing a retired tier after its last call.
func (m *Module) dropTier(t *tier) {
	m.tierMu.Lock()
	t.refs--
	last := t.retired && t.refs == 0
	m.tierMu.Unlock()
	if last {
		t.close(context.Background()) //nolint:errcheck // the retired tier's release frees memory only, and the call that ended has nowhere to report it
	}
}

// firstTier compiles final, the bytes the module's calls run, for Load:
// in the interpreter when tiered and its optimised code is not known to be
// cached (the module then keeps final for Optimise), with the optimising
// compiler otherwise.
func (m *Module) firstTier(ctx context.Context, final []byte, info instrument.Info, tiered bool) (*tier, error) {
	r := m.rt
	m.info = info
	known := r.knownCompiled(final, info)
	if r.cfg.CacheDir != "" {
		count(known, &r.cache.codeHits, &r.cache.codeMisses)
	}
	if tiered && !known {
		if unreserve, ok := r.reserveInterpreted(len(final)); ok {
			compiled, release, err := r.interpret(withYieldListener(ctx, info), final)
			if err != nil {
				unreserve()
				return nil, err
			}
			rt, _ := r.templateRuntime(ctx) // made by interpret
			m.final = final
			return &tier{name: TierInterpreter, rt: rt, compiled: compiled, release: func(ctx context.Context) error {
				defer unreserve()
				return release(ctx)
			}}, nil
		}
	}
	compiled, release, err := r.compile(withYieldListener(ctx, info), final)
	if err != nil {
		return nil, err
	}
	r.markCompiled(final, info)
	return &tier{name: TierCompiled, rt: r.wazero, compiled: compiled, release: release}, nil
}

// reserveInterpreted reserves the estimated memory of an interpreter tier
// for a module of n bytes (Config.MaxInterpretedBytes) and returns what
// gives it back, once; false when it does not fit beside the interpreter
// tiers serving now. Without a bound every reservation fits.
func (r *Runtime) reserveInterpreted(n int) (func(), bool) {
	limit := r.cfg.MaxInterpretedBytes
	est := int64(n) * InterpretedBytesPerModuleByte
	r.mu.Lock()
	defer r.mu.Unlock()
	if limit >= 0 && r.interpreted+est > limit {
		return nil, false
	}
	r.interpreted += est
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.interpreted -= est
			r.mu.Unlock()
		})
	}, true
}

// Interpreted is the estimated memory of the interpreter tiers serving
// now, which [Config.MaxInterpretedBytes] bounds.
func (r *Runtime) Interpreted() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.interpreted
}

// Which modules the compilation cache holds.
//
// wazero's file cache names an entry by a hash of the module's bytes, its
// function listeners and the CPU's features, which wazero does not expose.
// So the runtime keeps its own record: after an optimising compile with a
// cache folder, an empty marker file in CacheDir/tiers named by the
// module's bytes, the yield listener's function, wazero's version and the
// platform. A marker says "warm": Load then compiles with the optimising
// compiler at once (a read of the cache) instead of starting in the
// interpreter. A marker whose entry was evicted from wazero's cache only
// costs that load the optimising compile; a cached module without a marker
// (compiled by an older build) starts in the interpreter and is swapped
// out a moment later, when Optimise reads the cache.

// tierCacheDir is the markers' folder under Config.CacheDir.
const tierCacheDir = "tiers"

// tierMarkerVersion changes whenever what a marker stands for does.
const tierMarkerVersion = "toolhost-tier-1"

// wazeroVersion is the version of wazero this binary was built with, as
// wazero names its cache folder after it.
var wazeroVersion = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.Contains(dep.Path, "github.com/tetratelabs/wazero") {
				return dep.Version
			}
		}
	}
	return "dev"
})

// markerPath is the marker of final's optimised code, or "" without a
// cache folder.
func (r *Runtime) markerPath(final []byte, info instrument.Info) string {
	if r.cfg.CacheDir == "" {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{tierMarkerVersion, wazeroVersion(), goruntime.GOARCH, goruntime.GOOS} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(info.MeteredFunctions)))
	h.Write(final)
	return filepath.Join(r.cfg.CacheDir, tierCacheDir, hex.EncodeToString(h.Sum(nil)))
}

// knownCompiled reports whether final's optimised code is marked as being
// in the compilation cache.
func (r *Runtime) knownCompiled(final []byte, info instrument.Info) bool {
	p := r.markerPath(final, info)
	if p == "" || r.switches.InterpretFirst {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// markCompiled records that final's optimised code is in the compilation
// cache. Errors are ignored: a missing marker costs a tiered start.
func (r *Runtime) markCompiled(final []byte, info instrument.Info) {
	p := r.markerPath(final, info)
	if p == "" {
		return
	}
	if _, err := os.Stat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		_ = os.WriteFile(p, nil, 0o644)
	}
}

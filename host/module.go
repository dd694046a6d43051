package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// MaxModuleBytes is the largest module Load accepts.
const MaxModuleBytes = 64 << 20

// startFuel is the fuel a module's start function runs on: the fuel global
// starts with it, before the host can set a call's budget. What the start
// function uses is then charged to the call.
const startFuel = 1_000_000_000

// Module is a loaded, instrumented and compiled tool module. It is safe
// for concurrent use: every [Module.Call] gets an instance of its own, a
// fresh one or an idle one reset to its pristine state (see pool.go).
type Module struct {
	rt             *Runtime
	exports        []string
	callable       map[string]bool // exports of type () -> i32
	minMemoryBytes uint64
	tableBytes     uint64       // the tables at their maxima (instrument.Info.TableBytes)
	initialize     bool         // exports _initialize, called before every export
	image          *memoryImage // set when instances start pre-initialised
	imageErr       error        // why a module with _initialize is not

	pooled         bool         // calls reuse reset instances (each tier has its pool)
	poolErr        error        // why not
	pristine       *memoryImage // what a pooled instance's memory is reset to
	mutableGlobals []string     // export names of the mutable defined globals

	// The tier serving new calls (tier.go), and what Optimise compiles.
	tierMu     sync.Mutex
	cur        *tier
	closed     bool
	final      []byte // the bytes the calls run, kept while on the interpreter
	info       instrument.Info
	optimiseMu sync.Mutex // serialises Optimise
}

// Load decodes, instruments and compiles a module, and checks that it
// imports only what the host provides. A refusal wraps [ErrModule],
// [ErrImport] or [ErrExport] and names what was wrong.
func (r *Runtime) Load(ctx context.Context, wasm []byte) (*Module, error) {
	return r.load(ctx, wasm, true)
}

// load is Load, with the load cache (loadcache.go) when cached is set;
// a warm load whose entries lead nowhere loads again without it.
func (r *Runtime) load(ctx context.Context, wasm []byte, cached bool) (*Module, error) {
	if r.isClosed() {
		return nil, ErrClosed
	}
	if len(wasm) > MaxModuleBytes {
		return nil, &LimitError{Limit: LimitModuleBytes, Value: uint64(len(wasm)), Max: MaxModuleBytes, Where: "module"}
	}
	opts := instrument.Options{
		ExportGlobals:              true,
		MaxTableElements:           r.cfg.ModuleLimits.MaxTableElements,
		MaxTotalTableElements:      r.cfg.ModuleLimits.MaxTotalTableElements,
		MaxTables:                  r.cfg.ModuleLimits.MaxTables,
		MaxFunctions:               r.cfg.ModuleLimits.MaxFunctions,
		MaxFunctionBrTableTargets:  r.cfg.ModuleLimits.MaxFunctionBrTableTargets,
		MaxBrTableTargets:          r.cfg.ModuleLimits.MaxBrTableTargets,
		MaxFunctionDominatorDepths: r.cfg.ModuleLimits.MaxFunctionDominatorDepths,
		MaxDominatorDepths:         r.cfg.ModuleLimits.MaxDominatorDepths,
		MaxLabelBranches:           r.cfg.ModuleLimits.MaxLabelBranches,
		MaxMemoryPages:             uint32(max(1, min(r.cfg.MaxMemoryBytes>>16, 65536))),
		InitialFuel:                startFuel,
	}
	enterPhase(ctx, PhaseInstrument)
	// A warm load of an imaged module finds what instrumenting it gave in
	// the load cache (loadcache.go) and compiles its cached image at once.
	loadPath := ""
	if !r.switches.NoPreinitialise {
		loadPath = r.loadCachePath(wasm, opts)
	}
	var (
		cachedLoad *loadEntry
		cachedImg  *cachedImage
		warm       bool
	)
	if cached && loadPath != "" {
		cachedLoad, cachedImg, warm = r.readLoadEntry(loadPath)
		count(warm, &r.cache.loadHits, &r.cache.loadMisses)
		if warm {
			count(true, &r.cache.imageHits, &r.cache.imageMisses)
		}
	}
	var (
		rewritten []byte
		info      instrument.Info
		err       error
	)
	if warm {
		info = cachedLoad.Info
	} else {
		rewritten, info, err = instrument.Rewrite(wasm, opts)
		if le := limitError(err); le != nil {
			return nil, le
		}
		if err != nil {
			return nil, fmt.Errorf("%w: instrumenting: %w", ErrModule, err)
		}
	}
	sigs, _ := importSignatures(wasm)
	if err := r.checkImports(info.Imports, sigs); err != nil {
		return nil, err
	}
	m := &Module{rt: r, tableBytes: info.TableBytes}
	// Under WithTiering, the first tier may be the interpreter's
	// (tier.go); either way one compile of the bytes the calls run.
	tiered := tieringFrom(ctx)
	build := func(ctx context.Context, final []byte) (*tier, error) { return m.firstTier(ctx, final, info, tiered) }
	// A module with an initialiser (a start section, _initialize) is
	// imaged: the initialiser runs once in a template, in the interpreter,
	// and only the imaged module is compiled (preinitialise). Otherwise,
	// or when it cannot be imaged, the instrumented module is compiled and
	// runs its initialiser in every call.
	initialize := slices.ContainsFunc(info.Exports, func(e instrument.Export) bool { return e.Name == "_initialize" && e.Kind == instrument.KindFunction })
	if (initialize || info.Start) && !r.switches.NoPreinitialise {
		enterPhase(ctx, PhaseImage)
		var p *preinitialised
		if warm {
			p, err = r.compileImage(ctx, wasm, opts, cachedImg, build)
		} else {
			p, err = r.preinitialise(ctx, wasm, rewritten, opts, info, initialize, build)
		}
		switch {
		case err == nil:
			m.cur, m.image = p.tier, p.image
			r.track(p.image)
			if !warm {
				writeLoadEntry(loadPath, loadEntry{Info: info, Image: imageCacheKey(rewritten)})
			}
		case warm && ctx.Err() != nil:
			// Out of time, not a bad entry: the cold path would fail the
			// same way, and the entry stays for the next load.
			return nil, fmt.Errorf("%w: compiling: %w", ErrModule, err)
		case warm:
			// The cached entries led nowhere: load as if cold.
			os.Remove(loadPath) //nolint:errcheck // best effort: the cold load writes the entry again
			return r.load(ctx, wasm, false)
		case errors.Is(err, ErrInitBudget): // its initialiser would not end in any call either
			return nil, fmt.Errorf("%w: %w", ErrModule, err)
		case errors.Is(err, ErrExport):
			return nil, err
		default:
			m.imageErr = err
		}
	}
	if m.cur == nil && warm {
		// An entry is only written for an imaged module: one that is
		// not imaged now was loaded another way; instrument it.
		os.Remove(loadPath) //nolint:errcheck // best effort: the entry is not read again this load
		return r.load(ctx, wasm, false)
	}
	if m.cur == nil {
		enterPhase(ctx, PhaseCompile)
		t, err := build(ctx, rewritten)
		if err != nil {
			return nil, fmt.Errorf("%w: compiling: %w", ErrModule, err)
		}
		m.cur = t
		if def, ok := t.compiled.ExportedFunctions()["_initialize"]; ok {
			if len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0 {
				return nil, errors.Join(fmt.Errorf("%w: _initialize must take and return nothing", ErrExport), t.release(ctx))
			}
			m.initialize = true
		}
	}
	compiled := m.cur.compiled
	for name := range compiled.ExportedFunctions() {
		m.exports = append(m.exports, name)
	}
	slices.Sort(m.exports)
	for _, mem := range compiled.ExportedMemories() {
		m.minMemoryBytes = uint64(mem.Min()) << 16
	}
	m.poolErr = m.pooling(ctx, info)
	// wazero builds its export map on every call: decide once what can be
	// called, here rather than on each item.
	m.callable = map[string]bool{}
	for name, def := range compiled.ExportedFunctions() {
		m.callable[name] = len(def.ParamTypes()) == 0 && slices.Equal(def.ResultTypes(), []api.ValueType{api.ValueTypeI32})
		if name == commandExport && len(def.ParamTypes()) == 0 && len(def.ResultTypes()) == 0 {
			m.callable[name] = true // a WASI command's main
		}
	}
	return m, nil
}

// newPool is a tier's pool of idle instances.
func (m *Module) newPool() *instancePool {
	return &instancePool{max: cmp.Or(m.rt.cfg.IdleInstances, defaultIdleInstances())}
}

// pooling gives m its instance pool, or returns why it has none.
func (m *Module) pooling(ctx context.Context, info instrument.Info) error {
	cfg := m.rt.cfg
	switch {
	case m.rt.switches.FreshInstances:
		return errors.New("the runtime makes a fresh instance for every call (hosttest.Switches.FreshInstances)")
	case info.Start && m.image == nil:
		return errors.New("the module has a start section, which runs once per instance")
	case m.initialize:
		return fmt.Errorf("the module runs _initialize on every call (%w)", m.imageErr)
	case len(info.StateOps) > 0:
		return fmt.Errorf("the module's code changes state a reset does not restore (%s)", strings.Join(info.StateOps, ", "))
	case m.image == nil && info.Memory != nil && uint64(info.Memory.Limits.Min)<<16 > maxPooledBytes:
		return fmt.Errorf("the module starts with %d bytes of memory and no image, over %d", uint64(info.Memory.Limits.Min)<<16, maxPooledBytes)
	}
	for _, g := range info.Globals {
		if g.Mutable && !g.Imported {
			if g.Export == "" {
				return fmt.Errorf("mutable global %d is not exported", g.Index)
			}
			if g.Type == instrument.ValueTypeV128 {
				// wazero's Global.Get and Set carry 64 bits: a reset
				// would give back only the low half.
				return fmt.Errorf("mutable global %d is a v128, which a reset cannot restore", g.Index)
			}
			m.mutableGlobals = append(m.mutableGlobals, g.Export)
		}
	}
	m.pristine = m.image
	if m.pristine == nil {
		// The memory as the data segments leave it, from an instance made
		// here: no start function runs, so nothing else does.
		s := &callState{ctx: ctx, limits: Limits{MemoryBytes: cfg.MaxMemoryBytes}.withDefaults(), log: boundedLog{max: DefaultLogBytes}}
		inst, err := m.instantiate(context.WithValue(ctx, callStateKey{}, s), s, m.cur, false)
		if err != nil {
			return fmt.Errorf("instantiating the module to capture its memory: %w", err)
		}
		var b []byte
		if inst.memory != nil {
			b = append([]byte(nil), inst.memory.buf...)
		}
		inst.close()
		m.pristine = newPristineImage(b)
	}
	m.pooled = true
	m.cur.pool = m.newPool()
	return nil
}

// Pooled reports whether calls reuse reset instances, and if not, why.
func (m *Module) Pooled() (bool, error) { return m.pooled, m.poolErr }

// Preinitialised reports whether calls start from a captured image instead
// of running _initialize, and if not, why (nil for a module without an
// initialiser).
func (m *Module) Preinitialised() (bool, error) { return m.image != nil, m.imageErr }

// checkImports refuses, before the module is compiled, imports the host
// does not provide: functions outside the three host modules or of
// another type than the host's (sigs, from importSignatures, is each
// import's type when it could be read), and any imported memory, table or
// global. The first one in the import section is named.
func (r *Runtime) checkImports(imports []instrument.Import, sigs []*signature) error {
	for i, im := range imports {
		mod, name := im.Module, im.Name
		switch im.Kind {
		case instrument.KindFunction:
			names, ok := r.allowed[mod]
			if !ok {
				return fmt.Errorf("%w: function %s.%s (module %q is not provided)", ErrImport, mod, name, mod)
			}
			want, ok := names[name]
			if !ok {
				return fmt.Errorf("%w: function %s.%s", ErrImport, mod, name)
			}
			if i < len(sigs) && sigs[i] != nil && !sigs[i].equal(want) {
				return fmt.Errorf("%w: function %s.%s has type %s, the host's is %s", ErrImport, mod, name, sigs[i], want)
			}
		case instrument.KindMemory:
			return fmt.Errorf("%w: memory %s.%s (a tool defines its own memory)", ErrImport, mod, name)
		case instrument.KindTable:
			return fmt.Errorf("%w: table %s.%s (a tool defines its own tables)", ErrImport, mod, name)
		case instrument.KindGlobal:
			return fmt.Errorf("%w: global %s.%s (the host provides no globals)", ErrImport, mod, name)
		default:
			return fmt.Errorf("%w: %s %s.%s", ErrImport, im.Kind, mod, name)
		}
	}
	return nil
}

// Exports returns the names of the module's exported functions, sorted.
func (m *Module) Exports() []string { return slices.Clone(m.exports) }

// commandExport is a WASI command module's entry point, main.
const commandExport = "_start"

// HasExport reports whether the module exports a function named name that
// takes nothing and returns one i32, the Extism plugin function shape, or
// is a WASI command's "_start", which takes and returns nothing (see
// [Module.CallItem]).
func (m *Module) HasExport(name string) bool { return m.callable[name] }

// Close closes the idle instances, releases the compiled module (once the
// calls running on it have ended) and stops its image restorer. A
// running Optimise then releases what it compiles. It is safe to call
// more than once.
func (m *Module) Close(ctx context.Context) error {
	m.tierMu.Lock()
	if m.closed {
		m.tierMu.Unlock()
		return nil
	}
	m.closed = true
	t := m.cur
	t.retired = true
	idle := t.refs == 0
	m.final = nil
	m.tierMu.Unlock()
	if t.pool != nil {
		t.pool.close()
	}
	if m.image != nil {
		m.image.close()
	}
	if m.pristine != nil && m.pristine != m.image {
		m.pristine.close()
	}
	if idle {
		return t.close(ctx)
	}
	return nil
}

// Item is one call: the export, its Extism input, its limits, and what
// the guest reads beyond its input.
type Item struct {
	Export string
	Input  []byte
	Limits Limits
	// Config is what config_get reads (the Extism manifest's config);
	// nil: every key is absent. The call only reads it.
	Config map[string]string
}

// Call runs export with input as the Extism input, under lim and with no
// configuration: [Module.CallItem] of that Item.
func (m *Module) Call(ctx context.Context, export string, input []byte, lim Limits) (*Result, error) {
	return m.CallItem(ctx, Item{Export: export, Input: input, Limits: lim})
}

// CallItem runs it.Export with it.Input as the Extism input and returns its
// output, on an instance with fresh state: an idle pooled instance reset
// to the module's pristine state, or a new instance (see [Module.Pooled]).
// The guest's variables (var_set) live as long as the call; config_get
// reads it.Config. Before CallItem returns, the instance is reset and
// kept, or closed. A failure is an *[Error] with a Code; a tool's own error
// (the export returned non-zero after error_set) has Raised set.
//
// A WASI command's "_start" runs main: its exit through proc_exit(0), or
// its return, is a success unless it set an error, which is then the
// tool's; any other exit code fails the item (the tool's error when it
// set one, execution_failed otherwise, the code in [Error.Detail]). Any
// other export that calls proc_exit ends the same way. An instance that
// exited is closed, never pooled.
//
// The hard deadline (and ctx) bounds the whole call: the module's start
// function and _initialize as well as the export. A guest is stopped at
// its next yield or host call once it has passed, wherever its time goes,
// and CallItem then returns at once.
func (m *Module) CallItem(ctx context.Context, it Item) (*Result, error) {
	if m.rt.isClosed() {
		return nil, ErrClosed
	}
	export, input := it.Export, it.Input
	lim := it.Limits.withDefaults()
	lim.MemoryBytes = min(lim.MemoryBytes, m.rt.cfg.MaxMemoryBytes)
	if !m.HasExport(export) {
		return nil, fail(CodeExecutionFailed, fmt.Errorf("%w: %s", ErrExport, export))
	}
	if lim.MaxInputBytes > 0 && len(input) > lim.MaxInputBytes {
		return nil, fail(CodeInputLimitExceeded, fmt.Errorf("input of %d bytes is over %d", len(input), lim.MaxInputBytes))
	}
	if m.minMemoryBytes+m.tableBytes > lim.MemoryBytes {
		return nil, fail(CodeMemoryLimit, fmt.Errorf("module needs %d bytes of memory and %d of tables to start, limit %d", m.minMemoryBytes, m.tableBytes, lim.MemoryBytes))
	}

	// The call's state holds the context that ends at the hard deadline:
	// host functions and the yield listener (fuel.go) watch it. The
	// context given to wazero need not carry the deadline, as nothing in
	// wazero watches it (WithCloseOnContextDone is off).
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if !lim.HardDeadline.IsZero() {
		callCtx, cancel = context.WithDeadline(ctx, lim.HardDeadline)
	}
	defer cancel()
	if err := callCtx.Err(); err != nil {
		return nil, stopped(callCtx, err)
	}
	s := &callState{ctx: callCtx, limits: lim, input: input, tableBytes: m.tableBytes, log: boundedLog{max: lim.MaxLogBytes},
		config: it.Config, logLevel: m.rt.logLevel}
	guestCtx := context.WithValue(ctx, callStateKey{}, s)

	start := time.Now()
	t := m.takeTier() // the call runs on the tier current now, to its end
	defer m.dropTier(t)
	inst, err := m.acquire(guestCtx, s, t)
	if err != nil {
		return nil, s.failure(err)
	}
	res, trapped, err := m.run(guestCtx, inst, s, export, start)
	m.putBack(t, inst, s, trapped)
	return res, err
}

// acquire returns the instance of tier t for the call s: an idle one bound
// to s, or a new one with the start function's fuel charged and
// _initialize run.
func (m *Module) acquire(ctx context.Context, s *callState, t *tier) (*instance, error) {
	if t.pool != nil {
		if inst := t.pool.get(); inst != nil {
			m.rt.counters.reused.Add(1)
			inst.bind(s)
			s.fuel.Set(uint64(s.limits.Fuel))
			s.notePeak() // the memory it holds, as a new instance's would count
			return inst, nil
		}
	}
	m.rt.counters.instantiated.Add(1)
	inst, err := m.instantiate(ctx, s, t, t.pool != nil)
	if err != nil {
		return nil, err
	}
	inst.bind(s)
	// Charge what the start function used, then give the rest.
	s.fuel.Set(uint64(s.limits.Fuel - (startFuel - int64(s.fuel.Get()))))
	if m.initialize {
		if _, err := inst.function("_initialize").Call(ctx); err != nil {
			inst.close()
			return nil, err
		}
	}
	return inst, nil
}

// run calls export on inst for the call s. trapped reports that the guest
// did not return (it trapped, or the host stopped it).
func (m *Module) run(ctx context.Context, inst *instance, s *callState, export string, start time.Time) (res *Result, trapped bool, err error) {
	lim := s.limits
	instantiated := time.Now()
	results, err := inst.function(export).Call(ctx)
	res = &Result{
		FuelUsed:        lim.Fuel - int64(s.fuel.Get()),
		InstantiateTime: instantiated.Sub(start),
		CallTime:        time.Since(instantiated),
	}
	res.MemoryPeakBytes = s.peak
	res.Log = s.log.bytes()
	// A command's main ends with proc_exit (and any export may call it),
	// which wazero returns as an *sys.ExitError, closing the instance: it
	// is not put back (its proc_exit was a stateful WASI call).
	exitCode, exited := uint32(0), false
	if err != nil && s.abortCode == "" {
		if code, ok := exitCodeOf(err); ok {
			exitCode, exited, err = code, true, nil
		}
	}
	if err != nil {
		return res, true, s.failure(err)
	}
	if !lim.HardDeadline.IsZero() && !time.Now().Before(lim.HardDeadline) {
		return res, false, fail(CodeExecutionTimeout, errors.New("finished after the hard deadline"))
	}
	switch {
	case exited || len(results) == 0:
		// go-sdk's rule for a WASI exit and for _start: an exit code
		// other than 0 fails, and so does an error set through
		// error_set.
		if exitCode != 0 || s.hasError {
			return res, false, s.exited(export, exitCode, exited)
		}
	case int32(results[0]) != 0:
		return res, false, s.raised()
	}
	out, err := s.outputBytes()
	if err != nil {
		return res, false, err
	}
	res.Output = out
	res.MemoryPeakBytes = s.peak
	return res, false, nil
}

// exitCodeOf returns the exit code of a WASI proc_exit that ended a call
// with err. (Its own function: the target of errors.As escapes, which
// would cost every call an allocation.)
func exitCodeOf(err error) (uint32, bool) {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), true
	}
	return 0, false
}

// putBack resets a pooled instance after its call and keeps it, or closes
// it: always for a fresh-only module, and for a pooled one when the call
// left state a reset cannot be trusted with (see pool.go).
func (m *Module) putBack(t *tier, inst *instance, s *callState, trapped bool) {
	if t.pool == nil {
		inst.close()
		return
	}
	reason := s.discardReason(trapped)
	if reason == "" && !inst.reset() {
		reason = DiscardGrowth
	}
	if reason == "" {
		reason = t.pool.put(inst)
	}
	if reason != "" {
		m.rt.counters.discard(reason)
		inst.close()
	}
}

// discardReason says why an instance cannot serve another call after
// this one, or "" when it can. A guest that returned, with an error of its
// own or not, leaves nothing a reset does not undo, unless it called a
// WASI function that can change its descriptors; one that did not return
// is discarded with the cause of its end.
func (s *callState) discardReason(trapped bool) string {
	switch {
	case !trapped && s.wasiState:
		return DiscardWASIState
	case !trapped:
		return ""
	case s.abortCode != "":
		return DiscardHostError
	case s.fuel != nil && int64(s.fuel.Get()) < 0:
		return DiscardFuel
	case s.ctx.Err() != nil:
		return DiscardInterrupt
	case s.memoryRefused:
		return DiscardMemoryLimit
	}
	return DiscardTrap
}

// outputBytes returns the output the guest set, read from its blocks as
// the call ends (as the Extism kernel's output is). It is copied out of
// the blocks when the copy fits the memory limit (and counted in the
// peak); otherwise it is returned in place, keeping the blocks' arena
// alive as long as the caller keeps the output. An output whose bytes
// the guest freed off the end of the blocks fails the call.
func (s *callState) outputBytes() ([]byte, error) {
	if !s.hasOutput || s.outputLen == 0 {
		return nil, nil
	}
	b, ok := s.blocks.slice(s.outputOff, s.outputLen)
	if !ok {
		return nil, fail(CodeExecutionFailed, errors.New("the output's block was freed before the call ended"))
	}
	n := uint64(len(b))
	if s.usedBytes()+n > s.limits.MemoryBytes {
		return b[:n:n], nil
	}
	out := append([]byte(nil), b...)
	s.peak = max(s.peak, s.usedBytes()+n)
	return out, nil
}

// failure classifies an error from instantiating or calling the guest.
func (s *callState) failure(err error) *Error {
	if s.abortCause != nil {
		err = fmt.Errorf("%w: %w", s.abortCause, err)
	}
	switch {
	case s.abortCode != "":
		return fail(s.abortCode, err)
	case s.fuel != nil && int64(s.fuel.Get()) < 0:
		return fail(CodeExecutionLimit, fmt.Errorf("fuel exhausted: %w", err))
	case s.ctx.Err() != nil:
		// Interrupted at a yield or a host call, or trapped otherwise
		// once the context had ended: that is the cause either way.
		return stopped(s.ctx, err)
	case s.memoryRefused:
		return fail(CodeMemoryLimit, err)
	}
	return fail(CodeExecutionFailed, err)
}

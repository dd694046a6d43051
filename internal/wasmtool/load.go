package wasmtool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// SidecarSuffix names the manifest beside an Extism plugin without a
// describe export: plugin.wasm → plugin.tool.json.
const SidecarSuffix = ".tool.json"

// describeLimits caps the throwaway instance that runs describe.
var describeLimits = host.Limits{
	MemoryBytes:    256 << 20,
	Fuel:           1_000_000_000,
	MaxOutputBytes: tooldef.MaxDeclarationBytes,
}

// The defaults of a Config: each phase's deadline. A phase that cannot be
// interrupted (wazero's compiler does not honour its context) is abandoned
// at its deadline; see [Loader.Load].
const (
	DefaultReadTimeout       = 10 * time.Second
	DefaultInstrumentTimeout = 30 * time.Second
	// DefaultCompileTimeout is generous: a large Go module compiles in
	// seconds, but minutes under the race detector without a cache.
	DefaultCompileTimeout = 2 * time.Minute
	// DefaultImageTimeout leaves room for host's own bound on the
	// template's _initialize (10 s), after which the module loads without
	// an image rather than being refused.
	DefaultImageTimeout = 20 * time.Second
	// DefaultDescribeTimeout is the hard deadline of a describe call.
	DefaultDescribeTimeout = 10 * time.Second
)

// describeGrace is how long after its hard deadline a describe call is
// waited for before it is abandoned: host interrupts it at the deadline
// and reports the timeout itself, which names the cause better.
const describeGrace = 250 * time.Millisecond

// The phases of a load, as a [LoadTimeout] refusal names them in its
// Detail.
const (
	PhaseRead       = "read"               // reading the module and its sidecar
	PhaseInstrument = host.PhaseInstrument // decoding and rewriting the module
	PhaseCompile    = host.PhaseCompile    // compiling it
	PhaseImage      = host.PhaseImage      // pre-initialising its memory image
	PhaseDescribe   = "describe"           // the describe call and the declaration's checks
)

// LoadReason is the stable code of a module refused at load.
type LoadReason string

// The load refusals.
const (
	// ModuleInvalid: the bytes are not a usable WebAssembly module.
	ModuleInvalid LoadReason = "module_invalid"
	// ModuleTooLarge: the module file is over [MaxModuleBytes].
	ModuleTooLarge LoadReason = "module_too_large"
	// SidecarTooLarge: the sidecar manifest is over [MaxSidecarBytes].
	SidecarTooLarge LoadReason = "sidecar_too_large"
	// NotRegular: the module or its sidecar is not a regular file (a
	// FIFO, a device, a socket, a folder); it was not read.
	NotRegular LoadReason = "not_regular_file"
	// ModuleLimits: the module's structure is over one of host's limits;
	// Detail names the limit (br_table_targets, functions, tables,
	// table_elements, memory_pages, …).
	ModuleLimits LoadReason = "module_limits"
	// LoadTimeout: a phase of the load outlasted its deadline; Detail
	// names the phase (read, instrument, compile, image, describe). The
	// image phase also ends when the template's start function or
	// _initialize runs out of host's image budget (host.ErrInitBudget:
	// its 10 s bound or its fuel), which is reported the same way.
	LoadTimeout LoadReason = "load_timeout"
	// ImportRefused: the module imports what the host does not provide.
	ImportRefused LoadReason = "import_refused"
	// NoDeclaration: the module has no describe export and no sidecar.
	NoDeclaration LoadReason = "declaration_missing"
	// Ambiguous: the module exports describe and also has a sidecar.
	Ambiguous LoadReason = "declaration_ambiguous"
	// NoCompute: a module with describe does not export compute.
	NoCompute LoadReason = "compute_missing"
	// DescribeFailed: the describe call failed (a trap, its fuel or
	// memory limit); Detail is host's code. A describe that outlasts its
	// deadline is a LoadTimeout.
	DescribeFailed LoadReason = "describe_failed"
	// DeclarationRefused: the declaration as a whole is refused.
	DeclarationRefused LoadReason = "declaration_refused"
)

// LoadError is a module refused at load. Detail is a short fixed text or a
// reason code from a lower layer; Err is the cause for the operator's log.
type LoadError struct {
	Reason LoadReason
	Detail string
	Err    error
}

func (e *LoadError) Error() string {
	s := string(e.Reason)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// Config configures a Loader.
type Config struct {
	// Platform is the platform policy operations are clamped to; it must
	// be coherent.
	Platform policy.Platform
	// ReadTimeout, InstrumentTimeout, CompileTimeout, ImageTimeout and
	// DescribeTimeout are the deadlines of a load's phases, each counted
	// from the start of its phase. DescribeTimeout is also the hard
	// deadline of the describe call itself. Zero means the Default… value.
	ReadTimeout, InstrumentTimeout, CompileTimeout, ImageTimeout, DescribeTimeout time.Duration
	// MaxLoads bounds the loads and reads that run at once, abandoned
	// ones included (see [Loader.Load]). Default GOMAXPROCS.
	MaxLoads int
	// Tiered makes Load serve a module from wazero's interpreter at once
	// unless its optimised code is in the compilation cache (host's
	// tiered start, docs/host.md); [Loader.Promote] then compiles and
	// swaps in the optimised tier. At most half of MaxLoads promotions
	// (at least one) compile at once, beside the loads.
	Tiered bool
	// PromoteTimeout is the deadline of a promotion's compile
	// ([Loader.Promote]). Zero means CompileTimeout.
	PromoteTimeout time.Duration
}

// Loader loads modules into a host runtime under one platform policy. It is
// safe for concurrent use. At most Config.MaxLoads loads and reads run at
// once; the others wait for a slot.
type Loader struct {
	rt         *host.Runtime
	cfg        Config
	slots      chan struct{} // one token per running load or read
	promotions chan struct{} // one token per running promotion (Promote)
}

// NewLoader returns a Loader.
func NewLoader(rt *host.Runtime, cfg Config) (*Loader, error) {
	if err := cfg.Platform.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&cfg.ReadTimeout, DefaultReadTimeout},
		{&cfg.InstrumentTimeout, DefaultInstrumentTimeout},
		{&cfg.CompileTimeout, DefaultCompileTimeout},
		{&cfg.ImageTimeout, DefaultImageTimeout},
		{&cfg.DescribeTimeout, DefaultDescribeTimeout},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxLoads <= 0 {
		cfg.MaxLoads = runtime.GOMAXPROCS(0)
	}
	if cfg.PromoteTimeout <= 0 {
		cfg.PromoteTimeout = cfg.CompileTimeout
	}
	return &Loader{rt: rt, cfg: cfg, slots: make(chan struct{}, cfg.MaxLoads),
		promotions: make(chan struct{}, max(1, cfg.MaxLoads/2))}, nil
}

// timeout is how long phase may run before it is abandoned.
func (l *Loader) timeout(phase string) time.Duration {
	switch phase {
	case PhaseRead:
		return l.cfg.ReadTimeout
	case PhaseInstrument:
		return l.cfg.InstrumentTimeout
	case PhaseCompile:
		return l.cfg.CompileTimeout
	case PhaseImage:
		return l.cfg.ImageTimeout
	}
	return l.cfg.DescribeTimeout + describeGrace
}

// Wait waits until no load, read or promotion runs, abandoned ones
// included, or until ctx ends. Loads started meanwhile are waited for too.
func (l *Loader) Wait(ctx context.Context) error {
	for _, slots := range []chan struct{}{l.slots, l.promotions} {
		if err := drain(ctx, slots); err != nil {
			return err
		}
	}
	return nil
}

// drain takes every token of slots, then gives them back, or returns when
// ctx ends.
func drain(ctx context.Context, slots chan struct{}) error {
	taken := 0
	defer func() {
		for range taken {
			<-slots
		}
	}()
	for taken < cap(slots) {
		select {
		case slots <- struct{}{}:
			taken++
		case <-ctx.Done():
			return fmt.Errorf("waiting for loads: %w", ctx.Err())
		}
	}
	return nil
}

// ReadFiles reads the module at path and its sidecar manifest (see
// [SidecarPath]) when one exists, in a load slot, under the read deadline:
// only regular files are read, and only when their size as fstat reports
// it is within [MaxModuleBytes] and [MaxSidecarBytes] (see readFile). A
// sidecar whose name is too long to exist (a module name of 246 bytes or
// more) counts as absent. Refusals are a *LoadError.
func (l *Loader) ReadFiles(ctx context.Context, path string) (*Files, error) {
	return runPhases(l, ctx, PhaseRead, func(context.Context, func(string)) (*Files, error) {
		return readFiles(path, SidecarPath(path))
	}, func(*Files) {})
}

// LoadFile reads the module at path with [Loader.ReadFiles] and loads it
// with [Loader.Load].
func (l *Loader) LoadFile(ctx context.Context, path string) (*Tool, error) {
	fs, err := l.ReadFiles(ctx, path)
	if err != nil {
		return nil, err
	}
	var sidecar []byte
	if fs.Sidecar != nil {
		sidecar = fs.Sidecar.Data
	}
	return l.Load(ctx, fs.Module.Data, sidecar)
}

// Load loads a module and its declaration. sidecar is the manifest of an
// existing Extism plugin, or nil. Package-level refusals are a *LoadError;
// refused services are reported on the Tool, beside the healthy ones.
//
// The load runs on its own goroutine in a load slot, phase after phase
// (instrument, compile, image, describe), each under its own deadline
// (Config) and memory budget: the module's size and structure limits for
// instrumenting and compiling, the runtime's memory cap for the image,
// the describe limits for describe. A phase that outlasts its deadline is
// refused at once with LoadTimeout and the phase as Detail; when ctx ends,
// Load returns ctx's error at once. Either way the work is abandoned, not
// stopped — wazero's compiler cannot be interrupted — and keeps its slot
// until it really ends, so that abandoned work stays bounded by MaxLoads;
// what it produces is then closed.
func (l *Loader) Load(ctx context.Context, wasm, sidecar []byte) (*Tool, error) {
	if len(wasm) > MaxModuleBytes {
		return nil, &LoadError{Reason: ModuleTooLarge, Err: fmt.Errorf("%d bytes is over the %d-byte limit", len(wasm), MaxModuleBytes)}
	}
	if len(sidecar) > MaxSidecarBytes {
		return nil, &LoadError{Reason: SidecarTooLarge, Err: fmt.Errorf("%d bytes is over the %d-byte limit", len(sidecar), MaxSidecarBytes)}
	}
	return runPhases(l, ctx, PhaseInstrument, func(ctx context.Context, enter func(string)) (*Tool, error) {
		lctx := host.WithLoadObserver(ctx, enter)
		if l.cfg.Tiered {
			lctx = host.WithTiering(lctx)
		}
		m, err := l.rt.Load(lctx, wasm)
		if err != nil {
			return nil, moduleRefusal(err)
		}
		enter(PhaseDescribe)
		t, err := l.declare(ctx, m, sidecar)
		if err != nil {
			m.Close(context.Background()) //nolint:errcheck // a module refused: the refusal is the error that counts
			return nil, err
		}
		return t, nil
	}, func(t *Tool) {
		t.Close(context.Background()) //nolint:errcheck // abandoned work's tool: no one is left to tell
	})
}

// moduleRefusal is the LoadError of a module host refused.
func moduleRefusal(err error) *LoadError {
	if errors.Is(err, host.ErrImport) {
		return &LoadError{Reason: ImportRefused, Err: err}
	}
	// The image template's start function or _initialize ran out of the
	// image budget (host's own time bound, or its fuel) before the image
	// phase's deadline here: the same refusal as that deadline.
	if errors.Is(err, host.ErrInitBudget) {
		return &LoadError{Reason: LoadTimeout, Detail: PhaseImage, Err: err}
	}
	if limit, ok := moduleLimit(err); ok {
		if limit == host.LimitModuleBytes {
			return &LoadError{Reason: ModuleTooLarge, Err: err}
		}
		return &LoadError{Reason: ModuleLimits, Detail: limit, Err: err}
	}
	return &LoadError{Reason: ModuleInvalid, Err: err}
}

func (l *Loader) declare(ctx context.Context, m *host.Module, sidecar []byte) (*Tool, error) {
	hasDescribe := m.HasExport("describe")
	var declaration []byte
	switch {
	case hasDescribe && sidecar != nil:
		return nil, &LoadError{Reason: Ambiguous, Detail: "the module exports describe and has a sidecar manifest"}
	case hasDescribe:
		if !m.HasExport("compute") {
			return nil, &LoadError{Reason: NoCompute, Detail: "a module with describe must export compute"}
		}
		lim := describeLimits
		lim.HardDeadline = time.Now().Add(l.cfg.DescribeTimeout)
		res, err := m.Call(ctx, "describe", nil, lim)
		if err != nil {
			detail := ""
			var he *host.Error
			if errors.As(err, &he) {
				detail = he.Code
			}
			if detail == host.CodeExecutionTimeout {
				return nil, &LoadError{Reason: LoadTimeout, Detail: PhaseDescribe, Err: err}
			}
			return nil, &LoadError{Reason: DescribeFailed, Detail: detail, Err: err}
		}
		declaration = res.Output
	case sidecar != nil:
		declaration = sidecar
	default:
		return nil, &LoadError{Reason: NoDeclaration, Detail: "the module exports no describe and has no sidecar manifest"}
	}
	pkg, err := tooldef.Decode(declaration, tooldef.Options{Sidecar: !hasDescribe})
	if err != nil {
		detail := ""
		var r *tooldef.Refusal
		if errors.As(err, &r) {
			detail = string(r.Reason)
		}
		return nil, &LoadError{Reason: DeclarationRefused, Detail: detail, Err: err}
	}
	t := &Tool{module: m, pkg: pkg, byCode: map[string]*Service{}}
	for _, d := range pkg.Services {
		s := l.service(m, d)
		t.services = append(t.services, s)
		if s.Definition != nil && s.Refusal == nil {
			t.byCode[s.Definition.ToolCode] = s
		}
	}
	return t, nil
}

// service prepares one declared service: validators compiled once, each
// operation clamped, sidecar exports checked.
func (l *Loader) service(m *host.Module, d tooldef.Declared) *Service {
	s := &Service{ToolCode: d.ToolCode, Definition: d.Definition, Refusal: d.Refusal}
	if d.Refusal != nil {
		return s
	}
	def := d.Definition
	var err error
	if s.input, err = schema.Compile(def.InputSchema); err != nil {
		s.Refusal = &tooldef.Refusal{Reason: tooldef.SchemaProfile, Path: "input_schema", Cause: err}
		return s
	}
	if s.output, err = schema.Compile(def.OutputSchema); err != nil {
		s.Refusal = &tooldef.Refusal{Reason: tooldef.SchemaProfile, Path: "output_schema", Cause: err}
		return s
	}
	s.operations = map[string]operation{}
	for _, op := range def.Operations {
		if op.Export != "" && !m.HasExport(op.Export) {
			s.Refusal = &tooldef.Refusal{Reason: tooldef.BadExport, Path: "operations/" + op.Policy.Name,
				Detail: fmt.Sprintf("the module has no export %q of type () -> i32", op.Export)}
			return s
		}
		eff, err := policy.Clamp(l.cfg.Platform, op.Policy)
		if err != nil {
			// An unusable effective policy makes the whole service
			// unavailable (invalid_operation_policy).
			s.Unavailable = err
			return s
		}
		s.operations[op.Policy.Name] = operation{effective: eff, export: op.Export,
			input: op.Input, output: op.Output, extism: def.Extism}
		s.maxParameterBytes = max(s.maxParameterBytes, eff.MaxParameterBytes)
	}
	return s
}

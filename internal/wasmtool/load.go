package wasmtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"toolhost/host"
	"toolhost/internal/policy"
	"toolhost/internal/schema"
	"toolhost/internal/tooldef"
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

// DefaultDescribeTimeout is the hard deadline of a describe call.
const DefaultDescribeTimeout = 10 * time.Second

// LoadReason is the stable code of a module refused at load.
type LoadReason string

// The load refusals.
const (
	// ModuleInvalid: the bytes are not a usable WebAssembly module.
	ModuleInvalid LoadReason = "module_invalid"
	// ImportRefused: the module imports what the host does not provide.
	ImportRefused LoadReason = "import_refused"
	// NoDeclaration: the module has no describe export and no sidecar.
	NoDeclaration LoadReason = "declaration_missing"
	// Ambiguous: the module exports describe and also has a sidecar.
	Ambiguous LoadReason = "declaration_ambiguous"
	// NoCompute: a module with describe does not export compute.
	NoCompute LoadReason = "compute_missing"
	// DescribeFailed: the describe call failed (trap, timeout, limits).
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
	// DescribeTimeout is the hard deadline of a describe call. Default
	// [DefaultDescribeTimeout].
	DescribeTimeout time.Duration
}

// Loader loads modules into a host runtime under one platform policy. It is
// safe for concurrent use.
type Loader struct {
	rt  *host.Runtime
	cfg Config
}

// NewLoader returns a Loader.
func NewLoader(rt *host.Runtime, cfg Config) (*Loader, error) {
	if err := cfg.Platform.Validate(); err != nil {
		return nil, err
	}
	if cfg.DescribeTimeout <= 0 {
		cfg.DescribeTimeout = DefaultDescribeTimeout
	}
	return &Loader{rt: rt, cfg: cfg}, nil
}

// LoadFile loads the module at path, with path's sidecar manifest
// (NAME.tool.json beside NAME.wasm) when one exists.
func (l *Loader) LoadFile(ctx context.Context, path string) (*Tool, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sidecar, err := os.ReadFile(strings.TrimSuffix(path, ".wasm") + SidecarSuffix)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return l.Load(ctx, wasm, sidecar)
}

// Load loads a module and its declaration. sidecar is the manifest of an
// existing Extism plugin, or nil. Package-level refusals are a *LoadError;
// refused services are reported on the Tool, beside the healthy ones.
func (l *Loader) Load(ctx context.Context, wasm, sidecar []byte) (*Tool, error) {
	m, err := l.rt.Load(ctx, wasm)
	if err != nil {
		reason := ModuleInvalid
		if errors.Is(err, host.ErrImport) {
			reason = ImportRefused
		}
		return nil, &LoadError{Reason: reason, Err: err}
	}
	t, err := l.declare(ctx, m, sidecar)
	if err != nil {
		m.Close(ctx)
		return nil, err
	}
	return t, nil
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
		s.operations[op.Policy.Name] = operation{effective: eff, export: op.Export}
		s.maxParameterBytes = max(s.maxParameterBytes, eff.MaxParameterBytes)
	}
	return s
}

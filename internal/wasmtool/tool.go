package wasmtool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// Tool is a loaded module with its services. It is immutable and safe for
// concurrent use; Close releases the compiled module.
type Tool struct {
	module   *host.Module
	pkg      *tooldef.Package
	services []*Service          // in declaration order, refused ones included
	byCode   map[string]*Service // usable services (available or not)
}

// Service is one declared service of a Tool. It is usable when Refusal is
// nil; it is listed but unavailable when Unavailable is set (an operation
// policy that cannot be clamped to the platform).
type Service struct {
	ToolCode    string
	Definition  *tooldef.Definition
	Refusal     *tooldef.Refusal
	Unavailable error

	input, output     *schema.Validator
	operations        map[string]operation
	maxParameterBytes int64 // the largest of the operations' limits
}

type operation struct {
	effective policy.Effective
	export    string // sidecar export; "" means compute
	// input and output are a sidecar export's mappings; extism its
	// service's manifest settings (Config is shared and only read).
	input, output tooldef.Mapping
	extism        tooldef.Extism
}

// Effective returns the effective policy of operation op.
func (s *Service) Effective(op string) (policy.Effective, bool) {
	o, ok := s.operations[op]
	return o.effective, ok
}

// ContractVersion and ImplementationVersion return the package's versions.
func (t *Tool) ContractVersion() string       { return t.pkg.ContractVersion }
func (t *Tool) ImplementationVersion() string { return t.pkg.ImplementationVersion }

// Services returns every declared service in declaration order.
func (t *Tool) Services() []*Service { return append([]*Service(nil), t.services...) }

// Service returns the usable service with the given code.
func (t *Tool) Service(code string) (*Service, bool) {
	s, ok := t.byCode[code]
	return s, ok
}

// Close releases the module. It is safe to call more than once.
func (t *Tool) Close(ctx context.Context) error { return t.module.Close(ctx) }

// Deadlines places one item in time. Zero fields are derived from the
// operation's effective policy at the start of Run.
type Deadlines struct {
	Soft, Hard time.Time
}

// Outcome is a successful item.
type Outcome struct {
	// Result is the result document, canonical JSON.
	Result []byte
	// FuelUsed and MemoryPeakBytes are the call's consumption.
	FuelUsed        int64
	MemoryPeakBytes uint64
	// The measured phases.
	InputValidation, Startup, Compute, OutputValidation, Serialization time.Duration
	// Log is the guest's bounded log, for operators only.
	Log []byte
	// Export is the export that ran: "compute", or a sidecar plugin's.
	Export string
	// PluginError is, when a sidecar plugin's export failed with an error
	// it set (error_set: the plain text of any Extism PDK, or a document),
	// the whole error, bounded (host.Error.Detail), for the operator's log
	// alone: the caller sees the raised error's code and message.
	PluginError string
}

// Run computes one item of service code with the caller's parameters
// document, with fresh state (host.Module.Call). The error is always a
// *toolerr.Error.
func (t *Tool) Run(ctx context.Context, code string, params []byte, dl Deadlines) (*Outcome, error) {
	s, ok := t.byCode[code]
	if !ok {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if s.Unavailable != nil {
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	out := &Outcome{}
	start := time.Now()
	// A refusal of the input is a validation phase that ran: it keeps its
	// duration (an unobserved phase is null, an observed one is not).
	refused := func(err error) (*Outcome, error) {
		out.InputValidation = time.Since(start)
		return out, err
	}

	// The largest parameter limit of any operation bounds the decoding;
	// the operation's own limit is checked once it is known.
	maxParams := s.maxParameterBytes
	if int64(len(params)) > maxParams {
		return refused(toolerr.New(toolerr.InputLimitExceeded))
	}
	doc, err := wire.Decode(params, wire.Limits{MaxBytes: int(maxParams), MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooDeep) || errors.Is(err, wire.ErrTooLarge) {
			return refused(toolerr.New(toolerr.InputLimitExceeded))
		}
		return refused(toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("invalid_json")))
	}
	if err := s.input.Validate(doc, toolerr.InvalidParameters); err != nil {
		return refused(err)
	}
	opName, _ := doc.(map[string]any)["operation"].(string)
	out.InputValidation = time.Since(start)
	return t.call(ctx, s, code, opName, params, doc, dl, out, start)
}

// RunChecked is Run for parameters its caller has decoded and validated
// against the service's input schema already (the application layer does,
// once per run): op is their operation. Nothing of params is decoded
// again; its size is still checked against the operation's limit.
func (t *Tool) RunChecked(ctx context.Context, code, op string, params []byte, dl Deadlines) (*Outcome, error) {
	s, ok := t.byCode[code]
	if !ok {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if s.Unavailable != nil {
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	return t.call(ctx, s, code, op, params, nil, dl, &Outcome{}, time.Now())
}

// call runs operation opName of service s with params, checked (doc is
// params decoded, or nil when the caller did not decode them), with fresh
// state: the rest of Run once the input is known to be valid.
func (t *Tool) call(ctx context.Context, s *Service, code, opName string, params []byte, doc any, dl Deadlines, out *Outcome, start time.Time) (*Outcome, error) {
	op, ok := s.operations[opName]
	if !ok { // unreachable after validation: the schema's operations are the policies'
		return nil, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("operation", "operation"))
	}
	eff := op.effective
	if int64(len(params)) > eff.MaxParameterBytes {
		return nil, toolerr.New(toolerr.InputLimitExceeded)
	}

	if dl.Hard.IsZero() {
		dl.Hard = start.Add(time.Duration(eff.HardTimeoutMS) * time.Millisecond)
	}
	if dl.Soft.IsZero() {
		dl.Soft = start.Add(time.Duration(eff.SoftTimeoutMS) * time.Millisecond)
	}
	item := host.Item{Export: "compute", Input: computeInput(code, opName, params)}
	memory := uint64(eff.MemoryLimitBytes)
	if op.export != "" {
		// An existing Extism plugin gets the bytes its mapping makes, its
		// config, and its manifest's caps within the operation's.
		var err error
		if item.Input, err = pluginInput(op.input, params, doc); err != nil {
			return nil, err
		}
		item.Export, item.Config = op.export, op.extism.Config
		if op.extism.MaxPages > 0 {
			memory = min(memory, uint64(op.extism.MaxPages)*tooldef.PageBytes)
		}
		if op.extism.TimeoutMS > 0 {
			dl.Hard = minTime(dl.Hard, time.Now().Add(time.Duration(op.extism.TimeoutMS)*time.Millisecond))
			dl.Soft = minTime(dl.Soft, dl.Hard)
		}
	}
	item.Limits = host.Limits{
		MemoryBytes:    memory,
		SoftDeadline:   dl.Soft,
		HardDeadline:   dl.Hard,
		EngineTimeout:  time.Duration(eff.EngineTimeoutMS) * time.Millisecond,
		MaxInputBytes:  len(item.Input),
		MaxOutputBytes: int(eff.MaxResultBytes),
	}
	out.Export = item.Export
	res, err := t.module.CallItem(ctx, item)
	if res != nil {
		out.FuelUsed, out.MemoryPeakBytes, out.Log = res.FuelUsed, res.MemoryPeakBytes, res.Log
		out.Startup, out.Compute = res.InstantiateTime, res.CallTime
	}
	if err != nil {
		var he *host.Error
		if op.export != "" && errors.As(err, &he) {
			out.PluginError = he.Detail
		}
		return out, platformError(err)
	}

	validated := time.Now()
	result, err := resultDocument(op, res.Output, eff.MaxResultBytes)
	if err == nil {
		err = s.output.Validate(result, toolerr.InvalidOutput)
	}
	out.OutputValidation = time.Since(validated) // refused or not, the phase ran
	if err != nil {
		return out, err
	}

	encoded := time.Now()
	if out.Result, err = wire.Encode(result, wire.Limits{MaxBytes: int(eff.MaxResultBytes)}); err != nil {
		return out, toolerr.New(toolerr.OutputLimitExceeded)
	}
	out.Serialization = time.Since(encoded)
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// pluginInput is the input a sidecar plugin's mapping m makes of the
// parameters (params, and doc when they were decoded already, else nil):
// the parameters object without operation, canonical JSON; one string
// parameter's bytes; a base64 one's decoded bytes; or nothing.
func pluginInput(m tooldef.Mapping, params []byte, doc any) ([]byte, error) {
	if m.Kind == tooldef.MapNone {
		return []byte{}, nil
	}
	if doc == nil {
		var err error
		if doc, err = wire.Decode(params, wire.Limits{MaxBytes: len(params), MaxDepth: wire.DefaultMaxDepth}); err != nil {
			return nil, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("invalid_json"))
		}
	}
	obj, _ := doc.(map[string]any)
	if m.Kind == tooldef.MapJSON || m.Kind == "" {
		b, err := wire.Encode(without(obj, "operation"), wire.Limits{})
		if err != nil {
			return nil, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("invalid_json"))
		}
		return b, nil
	}
	// The schema makes the field a required string; RunChecked's caller
	// validated against it, so a miss here is the caller's bug, reported
	// as the schema would.
	v, ok := obj[m.Field].(string)
	if !ok {
		return nil, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("type", m.Field))
	}
	if m.Kind == tooldef.MapText {
		return []byte(v), nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil {
		return nil, toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("base64", m.Field))
	}
	return b, nil
}

// without is obj less the named member: the parameters object a plugin
// with a JSON input gets.
func without(obj map[string]any, drop string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != drop {
			out[k] = v
		}
	}
	return out
}

// resultDocument is the result object an export's output makes: parsed
// strictly as JSON (compute, and a sidecar plugin's JSON output), or, for
// a sidecar plugin's text or base64 output, an object whose one string
// field holds the bytes (valid UTF-8, else invalid_output) or their
// base64 (standard, padded).
func resultDocument(op operation, output []byte, maxBytes int64) (any, error) {
	if op.export != "" && (op.output.Kind == tooldef.MapText || op.output.Kind == tooldef.MapBase64) {
		if int64(len(output)) > maxBytes {
			return nil, toolerr.New(toolerr.OutputLimitExceeded)
		}
		if op.output.Kind == tooldef.MapBase64 {
			return map[string]any{op.output.Field: base64.StdEncoding.EncodeToString(output)}, nil
		}
		if !utf8.Valid(output) {
			return nil, toolerr.New(toolerr.InvalidOutput, toolerr.NewIssue("utf8", op.output.Field))
		}
		return map[string]any{op.output.Field: string(output)}, nil
	}
	result, err := wire.Decode(output, wire.Limits{MaxBytes: int(maxBytes), MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooLarge) {
			return nil, toolerr.New(toolerr.OutputLimitExceeded)
		}
		return nil, toolerr.New(toolerr.InvalidOutput, toolerr.NewIssue("invalid_json"))
	}
	return result, nil
}

// computeInput is the compute envelope with the caller's parameter bytes
// embedded verbatim: {"operation":…,"parameters":…,"tool_code":…}.
func computeInput(code, op string, params []byte) []byte {
	opJSON, _ := json.Marshal(op)
	codeJSON, _ := json.Marshal(code)
	b := make([]byte, 0, len(params)+len(op)+len(code)+48)
	b = append(b, `{"operation":`...)
	b = append(b, opJSON...)
	b = append(b, `,"parameters":`...)
	b = append(b, params...)
	b = append(b, `,"tool_code":`...)
	b = append(b, codeJSON...)
	return append(b, '}')
}

// platformError maps a host failure to the platform error. A tool's own
// error (Raised) keeps its code, flag and bounded message — a sidecar
// plugin's plain-text error too, as host makes it an execution_failed
// raised with the text — so the run route can show the message; the
// whole text (host.Error.Detail) stays on the Outcome, for the log.
func platformError(err error) *toolerr.Error {
	var he *host.Error
	if !errors.As(err, &he) {
		return toolerr.New(toolerr.ExecutionFailed)
	}
	if he.Raised {
		e := toolerr.Raised(toolerr.Code(he.Code), he.Retryable)
		e.Message = he.Message
		return e
	}
	return toolerr.New(toolerr.Code(he.Code))
}

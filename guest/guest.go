package guest

import (
	"errors"
	"reflect"
	"strconv"
	"sync"
	"unsafe"
)

// Package is a tool module's declaration: the versions every service
// shares and its 1 to 16 services.
type Package struct {
	// ContractVersion and ImplementationVersion are SemVer strings copied
	// into every service's descriptor.
	ContractVersion       string
	ImplementationVersion string
	// Services are *Service values, each a complete public calculation.
	Services []Declaration
}

// Declaration is a service of a [Package]: a *[Service] of some input and
// output types. Its methods are unexported.
type Declaration interface {
	toolCode() string
	compile(checks bool) (*service, error)
}

// Text is a service's name and description in one language.
type Text struct {
	Name, Description string
}

// UI names the frontend component that renders a service.
type UI struct {
	// Kind is "custom"; empty means "custom".
	Kind string
	// ComponentKey identifies the frontend's renderer.
	ComponentKey string
	// Version is the service's own UI SemVer, independent of the package's.
	Version string
}

// Documentation points to a service's documentation page.
type Documentation struct {
	// Path is relative and extensionless: "/"-separated segments of
	// letters, digits, "-" and "_", optionally ending in "/"; it does not
	// start with "/", "mkdocs/" or a language ("en/", "it/", "fr/", "es/").
	Path string
	// Version is the documentation's SemVer.
	Version string
}

// Operation is the policy of one operation. A zero limit takes the
// model default (4 s engine and soft, 5 s hard, 5 s queue, 2 s cleanup,
// 20 s request, 25 s client, 128 KiB parameters, 256 KiB results, 1 GiB
// memory) and is left out of the declaration; the platform clamps every
// limit. Operations are pure and never deduplicated.
type Operation struct {
	// Name matches [a-z][a-z0-9_]*, at most 64 bytes.
	Name string
	// Deterministic is metadata: it never enables caching.
	Deterministic bool

	MaxParameterBytes, MaxResultBytes int64
	QueueTimeoutMS, EngineTimeoutMS   int64
	SoftTimeoutMS, HardTimeoutMS      int64
	CleanupTimeoutMS                  int64
	RequestTimeoutMS, ClientTimeoutMS int64
	MemoryLimitBytes                  int64
}

// Platform is a service's place on the tools platform (ADR-027): how the
// run API runs it, who may call it and what a run costs. Each zero field
// takes the host's default, and the defaults describe a pure transform that
// the page runs in the browser and the server runs for API callers: status
// "stable", execution "client", in the run API, anonymous callers allowed,
// no capability, quota class "tools-run" ("tools-job" for a job tool),
// cost 1, no egress, no hosts, no files. The host checks the block when it
// loads the module (docs/guest-abi.md, docs/contracts.md).
type Platform struct {
	// Status is "stable", "beta", "preview" or "unavailable"; "" is
	// "stable". StatusReason says why a tool is unavailable, and only then.
	Status, StatusReason string
	// Execution is "client", "sync" or "job"; "" is "client".
	Execution string
	// PageOnly keeps the tool out of the run API and the SDK (api false).
	PageOnly bool
	// Job is what a job tool's run submits; required of a job tool in the
	// API, refused on any other.
	Job *Job
	// Legacy are the deprecated routes that reach the tool.
	Legacy []LegacyRoute
	// Files are the file inputs the tool accepts.
	Files []FileInput
	// OutputFiles says that a run produces files; such a tool in the API
	// is a job tool.
	OutputFiles bool
	// RequireCaller refuses anonymous callers (auth.anonymous false): a
	// run needs at least a browser session or a token.
	RequireCaller bool
	// Capability is the capability a run needs beyond tools.tool.run, such
	// as "tools.net.probe"; "" for none.
	Capability string
	// QuotaClass names the work a run counts against, never a tier or a
	// price: "tools-run", "tools-job", "tools-fetch", "tools-probe", …
	QuotaClass string
	// Cost is the weight of one run in its quota class; 0 is 1.
	Cost int
	// Egress says that a run sends traffic off the host; Hosts lists the
	// fixed hosts it contacts.
	Egress bool
	Hosts  []string
	// PerTargetPerMinute throttles runs against one target across all
	// callers; 0 is none. Required of an egress tool open to anonymous
	// callers.
	PerTargetPerMinute int
}

// Job is what a job tool's run submits: a job of Type whose input is the
// run's input with Preset laid over it and "tool" set to Operation.
type Job struct {
	Type      string
	Operation string
	Preset    map[string]any
}

// LegacyRoute is a deprecated route that reaches the tool: Method "GET" or
// "POST", Path under /api/process, /api/net or /api/dev, the Operation it
// runs when the tool has several, and on a route several tools share the
// Selector, the legacy tool name that picks this tool.
type LegacyRoute struct {
	Method, Path, Operation, Selector string
}

// FileInput is a file the tool accepts: its part Name (tool-code format),
// the media Types its bytes may be sniffed as, and its size limit.
type FileInput struct {
	Name     string
	Types    []string
	MaxBytes int64
}

// Service is one public calculation: its metadata, operations, and the
// Compute function over its input and output types. The input and output
// schemas are derived from In and Out (see the package documentation): both
// are structs, and In has a string field tagged json:"operation".
type Service[In, Out any] struct {
	// Code is the tool_code: [a-z][a-z0-9_]*, at most 64 bytes, not
	// catalog, compute or diagnostics.
	Code        string
	Name        string
	Description string
	// NameKey and DescriptionKey are optional translation keys.
	NameKey, DescriptionKey string
	// Texts holds the name and description in exactly "en", "it", "fr"
	// and "es".
	Texts map[string]Text
	// Category and IconKey use the tool-code format.
	Category, IconKey string
	UI                UI
	Documentation     Documentation
	// Operations are the service's operations, at least one, with unique
	// names. Their order is the order of the schema's variants.
	Operations []Operation
	// Platform holds the service's tools-platform fields (ADR-027). nil
	// declares none: the host's defaults apply (see [Platform]).
	Platform *Platform
	// Compute computes one item. in has been decoded strictly and its
	// Operation is ctx.Operation(). Return an *Error to choose the error
	// code; any other error is execution_failed with its text, and a
	// panic is recovered as execution_failed.
	Compute func(ctx *Context, in In) (Out, error)
}

func (s *Service[In, Out]) toolCode() string { return s.Code }

// compile checks the service and builds its schemas and dispatch. checks
// is false on the compute path, which needs only the types and skips the
// metadata and the costlier tag checks: describe already made them.
func (s *Service[In, Out]) compile(checks bool) (*service, error) {
	meta := serviceMeta{
		code: s.Code, name: s.Name, description: s.Description,
		nameKey: s.NameKey, descriptionKey: s.DescriptionKey, texts: s.Texts,
		category: s.Category, iconKey: s.IconKey, ui: s.UI, documentation: s.Documentation,
		operations: s.Operations, platform: s.Platform, hasCompute: s.Compute != nil,
	}
	svc, err := newService(meta, reflect.TypeFor[In](), reflect.TypeFor[Out](), checks)
	if err != nil {
		return nil, err
	}
	compute := s.Compute
	svc.call = func(ctx *Context, op string, params map[string]any) ([]byte, *Error) {
		if v, ok := params["operation"].(string); ok && v != op {
			return nil, &Error{Code: CodeInvalidParameters, Message: "parameters/operation: does not match the requested operation"}
		}
		var in In
		if err := assignStruct(reflect.ValueOf(&in).Elem(), svc.in, params, op, nil); err != nil {
			return nil, &Error{Code: CodeInvalidParameters, Message: err.message()}
		}
		if reflect.ValueOf(&in).Elem().FieldByIndex(svc.opIndex).String() != op {
			return nil, &Error{Code: CodeInvalidParameters, Message: "parameters/operation: does not match the requested operation"}
		}
		return finish(ctx, svc, compute, in, op)
	}
	svc.callRaw = func(ctx *Context, op string, params []byte, alias bool) ([]byte, *Error, bool) {
		var in In
		p := unsafe.Pointer(&in)
		if !decodeInput(params, svc.in, p, svc.in.accepts[op], alias) || *(*string)(unsafe.Add(p, svc.opOffset)) != op {
			return nil, nil, false
		}
		out, e := finish(ctx, svc, compute, in, op)
		return out, e, true
	}
	return svc, nil
}

// finish computes the decoded input in and encodes the result.
func finish[In, Out any](ctx *Context, svc *service, compute func(*Context, In) (Out, error), in In, op string) ([]byte, *Error) {
	out, err := run(ctx, compute, in)
	if err != nil {
		return nil, err
	}
	b, encErr := encodeResult(reflect.ValueOf(&out).Elem(), svc.out, op)
	if encErr != nil {
		return nil, sdkFailure(encErr.message())
	}
	return b, nil
}

// run calls compute, turning its error or panic into a tool error; a
// checkpoint that said stop makes the item execution_limit whatever
// compute returned.
func run[In, Out any](ctx *Context, compute func(*Context, In) (Out, error), in In) (out Out, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			e = &Error{Code: CodeExecutionFailed, Message: clip("panic: "+sprint(r), MaxMessageBytes)}
		}
		if ctx.stopped && (e == nil || e.Code != CodeExecutionLimit) {
			e = errStop("stopped: the soft deadline has passed or the item was cancelled")
		}
	}()
	out, err := compute(ctx, in)
	if err != nil {
		var te *Error
		if errors.As(err, &te) {
			if te == nil {
				return out, &Error{Code: CodeExecutionFailed, Message: "Compute returned a nil *guest.Error as its error"}
			}
			return out, te
		}
		return out, &Error{Code: CodeExecutionFailed, Message: err.Error()}
	}
	return out, nil
}

// registration is the package Register received and what was built from
// it, once.
var registration struct {
	mu          sync.Mutex
	registered  bool
	pkg         Package
	built       bool
	declaration []byte
	err         error
	// services holds the compute model of every service compiled so far,
	// by declaration: Register compiles the registered package's, so that
	// an instance started from the initialised memory only looks them up.
	services map[Declaration]*service
}

// errNotRegistered is returned when describe or compute runs before
// Register was called.
var errNotRegistered = errors.New("no package declared: call guest.Register from an init function of the tool's main package")

// Register declares the module's package. Call it exactly once, from an
// init function of the tool's main package; a second call panics. The
// declaration is checked when describe runs, which then fails with the
// reason ([Describe] gives the same result on the host). Register keeps p:
// do not modify it afterwards.
//
// Register also builds what computing an item needs from each service's
// types — the type model, operation sets, field tables — so that a host
// that starts instances from the initialised memory pays for it once.
func Register(p Package) {
	registration.mu.Lock()
	defer registration.mu.Unlock()
	if registration.registered {
		panic("guest: Register called more than once")
	}
	registration.registered = true
	registration.pkg = p
	if dumpHook != nil {
		dumpHook(p)
	}
	for _, d := range p.Services {
		if d != nil {
			if svc := precompile(d); svc != nil {
				cacheService(d, svc)
			}
		}
	}
}

// precompile compiles d for compute, or returns nil when that fails: the
// failure is reported when describe or compute runs, as without it.
func precompile(d Declaration) (svc *service) {
	defer func() {
		if recover() != nil {
			svc = nil
		}
	}()
	svc, err := d.compile(false)
	if err != nil {
		return nil
	}
	return svc
}

// cacheService records svc as d's compute model; the caller holds
// registration.mu.
func cacheService(d Declaration, svc *service) {
	if registration.services == nil {
		registration.services = map[Declaration]*service{}
	}
	registration.services[d] = svc
}

// lookupService returns the compute model of the service of pkg with
// tool_code code: nil and no error when there is none, an error when its
// declaration does not compile.
func lookupService(pkg Package, code string) (*service, error) {
	var decl Declaration
	for _, d := range pkg.Services {
		if d != nil && d.toolCode() == code {
			decl = d
			break
		}
	}
	if decl == nil {
		return nil, nil
	}
	registration.mu.Lock()
	svc := registration.services[decl]
	registration.mu.Unlock()
	if svc != nil {
		return svc, nil
	}
	svc, err := decl.compile(false)
	if err != nil {
		return nil, err
	}
	registration.mu.Lock()
	cacheService(decl, svc)
	registration.mu.Unlock()
	return svc, nil
}

// declaration returns the declaration document of the registered package,
// checked in full, building it on first use.
func declaration() ([]byte, error) {
	registration.mu.Lock()
	defer registration.mu.Unlock()
	if !registration.registered {
		return nil, errNotRegistered
	}
	if !registration.built {
		registration.declaration, registration.err = describeRegistered(registration.pkg, generated.declaration)
		registration.built = true
	}
	return registration.declaration, registration.err
}

// Declaration returns p's declaration document, checked in full, as the
// describe export would emit it, without registering p. It is for hosts
// that compile packages into their own binary and derive the schemas from
// the same Go types (Toolhost's native packages).
func (p Package) Declaration() ([]byte, error) { return declare(p) }

// Describe returns the declaration document the describe export emits
// for the registered package, or an *Error (execution_failed) saying why
// the declaration is refused. Tool authors call it from host tests.
func Describe() ([]byte, error) {
	decl, err := declaration()
	if errors.Is(err, errNotRegistered) {
		return nil, sdkFailure(err.Error())
	}
	if err != nil {
		return nil, sdkFailure("declaration: " + err.Error())
	}
	return append([]byte(nil), decl...), nil
}

// Invoke runs one compute call exactly as the compute export does: input
// is {"tool_code","operation","parameters"}, and the result is the result
// document or an *Error. Tool authors call it from host tests; there,
// Checkpoint says go on and an engine window of 4000 ms is granted.
func Invoke(input []byte) ([]byte, error) {
	out, e := invoke(input, false)
	if e != nil {
		return nil, e.normalized()
	}
	return out, nil
}

// invoke decodes the compute input, finds the service and operation,
// decodes the parameters strictly into its input type, computes and
// encodes the result. The service's model was compiled by Register,
// without the declaration checks.
//
// The fast path (fast.go) reads the input in one pass and the parameters
// straight into the input type; when it gives up, without having computed
// anything, the strict path below reads the input again and reports the
// exact error. owned says that input is the caller's to give: the decoded
// strings may share its memory (the compute export's copy of the input).
func invoke(input []byte, owned bool) ([]byte, *Error) {
	registration.mu.Lock()
	ok, pkg := registration.registered, registration.pkg
	registration.mu.Unlock()
	if !ok {
		return nil, sdkFailure(errNotRegistered.Error())
	}
	if out, e, done := invokeFast(pkg, input, owned); done {
		return out, e
	}
	return invokeStrict(pkg, input)
}

// invokeFast computes the item on the fast path, or reports false without
// having computed anything.
func invokeFast(pkg Package, input []byte, owned bool) ([]byte, *Error, bool) {
	code, op, params, ok := fastEnvelope(input)
	if !ok {
		return nil, nil, false
	}
	svc, _ := lookupService(pkg, code)
	if svc == nil || !svc.opSet[op] {
		return nil, nil, false
	}
	return svc.callRaw(&Context{toolCode: svc.code, operation: op}, op, params, owned)
}

// invokeStrict computes the item on the strict path, which parses the
// whole input before deciding anything and reports every refusal.
func invokeStrict(pkg Package, input []byte) ([]byte, *Error) {
	env, e := parseEnvelope(input)
	if e != nil {
		return nil, e
	}
	svc, err := lookupService(pkg, env.toolCode)
	if err != nil {
		return nil, sdkFailure("declaration: " + err.Error())
	}
	if svc == nil {
		return nil, sdkFailure("this module has no service " + strconv.Quote(safeName(env.toolCode)))
	}
	if !svc.opSet[env.operation] {
		return nil, sdkFailure("service " + strconv.Quote(svc.code) + " has no operation " + strconv.Quote(safeName(env.operation)))
	}
	params, isObject := env.parameters.(map[string]any)
	if !isObject {
		return nil, &Error{Code: CodeInvalidParameters, Message: "parameters: expected an object"}
	}
	ctx := &Context{toolCode: svc.code, operation: env.operation}
	return svc.call(ctx, env.operation, params)
}

// generated holds what guestgen wrote for the tool's package: the
// declaration document derived from the package's types and metadata.
var generated struct {
	declaration string
}

// dumpHook, when set (dump.go, a guestgen_dump build), receives the
// package at Register: guestgen runs the tool natively that way to derive
// its declaration.
var dumpHook func(Package)

// UseDeclaration gives the SDK the declaration document guestgen derived
// for the tool's package; guestgen's output (guest_gen.go) calls it from
// an init function. Do not call it by hand.
//
// A module built with -tags guestgen answers describe with it and links
// none of the derivation (reflection over the schema tags, encoding/json,
// regexp, math/big, fmt). Any other build derives the declaration as
// before and refuses it when doc differs: the generated file is stale
// (go generate rewrites it), so the tool's host tests catch it.
func UseDeclaration(doc string) {
	generated.declaration = doc
}

// errStale is returned when the declaration guestgen generated differs from
// the one the package's types and metadata give.
var errStale = errors.New("the generated declaration (guest_gen.go) is stale: run go generate")

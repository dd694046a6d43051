// Package native is the contract of native tool packages: tools compiled
// into the binary whose work needs an engine that cannot run in WebAssembly
// (a MILP solver, qpdf, pdftoppm). A package declares its services in the
// same JSON shape as a WASM module's describe output (docs/guest-abi.md) and
// computes inside a supervised worker process (package supervisor), never
// in the server process. The worker validates the parameters against the
// input schema before Compute and the result against the output schema
// after it; a package computes on valid input only. A package decodes its
// parameters with [Call.DecodeParameters], encodes its result with
// [EncodeResult] and raises its refusals with [Refuse], so that the native
// packages refuse and encode alike.
package native

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// InWorker is the guest Compute of a native service. A native package
// declares its services with the guest SDK's types, so that their schemas
// are derived from the same Go types its computation decodes into
// (guest.Package.Declaration); the computation itself runs in a worker
// through Package.Compute, and this function, which only marks the service
// as computed elsewhere, is never called.
func InWorker[In, Out any](*guest.Context, In) (Out, error) {
	var out Out
	return out, errors.New("native: a native service computes in its worker")
}

// Package is one native tool package.
type Package struct {
	// Name names the package: "builtin/<Name>" in sources and failures.
	// It matches [a-z][a-z0-9_]*.
	Name string
	// Declaration is the package declaration (tooldef JSON).
	Declaration []byte
	// Engines are the executables the package runs, looked up on PATH.
	// When one is missing, every service of the package is listed as
	// unavailable with a reason and refused; nothing is faked.
	Engines []string
	// Compute computes one item. It returns the result document (JSON; the
	// worker validates and canonicalises it) or an error: a *toolerr.Error
	// for a tool error (a checkpoint's execution_limit, a domain refusal
	// raised with toolerr.Raised), anything else becomes execution_failed.
	Compute func(ctx *Context, call Call) ([]byte, error)
}

// Call is one item: the service, the operation and the caller's
// parameters, already validated against the input schema.
type Call struct {
	ToolCode, Operation string
	// Parameters is the parameters document, canonical JSON.
	Parameters []byte
	// Files are the item's input files (a job's), by path in the job's
	// own folder: open them read-only and never write to them. Nil when
	// the item has none (a compute-route item passes its data in the
	// parameters).
	Files []engine.File
	// OutDir, when not empty, is the job's output folder: write each
	// output file there and name it in the result, instead of putting
	// its bytes in the result.
	OutDir string
}

// File returns the input file named name, if the item has it.
func (c Call) File(name string) (engine.File, bool) {
	for _, f := range c.Files {
		if f.Name == name {
			return f, true
		}
	}
	return engine.File{}, false
}

// MissingEngines returns the executables of p not found on PATH.
func (p *Package) MissingEngines() []string {
	var missing []string
	for _, e := range p.Engines {
		if _, err := exec.LookPath(e); err != nil {
			missing = append(missing, e)
		}
	}
	return missing
}

// Context is what a native computation sees of its execution: its
// identifier, its cancellation, and the cooperative deadlines of the seed
// contract ("Synchronous computation"). It carries no principal.
type Context struct {
	ctx           context.Context
	executionID   string
	soft          time.Time
	engineTimeout time.Duration
	claimed       bool
	scratch       string
}

// NewContext returns the Context of one execution: ctx ends at the hard
// deadline or on cancellation, soft is the soft deadline, engineTimeout
// the operation's effective engine budget.
func NewContext(ctx context.Context, executionID string, soft time.Time, engineTimeout time.Duration) *Context {
	return &Context{ctx: ctx, executionID: executionID, soft: soft, engineTimeout: engineTimeout}
}

// WithScratchDir sets the item's scratch folder and returns c: the worker
// calls it with the folder the supervisor made for the item.
func (c *Context) WithScratchDir(dir string) *Context {
	c.scratch = dir
	return c
}

// ScratchDir returns the folder where the computation keeps its temporary
// files (make a folder of its own in it with os.MkdirTemp): inside the
// item's own folder, removed by the supervisor after the item whatever its
// outcome, so nothing of the caller's data outlives the item. Empty
// outside a worker (a package's own tests): os.MkdirTemp then uses the
// system's temporary folder.
func (c *Context) ScratchDir() string { return c.scratch }

// Context returns the execution's context: engines started with
// exec.CommandContext on it end with the execution.
func (c *Context) Context() context.Context { return c.ctx }

// ExecutionID identifies the execution.
func (c *Context) ExecutionID() string { return c.executionID }

// Checkpoint returns an execution_limit error (retryable) once the
// execution is cancelled or its soft deadline has passed; nil otherwise.
// Call it at bounded intervals.
func (c *Context) Checkpoint() error {
	if c.ctx.Err() != nil || !time.Now().Before(c.soft) {
		return toolerr.New(toolerr.ExecutionLimit)
	}
	return nil
}

// Window is a claimed engine window: the engine must finish by Deadline,
// and is given Timeout as its own time budget.
type Window struct {
	Deadline time.Time
	Timeout  time.Duration
}

// ClaimEngineWindow claims the one engine window of the execution: it runs
// a checkpoint, then returns execution_limit unless the time left before
// the soft deadline holds the engine budget plus postEngineReserve, the
// time the caller needs after the engine for its own work. There is one
// window per item: a second claim is refused the same way, as the WASM
// host refuses it. A Context is used by one goroutine.
func (c *Context) ClaimEngineWindow(postEngineReserve time.Duration) (Window, error) {
	if err := c.Checkpoint(); err != nil {
		return Window{}, err
	}
	now := time.Now()
	if c.claimed || postEngineReserve < 0 || c.engineTimeout <= 0 || c.soft.Sub(now) < c.engineTimeout+postEngineReserve {
		return Window{}, toolerr.New(toolerr.ExecutionLimit)
	}
	c.claimed = true
	return Window{Deadline: now.Add(c.engineTimeout), Timeout: c.engineTimeout}, nil
}

// Service declares one native service with a single operation in the
// conventions the native packages share: name and description from texts'
// "en" entry, translation keys tools.<code>.name and .description, icon and
// UI component keys equal to the code, documentation at tools/<code>, UI
// and documentation at version. Its Compute is [InWorker]: the schemas
// come from In and Out, the work from the package's Compute.
func Service[In, Out any](code, category, version string, texts map[string]guest.Text, op guest.Operation, p *guest.Platform) *guest.Service[In, Out] {
	return &guest.Service[In, Out]{
		Code:           code,
		Name:           texts["en"].Name,
		Description:    texts["en"].Description,
		NameKey:        "tools." + code + ".name",
		DescriptionKey: "tools." + code + ".description",
		Texts:          texts,
		Category:       category,
		IconKey:        code,
		UI:             guest.UI{Kind: "custom", ComponentKey: code, Version: version},
		Documentation:  guest.Documentation{Path: "tools/" + code, Version: version},
		Operations:     []guest.Operation{op},
		Platform:       p,
		Compute:        InWorker[In, Out],
	}
}

package registry

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// The folder's layout: every NAME.wasm directly inside it is a module
// file, read with its sidecar manifest NAME.tool.json when there is one
// (the manifest of an existing Extism plugin, docs/guest-abi.md).
const (
	// ModuleSuffix ends the name of a module file.
	ModuleSuffix = ".wasm"
	// SidecarSuffix replaces ModuleSuffix to name a module's sidecar.
	SidecarSuffix = ".tool.json"
)

// SidecarPath is the sidecar manifest of the module file at path:
// NAME.wasm → NAME.tool.json.
func SidecarPath(path string) string {
	return strings.TrimSuffix(path, ModuleSuffix) + SidecarSuffix
}

// PhaseQueued is the phase of a load waiting for a load slot: the
// registry's, or the loader's (which abandoned work may hold). A Loader
// reports it to its [LoadObserver] by this name.
const PhaseQueued = "queued"

// DeclarationRefused is the detail of a package whose declaration is
// refused as a whole (import_failed); the detail of a builtin's, refined
// by tooldef's reason, and the reason code a Loader gives a module's.
const DeclarationRefused = "declaration_refused"

// Loader loads the module files of the tools folder. The registry calls
// it from several goroutines at once: implementations are safe for
// concurrent use. *wasmtool.Loader is the one the server uses; it clamps
// every operation to its own platform policy.
type Loader interface {
	// Unreadable is the refusal of a module that the loader would refuse
	// to read, judged from what stat says of its files alone (sidecar nil
	// when there is none): not a regular file, over a size limit. Nil
	// means it reads them. A refusal is a [LoadRefusal].
	Unreadable(module FileStat, sidecar *FileStat) error
	// ReadModule reads the module file at path and its sidecar manifest
	// at sidecar, when one exists, each checked again on the opened file
	// (ModuleFiles.Sidecar is nil when there is none). It reports its
	// progress to obs (nil: none). A refusal is a [LoadRefusal]; other
	// errors (permissions) are the file system's. It returns ctx's error
	// soon after ctx ends.
	ReadModule(ctx context.Context, path, sidecar string, obs *LoadObserver) (ModuleFiles, error)
	// LoadModule loads a module from the files ReadModule read, each
	// phase under the loader's own deadline, reporting its progress to obs
	// (nil: none). A refusal of the package as a whole is a
	// [LoadRefusal]; refused services are reported on the module, beside
	// the healthy ones. It returns ctx's error soon after ctx ends.
	LoadModule(ctx context.Context, files ModuleFiles, obs *LoadObserver) (LoadedModule, error)
}

// FileStat is what stat says of one file, before it is opened.
type FileStat struct {
	Regular bool
	Size    int64
}

// ModuleFiles are the bytes of a module file and of its sidecar manifest
// (nil when there is none; an empty manifest is not nil).
type ModuleFiles struct {
	Module, Sidecar []byte
}

// LoadObserver follows one read and load of a module file: the phase it is
// in, and whether its work was abandoned and still holds one of the
// loader's slots. Its funcs are called on the loader's goroutines: they
// are safe for concurrent use, cheap, and never block or call back into
// the loader. A nil func is skipped.
type LoadObserver struct {
	// Phase is called as the work waits for a slot ([PhaseQueued]) and as
	// it enters each of the loader's phases, with that phase's deadline.
	Phase func(phase string, timeout time.Duration)
	// Abandoned is called once when the loader gives up on work that has
	// not returned (its phase outlasted its deadline, or the context
	// ended); the work runs on and keeps its slot.
	Abandoned func(phase string)
	// Released is called once when abandoned work has returned and given
	// its slot back, always after Abandoned has returned.
	Released func()
}

// LoadRefusal is an error of a Loader that refuses a module: what the
// registry publishes of it. reason is a stable code (module_too_large,
// load_timeout, declaration_refused, …); detail is "" or a finer code of a
// lower layer (the phase of a timeout, tooldef's reason), published only
// when it is one. The registry finds it with errors.As.
type LoadRefusal interface {
	error
	Refusal() (reason, detail string)
}

// LoadedModule is a module a Loader loaded: its package's services and
// what runs their items. It is immutable and safe for concurrent use.
type LoadedModule interface {
	// ImplementationVersion is the package's implementation version.
	ImplementationVersion() string
	// Services are the declared services, in declaration order, refused
	// ones included.
	Services() []ModuleService
	// Run runs one item of service job.ToolCode in a fresh sandbox, under
	// job's deadlines and operation policy (the effective policy the
	// loader clamped). The error is a *toolerr.Error; the outcome may be
	// non-nil beside it (engine.Runner's rules). The report is what the
	// guest left for the operator alone.
	Run(ctx context.Context, job engine.Job) (out *engine.Outcome, rep GuestReport, err error)
	// Close releases the module. The registry calls it once, when the
	// module is retired and its last item has ended.
	Close(ctx context.Context) error
}

// GuestReport is what an item's guest left for the operator's log, never
// for callers.
type GuestReport struct {
	// Log is the guest's bounded log: "[LEVEL] message" lines (host.Result.Log).
	Log []byte
	// Export is the export that ran, and PluginError, when a sidecar
	// plugin's export failed with an error it set, that error's text,
	// bounded (the caller sees only the tool error's code and message).
	Export, PluginError string
}

// The tiers a [TieredModule] is served from: a loader's names, which
// diagnostics show (docs/registry.md, "Tiered start").
const (
	// TierInterpreter: wazero's interpreter serves the module while its
	// optimised compile runs.
	TierInterpreter = "interpreter"
	// TierCompiled: wazero's optimising compiler's code serves it.
	TierCompiled = "compiled"
)

// TieredModule is a [LoadedModule] that may start on a quick first tier
// (wazero's interpreter) and be promoted to its optimised code later,
// without a new module: the same services, the same identity, the same
// snapshot. *wasmtool.Loader's modules are.
type TieredModule interface {
	// Tier is the tier serving the module's new items: TierInterpreter
	// or TierCompiled.
	Tier() string
	// Promote compiles the optimised tier and swaps it in for the items
	// that start from then on; items running on the first tier finish
	// there. It returns once swapped (nil), failed (the first tier keeps
	// serving; a LoadRefusal says why) or when ctx ends; nil at once on
	// TierCompiled. The registry calls it once per module, on its own
	// goroutine, after publishing the module.
	Promote(ctx context.Context) error
}

// ModuleService is one declared service of a [LoadedModule]: usable when
// Refusal is nil; listed but unavailable when Unavailable is set (an
// operation policy that cannot be clamped to the platform), with no
// effective policies.
type ModuleService struct {
	ToolCode    string
	Definition  *tooldef.Definition
	Refusal     *tooldef.Refusal
	Unavailable error
	// Effective holds the effective policy of each operation of a usable,
	// available service.
	Effective map[string]policy.Effective
}

// noSuchFile reports whether err says a file does not exist, including a
// name too long to exist (ENAMETOOLONG): a sidecar beside a module whose
// name is near the file system's limit.
func noSuchFile(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG)
}

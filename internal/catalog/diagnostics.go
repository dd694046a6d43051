package catalog

import (
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Process is what the diagnostics document and /readyz read of the
// process beside the registry; a nil function leaves its part empty.
type Process struct {
	// RuntimeID is the opaque identifier of this process.
	RuntimeID string
	// Capabilities are the process's enforcement capabilities.
	Capabilities Capabilities
	// Pool is the executor's pool.
	Pool func() executor.PoolSnapshot
	// NativeWorkers reports the native supervisor's workers; a report
	// without spare workers is left out.
	NativeWorkers func() supervisor.Stats
	// Loading lists the tools folder's loads in progress
	// (registry.Registry.Loading); nil lists none, and /readyz then
	// has no tools check.
	Loading func() []registry.Load
}

// Capabilities are the process's enforcement capabilities, for diagnostics.
type Capabilities struct {
	// Memory is the memory enforcement mode of native jobs (an
	// engine.Memory* mode).
	Memory string `json:"memory"`
	// WASMMemory is the memory enforcement of WASM items.
	WASMMemory string `json:"wasm_memory"`
}

// Diagnostics is the process-local diagnostics document. It describes this
// API process only, and never holds scenarios, results, tokens or logs.
type Diagnostics struct {
	Scope        string                `json:"scope"`
	RuntimeID    string                `json:"runtime_id"`
	Generation   uint64                `json:"generation"`
	Policy       policy.Platform       `json:"policy"`
	Descriptors  []DiagnosedService    `json:"descriptors"`
	Failures     []registry.Failure    `json:"failures"`
	Loading      []LoadingModule       `json:"loading"` // loads in progress; like Generation, beyond seed 000
	Capabilities Capabilities          `json:"capabilities"`
	Pool         executor.PoolSnapshot `json:"pool"`
	// NativeWorkers are the supervisor's jobs and spare workers, with the
	// spares' resident memory beside the pool's (docs/supervisor.md); only
	// with spare workers on. Beyond seed 000.
	NativeWorkers *supervisor.Stats `json:"native_workers,omitempty"`
}

// DiagnosedService is a loaded descriptor with its availability.
type DiagnosedService struct {
	Descriptor
	Source string `json:"source"`
	// Available is false for a service that is listed but cannot run;
	// Unavailable then says why: invalid_operation_policy, or
	// tool_unavailable with an engine_missing issue per missing engine.
	Available   bool           `json:"available"`
	Unavailable *toolerr.Error `json:"unavailable,omitempty"`
	// Tier is the tier serving a module's new items: "interpreter" while
	// its optimised compile runs, "compiled" after the swap; absent for a
	// builtin. TierFailure is why the compile failed ("load_timeout/compile",
	// "module_invalid"), the interpreter serving on. Beyond seed 000
	// (docs/registry.md, "Tiered start").
	Tier        string `json:"tier,omitempty"`
	TierFailure string `json:"tier_failure,omitempty"`
}

// Diagnose is the diagnostics document of the process p describes, with
// snap's services under platform; now is when it is made.
func Diagnose(platform policy.Platform, snap *registry.Snapshot, p Process, now time.Time) Diagnostics {
	d := Diagnostics{
		Scope:        "api_process",
		RuntimeID:    p.RuntimeID,
		Generation:   snap.Generation(),
		Policy:       platform,
		Descriptors:  []DiagnosedService{},
		Failures:     snap.Failures(),
		Loading:      p.Loads(now),
		Capabilities: p.Capabilities,
	}
	if p.Pool != nil {
		d.Pool = p.Pool()
	}
	if f := p.NativeWorkers; f != nil {
		if st := f(); st.Spares > 0 {
			d.NativeWorkers = &st
		}
	}
	for _, svc := range snap.Services() {
		ds := DiagnosedService{Descriptor: Describe(svc, platform), Source: svc.Source,
			Available: svc.Unavailable == nil, Unavailable: svc.Unavailable}
		ds.Tier, ds.TierFailure = svc.Tier()
		d.Descriptors = append(d.Descriptors, ds)
	}
	if d.Failures == nil {
		d.Failures = []registry.Failure{}
	}
	return d
}

// LoadingModule is one load of a module file in progress, as diagnostics
// lists it under "loading" (docs/http.md): what a tool author who just
// dropped a module sees until it is published or refused. It carries the
// file's name, never a path, like a failure.
type LoadingModule struct {
	// File is "NAME.wasm", the name a failure of the same file has.
	File string `json:"filename"`
	// Phase is queued (waiting for a load slot), read, instrument,
	// compile, image or describe.
	Phase string `json:"phase"`
	// Since is when the load began (UTC, milliseconds); ElapsedMS and
	// PhaseElapsedMS are the time since then and in the current phase,
	// when the document was made.
	Since          time.Time `json:"since"`
	ElapsedMS      int64     `json:"elapsed_ms"`
	PhaseElapsedMS int64     `json:"phase_elapsed_ms"`
	// PhaseTimeoutMS is the current phase's deadline, counted from its
	// start; absent while queued and once abandoned.
	PhaseTimeoutMS int64 `json:"phase_timeout_ms,omitempty"`
	// Abandoned is true once the loader gave the load up (refused at its
	// phase deadline — the refusal is in failures — or superseded by a
	// newer version of the file) while its work still runs and holds a
	// load slot: wazero's compiler cannot be interrupted.
	Abandoned bool `json:"abandoned"`
}

// ToolsCheck is /readyz's view of the tools folder: the loads in progress
// and the abandoned ones still holding a slot. Neither makes the process
// unready: it listens first and publishes modules as they load.
type ToolsCheck struct {
	Loading   int `json:"loading"`
	Abandoned int `json:"abandoned"`
}

// Loads is the projection of the registry's loads in progress, never
// nil; now is when the document is made.
func (p Process) Loads(now time.Time) []LoadingModule {
	out := []LoadingModule{}
	if p.Loading == nil {
		return out
	}
	for _, l := range p.Loading() {
		out = append(out, LoadingModule{
			File:           l.File,
			Phase:          l.Phase,
			Since:          l.Since.UTC().Truncate(time.Millisecond),
			ElapsedMS:      max(now.Sub(l.Since), 0).Milliseconds(),
			PhaseElapsedMS: max(now.Sub(l.PhaseSince), 0).Milliseconds(),
			PhaseTimeoutMS: l.PhaseTimeout.Milliseconds(),
			Abandoned:      l.Abandoned,
		})
	}
	return out
}

// ToolsCheck counts the loads in progress for /readyz; ok is false when
// the process has no view of them.
func (p Process) ToolsCheck() (c ToolsCheck, ok bool) {
	if p.Loading == nil {
		return c, false
	}
	for _, l := range p.Loading() {
		if l.Abandoned {
			c.Abandoned++
		} else {
			c.Loading++
		}
	}
	return c, true
}

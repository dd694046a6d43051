package wasmtool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// A Loader is the registry's loader of the tools folder: the registry
// holds it through [registry.Loader] and its modules through
// [registry.LoadedModule], and reads a refusal through
// [registry.LoadRefusal].
var (
	_ registry.Loader       = (*Loader)(nil)
	_ registry.LoadedModule = registryModule{}
	_ registry.TieredModule = registryModule{}
	_ registry.LoadRefusal  = (*LoadError)(nil)
)

// Refusal returns the error's reason and detail, as the registry publishes
// them.
func (e *LoadError) Refusal() (reason, detail string) { return string(e.Reason), e.Detail }

// Unreadable refuses, from what stat says of them, the files readFile
// would refuse: a module that is not a regular file ([NotRegular]), a
// module or sidecar over its size limit ([ModuleTooLarge],
// [SidecarTooLarge]). A sidecar that is not a regular file is refused
// when ReadModule opens it. The refusal is a *LoadError.
func (l *Loader) Unreadable(module registry.FileStat, sidecar *registry.FileStat) error {
	switch {
	case !module.Regular:
		return &LoadError{Reason: NotRegular, Err: errors.New("the module is not a regular file")}
	case module.Size > MaxModuleBytes:
		return &LoadError{Reason: ModuleTooLarge,
			Err: fmt.Errorf("the module's %d bytes are over the %d-byte limit", module.Size, MaxModuleBytes)}
	case sidecar != nil && sidecar.Size > MaxSidecarBytes:
		return &LoadError{Reason: SidecarTooLarge,
			Err: fmt.Errorf("the sidecar's %d bytes are over the %d-byte limit", sidecar.Size, MaxSidecarBytes)}
	}
	return nil
}

// ReadModule is [Loader.ReadFiles] with the sidecar at the path the
// registry names (registry.SidecarPath, the same name as [SidecarPath]),
// reporting to obs.
func (l *Loader) ReadModule(ctx context.Context, path, sidecar string, obs *registry.LoadObserver) (registry.ModuleFiles, error) {
	fs, err := runPhases(l, observed(ctx, obs), PhaseRead, func(context.Context, func(string)) (*Files, error) {
		return readFiles(path, sidecar)
	}, func(*Files) {})
	if err != nil {
		return registry.ModuleFiles{}, err
	}
	files := registry.ModuleFiles{Module: fs.Module.Data}
	if fs.Sidecar != nil {
		files.Sidecar = fs.Sidecar.Data
	}
	return files, nil
}

// LoadModule is [Loader.Load] of files, reporting to obs.
func (l *Loader) LoadModule(ctx context.Context, files registry.ModuleFiles, obs *registry.LoadObserver) (registry.LoadedModule, error) {
	t, err := l.Load(observed(ctx, obs), files.Module, files.Sidecar)
	if err != nil {
		return nil, err
	}
	return registryModule{t, l}, nil
}

// observed is ctx reporting to obs, when there is one.
func observed(ctx context.Context, obs *registry.LoadObserver) context.Context {
	if obs == nil {
		return ctx
	}
	return WithObserver(ctx, &Observer{Phase: obs.Phase, Abandoned: obs.Abandoned, Released: obs.Released})
}

// registryModule is a Tool as the registry holds it, with the loader that
// promotes it.
type registryModule struct {
	t *Tool
	l *Loader
}

func (m registryModule) ImplementationVersion() string   { return m.t.ImplementationVersion() }
func (m registryModule) Close(ctx context.Context) error { return m.t.Close(ctx) }

// Tier is [Tool.Tier]; Promote is [Loader.Promote] of the Tool.
func (m registryModule) Tier() string                      { return m.t.Tier() }
func (m registryModule) Promote(ctx context.Context) error { return m.l.Promote(ctx, m.t) }

// Services are the Tool's services, each usable and available one with
// the effective policy of every operation.
func (m registryModule) Services() []registry.ModuleService {
	out := make([]registry.ModuleService, len(m.t.services))
	for i, s := range m.t.services {
		out[i] = registry.ModuleService{ToolCode: s.ToolCode, Definition: s.Definition, Refusal: s.Refusal, Unavailable: s.Unavailable}
		if s.Refusal == nil && s.Unavailable == nil {
			out[i].Effective = make(map[string]policy.Effective, len(s.operations))
			for name, op := range s.operations {
				out[i].Effective[name] = op.effective
			}
		}
	}
	return out
}

// Run runs job with [Tool.Run], or [Tool.RunChecked] when job.Checked, and
// reports what was observed as an engine outcome: an item that reached its
// sandbox reports its fuel and its memory mode (wasm_instance_hard), limit
// and peak; a phase Run did not observe (reported as zero) is nil.
func (m registryModule) Run(ctx context.Context, job engine.Job) (*engine.Outcome, registry.GuestReport, error) {
	dl := Deadlines{Soft: job.Soft, Hard: job.Hard}
	var out *Outcome
	var err error
	if job.Checked {
		out, err = m.t.RunChecked(ctx, job.ToolCode, job.Operation.Name, job.Parameters, dl)
	} else {
		out, err = m.t.Run(ctx, job.ToolCode, job.Parameters, dl)
	}
	if out == nil {
		return nil, registry.GuestReport{}, err
	}
	o := &engine.Outcome{
		Result: out.Result,
		Phases: engine.Phases{
			Startup:          phase(out.Startup),
			InputValidation:  phase(out.InputValidation),
			Compute:          phase(out.Compute),
			OutputValidation: phase(out.OutputValidation),
			Serialization:    phase(out.Serialization),
		},
	}
	// The instance ran when its startup or call was timed; an item refused
	// before it (its input) has no sandbox to report.
	if out.Startup > 0 || out.Compute > 0 {
		fuel, peak := out.FuelUsed, int64(out.MemoryPeakBytes)
		o.FuelUsed = &fuel
		o.Memory = &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: m.t.memoryLimit(job.ToolCode, job.Operation), PeakBytes: &peak}
	}
	return o, registry.GuestReport{Log: out.Log, Export: out.Export, PluginError: out.PluginError}, err
}

// memoryLimit is the memory limit an item of service code enforces under
// the effective policy eff: its memory limit, or a sidecar plugin's
// memory.max_pages when lower.
func (t *Tool) memoryLimit(code string, eff policy.Effective) int64 {
	limit := eff.MemoryLimitBytes
	if s, ok := t.byCode[code]; ok {
		if op, ok := s.operations[eff.Name]; ok && op.export != "" && op.extism.MaxPages > 0 {
			limit = min(limit, op.extism.MaxPages*tooldef.PageBytes)
		}
	}
	return limit
}

// phase is a measured phase, nil when Run did not observe it: it reports
// an unobserved phase as zero, and a measured one is never zero on a
// monotonic clock.
func phase(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return engine.Duration(d)
}

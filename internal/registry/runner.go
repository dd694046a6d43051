package registry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"toolhost/internal/engine"
	"toolhost/internal/toolerr"
	"toolhost/internal/wasmtool"
)

// module is one loaded module file, shared by every generation that
// publishes it. It counts the items running on it: once retired (its file
// was replaced or removed, or the registry closed) it takes no new item,
// and its Tool is closed when the last running item ends.
type module struct {
	tool *wasmtool.Tool
	file string
	log  *slog.Logger
	// closed tells the registry the Tool is closed; called once.
	closed func()

	mu       sync.Mutex
	runs     int
	retired  bool
	shutdown bool // retired by Registry.Close
	done     bool // the Tool is closed
}

// acquire counts one more running item. It refuses once the module is
// retired: the caller holds a superseded snapshot (version_mismatch,
// retryable: resolve the service again) or the registry is closed
// (service_unavailable).
func (m *module) acquire() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retired {
		if m.shutdown {
			return toolerr.Raised(toolerr.ServiceUnavailable, false)
		}
		return toolerr.New(toolerr.VersionMismatch)
	}
	m.runs++
	return nil
}

// release ends one running item, closing a retired module after its last.
func (m *module) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs--
	m.closeIfIdle()
}

// retire takes the module out of service. It is safe to call more than
// once; the first call decides whether it was a shutdown.
func (m *module) retire(shutdown bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.retired {
		m.retired, m.shutdown = true, shutdown
	}
	m.closeIfIdle()
}

// closeIfIdle closes a retired module with no running item. m.mu is held.
func (m *module) closeIfIdle() {
	if !m.retired || m.runs > 0 || m.done {
		return
	}
	m.done = true
	if err := m.tool.Close(context.Background()); err != nil {
		m.log.Warn("registry: closing a retired module", "file", m.file, "error", err)
	}
	m.closed()
}

// runHook, when set, runs after a WASM item is counted on its module and
// before it starts: tests use it to hold an item in flight across a swap.
var runHook atomic.Pointer[func()]

// wasmRunner runs the items of one service of a module: it adapts
// wasmtool.Tool.Run to engine.Runner and counts the item on its module.
type wasmRunner struct {
	mod *module
	svc *wasmtool.Service
}

// Run runs job on the module's Tool. job.ToolCode must be the service's
// code (otherwise unknown_tool), an unavailable service refuses every item
// (tool_unavailable), and job.Operation must be the published
// effective policy of its operation: wasmtool enforces the policy it
// clamped at load (the operation is read from the parameters), so a job
// carrying another policy — one the module would not enforce — is refused
// with execution_failed and logged as the executor's error. Job.Soft and
// Job.Hard become the item's deadlines.
//
// An item that reaches its sandbox reports its fuel and its memory mode
// (wasm_instance_hard), limit and peak; a phase wasmtool did not observe
// (reported as zero) is nil.
func (r *wasmRunner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	if job.ToolCode != r.svc.ToolCode {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if r.svc.Unavailable != nil {
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	if eff, ok := r.svc.Effective(job.Operation.Name); !ok || eff != job.Operation {
		r.mod.log.Error("registry: job operation policy is not the published effective policy",
			"file", r.mod.file, "tool_code", job.ToolCode, "operation", job.Operation.Name, "execution_id", job.ExecutionID)
		return nil, toolerr.New(toolerr.ExecutionFailed)
	}
	if err := r.mod.acquire(); err != nil {
		return nil, err
	}
	defer r.mod.release()
	if h := runHook.Load(); h != nil {
		(*h)()
	}
	dl := wasmtool.Deadlines{Soft: job.Soft, Hard: job.Hard}
	var out *wasmtool.Outcome
	var err error
	if job.Checked {
		out, err = r.mod.tool.RunChecked(ctx, job.ToolCode, job.Operation.Name, job.Parameters, dl)
	} else {
		out, err = r.mod.tool.Run(ctx, job.ToolCode, job.Parameters, dl)
	}
	if out == nil {
		return nil, err
	}
	if len(out.Log) > 0 {
		r.mod.log.Debug("registry: guest log", "file", r.mod.file, "tool_code", job.ToolCode,
			"execution_id", job.ExecutionID, "log", string(out.Log))
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
		Memory: &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: job.Operation.MemoryLimitBytes},
	}
	// The instance ran when its startup or call was timed.
	if out.Startup > 0 || out.Compute > 0 {
		fuel, peak := out.FuelUsed, int64(out.MemoryPeakBytes)
		o.FuelUsed, o.Memory.PeakBytes = &fuel, &peak
	}
	return o, err
}

// phase is a measured phase, nil when wasmtool did not observe it: it
// reports an unobserved phase as zero, and a measured one is never zero on
// a monotonic clock.
func phase(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return engine.Duration(d)
}

var _ engine.Runner = (*wasmRunner)(nil)

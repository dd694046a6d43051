package registry

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// module is one loaded module file, shared by every generation that
// publishes it. It counts the items running on it: once retired (its file
// was replaced or removed, or the registry closed) it takes no new item,
// and its LoadedModule is closed when the last running item ends.
type module struct {
	tool LoadedModule
	file string
	log  *slog.Logger
	// closed tells the registry the Tool is closed; called once.
	closed func()

	mu       sync.Mutex
	runs     int
	retired  bool
	shutdown bool // retired by Registry.Close
	done     bool // the Tool is closed
	// stopPromotion ends the module's promotion (promote.go), if one
	// runs; promotionFailure is why it failed, as diagnostics show it.
	stopPromotion    func()
	promotionFailure string
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
		if m.stopPromotion != nil {
			m.stopPromotion()
		}
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
// LoadedModule.Run to engine.Runner, counts the item on its module and
// logs the guest's log for the operator.
type wasmRunner struct {
	mod *module
	svc ModuleService
}

// Run runs job on the module's Tool. job.ToolCode must be the service's
// code (otherwise unknown_tool), an unavailable service refuses every item
// (tool_unavailable), and job.Operation must be the published
// effective policy of its operation: the loader enforces the policy it
// clamped at load (wasmtool reads the operation from the parameters), so a
// job carrying another policy — one the module would not enforce — is
// refused with execution_failed and logged as the executor's error.
// Job.Soft and Job.Hard become the item's deadlines.
func (r *wasmRunner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	if job.ToolCode != r.svc.ToolCode {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	if r.svc.Unavailable != nil {
		return nil, toolerr.New(toolerr.ToolUnavailable)
	}
	if eff, ok := r.svc.Effective[job.Operation.Name]; !ok || eff != job.Operation {
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
	out, rep, err := r.mod.tool.Run(ctx, job)
	if rep.PluginError != "" {
		r.mod.log.Warn("registry: plugin error", "file", r.mod.file, "export", rep.Export, "tool_code", job.ToolCode,
			"execution_id", job.ExecutionID, "error", rep.PluginError)
	}
	for log := rep.Log; len(log) > 0; {
		line := log
		if i := bytes.IndexByte(log, '\n'); i >= 0 {
			line, log = log[:i], log[i+1:]
		} else {
			log = nil
		}
		if len(line) == 0 {
			continue
		}
		level, msg := guestLogLevel(line)
		r.mod.log.Log(ctx, level, "registry: guest log", "file", r.mod.file, "tool_code", job.ToolCode,
			"execution_id", job.ExecutionID, "log", string(msg))
	}
	return out, err
}

// guestLevels are the tags of the host's guest log lines (host.Result.Log)
// and the level each is logged at: the Extism log_* levels, WASI's stdout
// and stderr, and the host's own notes.
var guestLevels = []struct {
	tag   string
	level slog.Level
}{
	{"[TRACE] ", slog.LevelDebug}, {"[DEBUG] ", slog.LevelDebug}, {"[INFO] ", slog.LevelInfo},
	{"[WARN] ", slog.LevelWarn}, {"[ERROR] ", slog.LevelError},
	{"[STDOUT] ", slog.LevelInfo}, {"[STDERR] ", slog.LevelWarn}, {"[host] ", slog.LevelInfo},
}

// guestLogLevel returns the level of one guest log line and the line
// without its tag; an untagged line (a note such as "[log truncated]") is
// logged at Info as it is.
func guestLogLevel(line []byte) (slog.Level, []byte) {
	for _, g := range guestLevels {
		if rest, ok := bytes.CutPrefix(line, []byte(g.tag)); ok {
			return g.level, rest
		}
	}
	return slog.LevelInfo, line
}

// ReturnsAtContextEnd marks the WASM engine as executor.Prompt: an item
// is an in-process instance that the host interrupts when its context
// ends (docs/host.md), so the executor may run a one-item batch of it on
// the caller's goroutine.
func (r *wasmRunner) ReturnsAtContextEnd() {}

var (
	_ engine.Runner                      = (*wasmRunner)(nil)
	_ interface{ ReturnsAtContextEnd() } = (*wasmRunner)(nil) // executor.Prompt, which registry cannot import
)

// Package engine is the seam between the executor and the two kinds of
// tool engines: WASM modules (package wasmtool) and native packages run in
// supervised worker processes (package supervisor). The executor drives
// every engine through [Runner] and reads the same [Outcome] back, so that
// admission, deadlines, metrics and cleanup do not depend on which engine
// ran the item.
package engine

import (
	"context"
	"time"

	"github.com/toolhost/toolhost/internal/policy"
)

// Runner runs items of the services of one package. Each Run is one item
// in its own fresh sandbox (a new WASM instance, a new worker process):
// nothing survives from one item to the next. Implementations are safe for
// concurrent use.
type Runner interface {
	// Run computes job. The error, when not nil, is a *toolerr.Error with
	// the platform's code (or the tool's own, raised by the tool). The
	// outcome may be non-nil beside an error: it then carries what was
	// observed before the failure (phases, fuel, memory). Run returns only
	// once the sandbox is gone: the instance closed, the process tree
	// confirmed dead; an engine that cannot confirm that returns an error
	// with the cleanup_failed code.
	Run(ctx context.Context, job Job) (*Outcome, error)
}

// Job is one item as the engine sees it: server-owned identity, deadlines
// and limits, and the caller's parameters. It carries no principal.
type Job struct {
	// ExecutionID identifies this execution in results and logs.
	ExecutionID string
	// ToolCode is the service to run.
	ToolCode string
	// Operation is the effective (clamped) policy of the item's operation.
	Operation policy.Effective
	// Parameters is the caller's parameters document, canonical JSON, with
	// the caller's own values.
	Parameters []byte
	// Checked reports that the parameters were validated against the
	// service's input schema already (by the application layer, once per
	// run): an engine that validates in-process may skip decoding them.
	Checked bool
	// Soft and Hard are absolute deadlines. Hard includes the sandbox's
	// startup; Soft is when checkpoints start telling the tool to stop.
	Soft, Hard time.Time
	// Files are the item's input files: a job's files, in the job's own
	// folder, which the engine opens by path and must never write to
	// (they may be hard links shared with another job). Nil for an item
	// without files. Only native engines take them (docs/supervisor.md,
	// "Files"); the WASM engine has no filesystem.
	Files []File
	// OutDir, when not empty, is the job's empty output folder: the
	// engine writes its output files there, and the result names them.
	OutDir string
}

// File is one input file of an item.
type File struct {
	// Name is the input's name in the tool's declaration ("file").
	Name string `json:"name"`
	// Path is the file's absolute path.
	Path string `json:"path"`
	// MediaType is the sniffed media type.
	MediaType string `json:"media_type"`
	// SizeBytes is the file's size.
	SizeBytes int64 `json:"size_bytes"`
}

// Outcome is what an engine observed of one item.
type Outcome struct {
	// Result is the result document, canonical JSON, validated against
	// the output schema. Nil on failure.
	Result []byte
	// Phases are the measured phases; a nil phase was not observed.
	Phases Phases
	// FuelUsed is the WASM fuel the item consumed; nil for native items.
	FuelUsed *int64
	// Memory is the item's memory enforcement, limit and peak; nil when
	// no sandbox was started.
	Memory *Memory
}

// Phases are an item's measured durations inside its sandbox. Each is nil
// when the phase was not observed (never an invented zero). Cleanup is the
// engine's confirmed teardown of the sandbox (the worker's process tree and
// cgroup, the WASM instance), which Run performs before it returns.
type Phases struct {
	Startup, InputValidation, Compute, OutputValidation, Serialization *time.Duration
	Cleanup                                                            *time.Duration
}

// Memory reports how an item's memory was bounded and what it used.
type Memory struct {
	// Mode is one of the Memory* constants.
	Mode string `json:"mode"`
	// LimitBytes is the limit enforced (or observed against).
	LimitBytes int64 `json:"limit_bytes"`
	// PeakBytes is the most memory observed; nil when nothing was.
	PeakBytes *int64 `json:"peak_bytes"`
}

// The memory enforcement modes. The first four are the seed contract's;
// MemoryWASMHard is a WASM instance, whose linear memory and host-side
// blocks cannot grow past the limit.
const (
	MemoryCgroupV2Hard        = "cgroup_v2_hard"
	MemoryCgroupV1Hard        = "cgroup_v1_hard"
	MemoryProcessTreeObserved = "process_tree_observed"
	MemoryUnavailable         = "unavailable"
	MemoryWASMHard            = "wasm_instance_hard"
)

// Duration returns a pointer to d, for Phases.
func Duration(d time.Duration) *time.Duration { return &d }

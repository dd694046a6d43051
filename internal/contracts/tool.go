package contracts

import "github.com/toolhost/toolhost/internal/tooldef"

// The tool model's vocabulary, as tools.tool@1 shows it: the types are
// package tooldef's (the descriptor is a projection of the model), aliased
// here so that a descriptor reads as one contract.
type (
	// Status is a tool's status in tools.tool@1.
	Status = tooldef.Status
	// Execution is how a tool runs in tools.tool@1.
	Execution = tooldef.Execution
	// RunJob is what a job tool's run submits: a job of Type whose input
	// is { ...input, ...Preset, tool: Operation }.
	RunJob = tooldef.RunJob
	// LegacyRoute is a deprecated route that reaches the tool.
	LegacyRoute = tooldef.LegacyRoute
	// FileInput is a file a tool accepts, by part name.
	FileInput = tooldef.FileInput
)

// The statuses.
const (
	StatusStable      = tooldef.StatusStable
	StatusBeta        = tooldef.StatusBeta
	StatusPreview     = tooldef.StatusPreview
	StatusUnavailable = tooldef.StatusUnavailable
)

// Statuses lists every status.
var Statuses = tooldef.Statuses

// The executions: client (the page runs the tool; with API true the
// server answers API callers inline with the same engine), sync (the
// server answers inline), job (a run submits a job of Run.Job.Type).
const (
	ExecutionClient = tooldef.ExecutionClient
	ExecutionSync   = tooldef.ExecutionSync
	ExecutionJob    = tooldef.ExecutionJob
)

// Executions lists every execution.
var Executions = tooldef.Executions

// The probe markers: a tool that needs [CapabilityProbe] or counts against
// [QuotaClassProbe] is a network probe — it sends traffic to a host its
// caller chose — and must carry both, egress true and auth.anonymous false.
const (
	CapabilityProbe = tooldef.CapabilityProbe
	QuotaClassProbe = tooldef.QuotaClassProbe
)

// Tool is a tools.tool@1 descriptor. The zero value is not valid: build one
// with the catalogue's projection. Slices are never nil in a built
// descriptor, so that they encode as [].
type Tool struct {
	ID      string `json:"id"`
	Family  string `json:"family"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Status  Status `json:"status"`
	// StatusReason is set exactly when Status is unavailable.
	StatusReason string    `json:"statusReason,omitempty"`
	Execution    Execution `json:"execution"`
	API          bool      `json:"api"`
	// Run is nil (null) exactly when API is false.
	Run *RunRoute `json:"run"`
	// Input is the input JSON Schema (a decoded JSON value), or in a list
	// a [SchemaRef].
	Input  any         `json:"input"`
	Files  []FileInput `json:"files"`
	Output Output      `json:"output"`
	Limits Limits      `json:"limits"`
	Auth   Auth        `json:"auth"`
	// QuotaClass names the work a run counts against, never a tier.
	QuotaClass string `json:"quotaClass"`
	// Cost is the weight of one run in its quota class, at least 1.
	Cost   int      `json:"cost"`
	Egress bool     `json:"egress"`
	Hosts  []string `json:"hosts"`
	Docs   Docs     `json:"docs"`
}

// RunRoute is how the run API runs a tool.
type RunRoute struct {
	// Endpoint is the tool's own path, [RunEndpoint] of its id.
	Endpoint string `json:"endpoint"`
	// Method is "POST".
	Method string `json:"method"`
	// Job is set for a job tool only.
	Job    *RunJob       `json:"job,omitempty"`
	Legacy []LegacyRoute `json:"legacy"`
}

// Output is what a run produces.
type Output struct {
	// Schema is the result's JSON Schema, or in a list a [SchemaRef].
	Schema any `json:"schema"`
	// Files says whether a run produces files.
	Files bool `json:"files"`
}

// Limits are a tool's effective limits.
type Limits struct {
	// Operations are the clamped limits of each operation, in declaration
	// order; empty when the policy cannot be clamped.
	Operations []OperationLimits `json:"operations"`
	// PerTargetPerMinute is the per-target throttle across all callers; 0
	// means none.
	PerTargetPerMinute int `json:"perTargetPerMinute,omitempty"`
}

// OperationLimits are one operation's effective limits, the ones the
// executor enforces.
type OperationLimits struct {
	Operation         string `json:"operation"`
	MaxParameterBytes int64  `json:"maxParameterBytes"`
	MaxResultBytes    int64  `json:"maxResultBytes"`
	QueueTimeoutMS    int64  `json:"queueTimeoutMs"`
	HardTimeoutMS     int64  `json:"hardTimeoutMs"`
	RequestTimeoutMS  int64  `json:"requestTimeoutMs"`
	ClientTimeoutMS   int64  `json:"clientTimeoutMs"`
	MemoryLimitBytes  int64  `json:"memoryLimitBytes"`
}

// Auth is who may run a tool.
type Auth struct {
	// Anonymous false: a run needs at least a browser session or a token.
	Anonymous bool `json:"anonymous"`
	// Capability is the capability a run needs beyond tools.tool.run, or
	// nil (null).
	Capability *string `json:"capability"`
}

// Docs points at a tool's documentation page.
type Docs struct {
	// Path is relative to the documentation site.
	Path    string `json:"path"`
	Version string `json:"version"`
}

// ToolList is a tools.tool-list@1 document.
type ToolList struct {
	// Tools are sorted by id, their schemas [SchemaRef]s.
	Tools []Tool `json:"tools"`
	Count int    `json:"count"`
	// Hosts is the sorted union of the tools' hosts.
	Hosts []string `json:"hosts"`
}

// Ref is a JSON Schema that only references another: {"$ref": "…"}.
type Ref struct {
	Ref string `json:"$ref"`
}

// The two schemas of a tool, as named in its schema document's $defs.
const (
	SchemaInput  = "input"
	SchemaOutput = "output"
)

// RunEndpoint returns the run path of tool id: /api/v1/tools/{id}/run.
func RunEndpoint(id string) string { return "/api/v1/tools/" + id + "/run" }

// SchemaEndpoint returns the path of tool id's schema document:
// /api/v1/tools/{id}/schema.
func SchemaEndpoint(id string) string { return "/api/v1/tools/" + id + "/schema" }

// SchemaRef returns the reference a list carries for schema which
// ([SchemaInput] or [SchemaOutput]) of tool id:
// /api/v1/tools/{id}/schema#/$defs/{which}.
func SchemaRef(id, which string) Ref {
	return Ref{Ref: SchemaEndpoint(id) + "#/$defs/" + which}
}

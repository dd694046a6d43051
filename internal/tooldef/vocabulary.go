package tooldef

// The vocabulary of a service's place on the tools platform (ADR-027). The
// tool model owns it: package contracts, whose tools.tool@1 descriptor is
// a projection of the model, aliases these types. The JSON tags are the
// descriptor's member names; a declaration's platform block is decoded
// field by field (snake_case, see decodePlatform), never through them.

// Status is a tool's status.
type Status string

// The statuses.
const (
	StatusStable      Status = "stable"
	StatusBeta        Status = "beta"
	StatusPreview     Status = "preview"
	StatusUnavailable Status = "unavailable"
)

// Statuses lists every status.
var Statuses = []Status{StatusStable, StatusBeta, StatusPreview, StatusUnavailable}

// Execution is how a tool runs.
type Execution string

// The executions.
const (
	// ExecutionClient: the page runs the tool in the browser. With API true
	// the server has the same engine for API callers and answers inline.
	ExecutionClient Execution = "client"
	// ExecutionSync: the server answers a run inline.
	ExecutionSync Execution = "sync"
	// ExecutionJob: a run submits a job of RunJob.Type.
	ExecutionJob Execution = "job"
)

// Executions lists every execution.
var Executions = []Execution{ExecutionClient, ExecutionSync, ExecutionJob}

// The probe markers: a tool that needs [CapabilityProbe] or counts against
// [QuotaClassProbe] is a network probe — it sends traffic to a host its
// caller chose — and must carry both, egress true and anonymous false.
const (
	CapabilityProbe = "tools.net.probe"
	QuotaClassProbe = "tools-probe"
)

// RunJob is what a job tool's run submits: a job of Type whose input is
// { ...input, ...Preset, tool: Operation }.
type RunJob struct {
	Type      string `json:"type"`
	Operation string `json:"operation"`
	// Preset holds input fields the tool fixes; never nil in a built
	// descriptor, never holding "tool".
	Preset map[string]any `json:"preset"`
}

// LegacyRoute is a deprecated route that reaches the tool.
type LegacyRoute struct {
	Method string `json:"method"`
	// Path is under /api/process, /api/net or /api/dev; ":name" segments
	// are parameters.
	Path string `json:"path"`
	// Operation is the operation the route runs, when the tool has several.
	Operation string `json:"operation,omitempty"`
	// Selector is, on a route several tools share, the legacy tool name in
	// the request that selects this tool.
	Selector string `json:"selector,omitempty"`
}

// FileInput is a file a tool accepts, by part name.
type FileInput struct {
	Name string `json:"name"`
	// Types are the accepted media types, sniffed from the bytes.
	Types    []string `json:"types"`
	MaxBytes int64    `json:"maxBytes"`
}

package registry

import (
	"cmp"
	"slices"
	"sort"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Service is one published service of a snapshot: a checked definition,
// its operations' effective policies, and the runner of its package.
type Service struct {
	Definition *tooldef.Definition
	// Effective holds each operation's clamped policy, by operation name.
	// It is nil when the service is Unavailable.
	Effective map[string]policy.Effective
	// Unavailable is set when the service is listed but cannot run: code
	// invalid_operation_policy when an operation policy cannot be clamped
	// to the platform, tool_unavailable (with IssueEngineMissing issues)
	// when a builtin's engine is missing on the host. The service is listed
	// in diagnostics and as an unavailable summary, and never runs.
	Unavailable *toolerr.Error
	// Runner runs the service's items.
	Runner engine.Runner
	// Source is the sanitised origin of the package: "<name>.wasm" for a
	// module of the tools folder, "builtin/<name>" for a package compiled
	// into the binary.
	Source string
	// input is the compiled input schema (view.go).
	input inputSchema
}

// IssueEngineMissing is the issue code, in a service's Unavailable error,
// of an engine the host lacks; its path is the engine's name.
const IssueEngineMissing = "engine_missing"

// Code returns the service's tool code.
func (s *Service) Code() string { return s.Definition.ToolCode }

// Failure is a sanitised registration failure: a file name without its
// path, a bounded reason code, and the tool code when one was readable.
// It never carries a path, a raw message or declaration text.
type Failure struct {
	// File is "<name>.wasm" or "builtin/<name>".
	File string `json:"filename"`
	// ToolCode is the claimed code, when the claim had a readable one.
	ToolCode string `json:"tool_code,omitempty"`
	// Reason is one of the Reason* codes.
	Reason string `json:"reason"`
	// Detail is a finer stable code (a tooldef or wasmtool reason), when
	// there is one.
	Detail string `json:"detail,omitempty"`
}

// The failure reasons, in priority order for a claim that has several.
const (
	ReasonDuplicateCode     = "duplicate_code"
	ReasonImportFailed      = "import_failed"
	ReasonDefinitionInvalid = "definition_invalid"
	ReasonReservedCode      = "reserved_code"
)

// Snapshot is one published generation of the registry: immutable,
// services sorted by tool code. It is safe for concurrent use.
type Snapshot struct {
	generation uint64
	services   []*Service // sorted by code
	failures   []Failure  // sorted by file, code, reason, detail
	jobTools   map[jobKey]*Service
	// starting is set on a snapshot published while loads of the tools
	// folder's first scan were still running (Starting).
	starting bool
}

// NewSnapshot returns a snapshot of services and failures, sorted. It is
// for the registry and for tests of the packages the snapshot feeds.
func NewSnapshot(generation uint64, services []*Service, failures []Failure) *Snapshot {
	s := &Snapshot{generation: generation, services: slices.Clone(services), failures: slices.Clone(failures)}
	sort.Slice(s.services, func(i, j int) bool { return s.services[i].Code() < s.services[j].Code() })
	slices.SortFunc(s.failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.ToolCode, b.ToolCode),
			cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Detail, b.Detail))
	})
	s.jobTools = indexJobTools(s.services)
	// Each service's input schema is compiled when it is first published
	// (once per service, whatever the snapshots that share it), so that
	// no run compiles one.
	for _, svc := range s.services {
		if svc.Available() {
			_, _ = svc.InputValidator()
		}
	}
	return s
}

// Generation counts publications, starting at 1.
func (s *Snapshot) Generation() uint64 { return s.generation }

// Starting reports whether s was published while loads of the tools
// folder's first scan were still running: a code s does not have may then
// be a module's that has not loaded yet, so its absence proves nothing. The
// snapshot published with the first scan's last outcome, and every later
// one, is not starting (a module dropped into the folder later is absent
// until it loads, as before).
func (s *Snapshot) Starting() bool { return s.starting }

// Services returns the published services, sorted by code. The slice is
// a copy; the services are shared and immutable.
func (s *Snapshot) Services() []*Service { return slices.Clone(s.services) }

// Service returns the published service with the given code.
func (s *Snapshot) Service(code string) (*Service, bool) {
	i, ok := sort.Find(len(s.services), func(i int) int {
		switch c := s.services[i].Code(); {
		case code < c:
			return -1
		case code > c:
			return 1
		}
		return 0
	})
	if !ok {
		return nil, false
	}
	return s.services[i], true
}

// Failures returns the sanitised registration failures.
func (s *Snapshot) Failures() []Failure { return slices.Clone(s.failures) }

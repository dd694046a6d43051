// Package toolerr defines the platform error of the tool contract: the one
// error type every per-item outcome, definition refusal and admission refusal
// is expressed in.
//
// An [Error] carries a stable [Code], a Retryable flag and at most
// [MaxIssues] sanitised [Issue] values plus the total issue count. The
// retryable rule of the contract's "Error boundaries" section is encoded in
// [New]: only queue_full, queue_timeout, execution_limit, execution_timeout,
// version_mismatch and a supervisor-raised service_unavailable are retryable.
// A tool's own error keeps the flag the tool raised it with ([Raised]).
//
// Nothing in an Error is taken from caller input or from a validator's
// message: codes are constants and issue paths are sanitised by [NewIssue].
package toolerr

import (
	"errors"
	"regexp"
)

// Code is a stable platform error code. Its string form is the wire value.
type Code string

// The platform error codes, grouped as in the contract's "Error boundaries".
const (
	// Lookup and availability.
	UnknownTool        Code = "unknown_tool"
	ToolUnavailable    Code = "tool_unavailable"
	VersionMismatch    Code = "version_mismatch"
	ServiceUnavailable Code = "service_unavailable"

	// Parameters.
	InvalidParameters  Code = "invalid_parameters"
	InputLimitExceeded Code = "input_limit_exceeded"

	// Admission and waiting.
	QueueFull    Code = "queue_full"
	QueueTimeout Code = "queue_timeout"

	// Execution.
	ExecutionLimit   Code = "execution_limit"
	ExecutionTimeout Code = "execution_timeout"
	MemoryLimit      Code = "memory_limit"
	WorkerCrashed    Code = "worker_crashed"
	ExecutionFailed  Code = "execution_failed"

	// Output.
	InvalidOutput       Code = "invalid_output"
	OutputLimitExceeded Code = "output_limit_exceeded"

	// Termination.
	CleanupFailed Code = "cleanup_failed"

	// Definition validation: an operation policy that cannot be clamped
	// into a usable effective policy. It makes a service unavailable; it is
	// never an item outcome.
	InvalidOperationPolicy Code = "invalid_operation_policy"
)

// Codes lists every platform code in the order of the contract's table,
// followed by the definition code [InvalidOperationPolicy].
var Codes = []Code{
	UnknownTool, ToolUnavailable, VersionMismatch, ServiceUnavailable,
	InvalidParameters, InputLimitExceeded,
	QueueFull, QueueTimeout,
	ExecutionLimit, ExecutionTimeout, MemoryLimit, WorkerCrashed, ExecutionFailed,
	InvalidOutput, OutputLimitExceeded,
	CleanupFailed,
	InvalidOperationPolicy,
}

// Known reports whether c is one of [Codes].
func (c Code) Known() bool {
	for _, k := range Codes {
		if k == c {
			return true
		}
	}
	return false
}

// Retryable reports the platform's retryable rule for c: true only for
// queue_full, queue_timeout, execution_limit, execution_timeout,
// version_mismatch and service_unavailable. The service_unavailable of the
// worker's non-POSIX guard is the one exception the rule names; it is built
// with [Raised] and an explicit false.
func (c Code) Retryable() bool {
	switch c {
	case QueueFull, QueueTimeout, ExecutionLimit, ExecutionTimeout, VersionMismatch, ServiceUnavailable:
		return true
	}
	return false
}

// Limits on the issues an Error carries.
const (
	// MaxIssues is the most issues an Error keeps; IssueCount keeps the total.
	MaxIssues = 32
	// MaxPathSegments is the most path segments an Issue keeps.
	MaxPathSegments = 16
	// maxSegmentBytes is the longest name kept verbatim in a path.
	maxSegmentBytes = 64
)

// RedactedSegment replaces a path segment that is not safe to publish: a
// property name that is not a plain identifier, so possibly caller data.
const RedactedSegment = "*"

// Issue is one sanitised validation finding: a stable code and the location
// it was found at, as object names and array indices from the document root.
type Issue struct {
	Code string   `json:"code"`
	Path []string `json:"path"`
}

var safeSegment = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

// NewIssue returns an Issue with a sanitised path: at most [MaxPathSegments]
// segments (the first ones are kept), and every segment that is not an array
// index or a plain name of at most 64 bytes of [A-Za-z0-9_.-] replaced by
// [RedactedSegment]. The path is never nil, so it encodes as [].
func NewIssue(code string, path ...string) Issue {
	n := min(len(path), MaxPathSegments)
	out := make([]string, n)
	for i := range n {
		s := path[i]
		if len(s) > maxSegmentBytes || !safeSegment.MatchString(s) {
			s = RedactedSegment
		}
		out[i] = s
	}
	return Issue{Code: code, Path: out}
}

// Error is the platform error. Its fields are safe to publish as they are.
type Error struct {
	Code      Code `json:"code"`
	Retryable bool `json:"retryable"`
	// Message is set only on a tool's own error: the tool author's short
	// text (see docs/guest-abi.md). The platform never writes one, so no
	// validator message or caller value reaches it from here.
	Message    string  `json:"message,omitempty"`
	Issues     []Issue `json:"issues"`
	IssueCount int     `json:"issue_count"`
}

// New returns an Error with code c, the platform's retryable rule for c and
// the given issues, bounded to [MaxIssues] with IssueCount the total.
func New(c Code, issues ...Issue) *Error {
	return Raised(c, c.Retryable(), issues...)
}

// Raised returns an Error with an explicit retryable flag: a tool's own
// error keeps the flag it was raised with, and the worker's non-POSIX guard
// raises a service_unavailable that is not retryable.
func Raised(c Code, retryable bool, issues ...Issue) *Error {
	kept := issues[:min(len(issues), MaxIssues)]
	return &Error{Code: c, Retryable: retryable, Issues: append([]Issue{}, kept...), IssueCount: len(issues)}
}

// Error returns the code, which is the whole public meaning of the error.
func (e *Error) Error() string { return string(e.Code) }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, toolerr.New(toolerr.QueueFull)) tests the code alone.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// CodeOf returns the code of the first *Error in err's chain and true, or
// "" and false when there is none.
func CodeOf(err error) (Code, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return "", false
}

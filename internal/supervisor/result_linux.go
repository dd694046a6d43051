// The result frame turned into the job's outcome: the result decoded
// strictly, validated and re-encoded; a worker's error kept to the codes a
// worker may send, with sanitised issues and a bounded message.

package supervisor

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// accept turns the result frame into the outcome. The supervisor does not
// trust the frame more than the worker: the result is decoded strictly,
// validated against the output schema and re-encoded canonically; an error
// is kept to the codes a worker may send, with sanitised issues.
func (w *worker) accept(payload []byte, out *engine.Outcome) error {
	var rf resultFrame
	if err := decodeFrame(payload, kindResult, &rf); err != nil {
		return w.crashed("refusing the result frame", err)
	}
	if rf.ExecutionID != w.job.ExecutionID {
		return w.crashed("refusing the result frame", errors.New("it is for another execution"))
	}
	out.Phases.InputValidation = phase(rf.Phases.InputValidation)
	out.Phases.Compute = phase(rf.Phases.Compute)
	out.Phases.OutputValidation = phase(rf.Phases.OutputValidation)
	out.Phases.Serialization = phase(rf.Phases.Serialization)
	switch {
	case rf.Error != nil && rf.Result == nil:
		e, ok := w.sanitize(rf.Error)
		if !ok {
			return w.crashed("refusing the result frame", fmt.Errorf("unknown error code %q", rf.Error.Code))
		}
		return e
	case rf.Error == nil && rf.Result != nil:
	default:
		return w.crashed("refusing the result frame", errors.New("it holds neither or both of result and error"))
	}
	limit := int(w.job.Operation.MaxResultBytes)
	doc, err := wire.Decode(rf.Result, wire.Limits{MaxBytes: limit, MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooLarge) {
			return toolerr.New(toolerr.OutputLimitExceeded)
		}
		return toolerr.New(toolerr.InvalidOutput, toolerr.NewIssue("invalid_json"))
	}
	if err := w.svc.output.Validate(doc, toolerr.InvalidOutput); err != nil {
		return err
	}
	if out.Result, err = wire.Encode(doc, wire.Limits{MaxBytes: limit}); err != nil {
		return toolerr.New(toolerr.OutputLimitExceeded)
	}
	return nil
}

// phase converts a phase of the result frame; nil stays unobserved, and a
// negative value is not a measurement.
func phase(ns *int64) *time.Duration {
	if ns == nil || *ns < 0 {
		return nil
	}
	return engine.Duration(time.Duration(*ns))
}

// sanitize rebuilds an error the worker sent. A code the platform alone
// decides (worker_crashed, memory_limit, cleanup_failed, admission and
// lookup codes) becomes execution_failed; an unknown code is a protocol
// violation (false). Issues are sanitised again and bounded; a message is
// cut to 512 bytes of valid UTF-8; the retryable flag is the worker's for a
// tool's own error (one with a message) and the platform rule otherwise.
func (w *worker) sanitize(e *toolerr.Error) (*toolerr.Error, bool) {
	if !e.Code.Known() {
		return nil, false
	}
	switch e.Code {
	case toolerr.CleanupFailed, toolerr.WorkerCrashed, toolerr.MemoryLimit, toolerr.QueueFull, toolerr.QueueTimeout,
		toolerr.ServiceUnavailable, toolerr.UnknownTool, toolerr.ToolUnavailable, toolerr.InvalidOperationPolicy:
		w.log.Warn("supervisor: the worker sent a code only the platform decides", "code", e.Code)
		return toolerr.New(toolerr.ExecutionFailed), true
	}
	issues := make([]toolerr.Issue, 0, min(len(e.Issues), toolerr.MaxIssues))
	for _, is := range e.Issues[:min(len(e.Issues), toolerr.MaxIssues)] {
		code := is.Code
		if len(code) > 64 || !safeIssueCode(code) {
			code = "invalid"
		}
		issues = append(issues, toolerr.NewIssue(code, is.Path...))
	}
	retryable := e.Code.Retryable()
	msg := clip(e.Message, maxMessageBytes)
	if msg != "" {
		retryable = e.Retryable
	}
	out := toolerr.Raised(e.Code, retryable, issues...)
	out.Message = msg
	if e.IssueCount > out.IssueCount && e.IssueCount <= 1<<20 {
		out.IssueCount = e.IssueCount
	}
	return out, true
}

// safeIssueCode reports whether an issue code is a plain identifier.
func safeIssueCode(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if plain := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'; !plain {
			return false
		}
	}
	return true
}

// clip cuts s to at most n bytes of valid UTF-8.
func clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // replaces invalid bytes
	}
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

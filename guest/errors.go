package guest

import (
	"strings"
	"unicode/utf8"
)

// The tool error codes a guest may raise (docs/guest-abi.md).
const (
	// CodeInvalidParameters: the parameters are valid against the input
	// schema but unusable (text that does not parse, bad base64 padding).
	CodeInvalidParameters = "invalid_parameters"
	// CodeExecutionFailed: the tool could not compute.
	CodeExecutionFailed = "execution_failed"
	// CodeExecutionLimit: a checkpoint said stop. It is retryable.
	CodeExecutionLimit = "execution_limit"
)

// MaxMessageBytes is the longest message a tool error carries; a longer one
// is cut at a character boundary.
const MaxMessageBytes = 512

// Error is a tool error: the code, message and retryable flag the caller
// sees. Compute returns one (directly or wrapped with %w) to choose the
// code; any other error becomes execution_failed with its text.
//
// The message is shown to the caller: say what is wrong with positions and
// short reasons, never echo submitted values. It is cut to
// [MaxMessageBytes] of valid UTF-8.
type Error struct {
	// Code is CodeInvalidParameters, CodeExecutionFailed or
	// CodeExecutionLimit; any other code is sent as execution_failed.
	Code string
	// Message is the author's text for the caller.
	Message string
	// Retryable tells the caller that the same item may succeed later.
	Retryable bool
}

// Error returns "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// InvalidInput returns an invalid_parameters error, not retryable: the
// parameters passed the schema but cannot be used.
func InvalidInput(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParameters, Message: sprintf(format, args...)}
}

// Failed returns an execution_failed error, not retryable.
func Failed(format string, args ...any) *Error {
	return &Error{Code: CodeExecutionFailed, Message: sprintf(format, args...)}
}

// errStop is the error of a checkpoint or claim that said stop.
func errStop(reason string) *Error {
	return &Error{Code: CodeExecutionLimit, Message: reason, Retryable: true}
}

// sdkFailure is an execution_failed error raised by the SDK itself.
func sdkFailure(msg string) *Error {
	return &Error{Code: CodeExecutionFailed, Message: "guest: " + msg}
}

// normalized returns the error as it goes on the wire: a known code, a
// non-empty message of at most MaxMessageBytes of valid UTF-8.
func (e *Error) normalized() *Error {
	out := *e
	switch out.Code {
	case CodeInvalidParameters, CodeExecutionFailed, CodeExecutionLimit:
	default:
		out.Code, out.Retryable = CodeExecutionFailed, false
	}
	out.Message = clip(out.Message, MaxMessageBytes)
	if out.Message == "" {
		out.Message = out.Code
	}
	return &out
}

// clip returns s as valid UTF-8 (invalid bytes replaced by U+FFFD) cut to
// at most n bytes without splitting a character.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// document is the error block's JSON: {"code","message","retryable"}.
func (e *Error) document() []byte {
	n := e.normalized()
	b := make([]byte, 0, len(n.Message)+64)
	b = append(b, `{"code":`...)
	b = appendString(b, n.Code)
	b = append(b, `,"message":`...)
	b = appendString(b, n.Message)
	b = append(b, `,"retryable":`...)
	if n.Retryable {
		b = append(b, "true}"...)
	} else {
		b = append(b, "false}"...)
	}
	return b
}

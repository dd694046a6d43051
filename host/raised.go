package host

import (
	"encoding/json"
	"errors"
	"fmt"
)

// maxMessageBytes bounds a tool's own error message.
const maxMessageBytes = 512

// raisedCodes are the codes a tool may raise itself (docs/guest-abi.md).
var raisedCodes = map[string]bool{
	CodeInvalidParameters: true,
	CodeExecutionFailed:   true,
	CodeExecutionLimit:    true,
}

// raised turns the error the guest set through error_set into an Error.
// An error that parses as a JSON object with a "code" member is a tool
// error document: a code a tool may raise is that tool error, anything
// else (another code, a document that does not decode) a platform
// execution_failed. Any other error is the plain text every Extism PDK
// sets: the tool's own execution_failed, the text its message. Detail
// holds the whole error (bounded) either way, for the operator.
func (s *callState) raised() *Error {
	if !s.hasError {
		return fail(CodeExecutionFailed, errors.New("export failed without setting an error"))
	}
	detail := truncateUTF8(s.errorDoc, maxErrorBytes)
	var probe map[string]json.RawMessage
	if json.Unmarshal(s.errorDoc, &probe) != nil || probe["code"] == nil {
		return &Error{
			Code:    CodeExecutionFailed,
			Raised:  true,
			Message: truncateUTF8(s.errorDoc, maxMessageBytes),
			Detail:  detail,
		}
	}
	var doc struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}
	if err := json.Unmarshal(s.errorDoc, &doc); err != nil || !raisedCodes[doc.Code] {
		e := fail(CodeExecutionFailed, errors.New("export failed with an error that is not a tool error document"))
		e.Detail = detail
		return e
	}
	return &Error{
		Code:      doc.Code,
		Retryable: doc.Retryable,
		Raised:    true,
		Message:   truncateUTF8([]byte(doc.Message), maxMessageBytes),
		Detail:    detail,
	}
}

// exited is the failure of an export that ended with exit code (exited:
// through proc_exit; otherwise a command's _start that returned) or set an
// error: the error it set, as raised says, or execution_failed. The exit
// code is in Detail.
func (s *callState) exited(export string, code uint32, exited bool) *Error {
	how := "returned"
	if exited {
		how = fmt.Sprintf("exited with code %d", code)
	}
	if s.hasError {
		e := s.raised()
		e.Detail = how + ": " + e.Detail
		return e
	}
	e := fail(CodeExecutionFailed, fmt.Errorf("%s %s", export, how))
	e.Detail = how
	return e
}

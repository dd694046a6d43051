package host

import (
	"encoding/json"
	"errors"
)

// maxMessageBytes bounds a tool's own error message.
const maxMessageBytes = 512

// raisedCodes are the codes a tool may raise itself (docs/guest-abi.md).
var raisedCodes = map[string]bool{
	CodeInvalidParameters: true,
	CodeExecutionFailed:   true,
	CodeExecutionLimit:    true,
}

// raised turns the guest's error document into an Error. A document that is
// not a tool error, or names a code a tool may not raise, becomes a
// platform execution_failed.
func (s *callState) raised() *Error {
	var doc struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}
	if !s.hasError {
		return fail(CodeExecutionFailed, errors.New("export failed without setting an error"))
	}
	if err := json.Unmarshal(s.errorDoc, &doc); err != nil || !raisedCodes[doc.Code] {
		return fail(CodeExecutionFailed, errors.New("export failed with an error that is not a tool error document"))
	}
	return &Error{
		Code:      doc.Code,
		Retryable: doc.Retryable,
		Raised:    true,
		Message:   truncateUTF8([]byte(doc.Message), maxMessageBytes),
	}
}

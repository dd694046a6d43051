package contracts

import (
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// ValidateDocument checks doc against the named contract as Validate
// does, for a document decoded already by package wire (objects as
// map[string]any, numbers as json.Number): it is not encoded and decoded
// again, so that a request body is decoded once on its way in.
func ValidateDocument(name string, doc any) error {
	v, ok := validator(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownContract, name)
	}
	err := v.Validate(doc, toolerr.InvalidOutput)
	var te *toolerr.Error
	if errors.As(err, &te) {
		return &Error{Contract: name, Issues: te.Issues, IssueCount: te.IssueCount}
	}
	return err
}

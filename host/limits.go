package host

import (
	"errors"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// The defaults of the module structure limits in [Config]: see docs/host.md,
// "Module limits", for what real modules use and what the limits guard.
const (
	DefaultMaxFunctions               = instrument.DefaultMaxFunctions
	DefaultMaxTables                  = instrument.DefaultMaxTables
	DefaultMaxTableElements           = instrument.DefaultMaxTableElements
	DefaultMaxTotalTableElements      = instrument.DefaultMaxTotalTableElements
	DefaultMaxFunctionBrTableTargets  = instrument.DefaultMaxFunctionBrTableTargets
	DefaultMaxBrTableTargets          = instrument.DefaultMaxBrTableTargets
	DefaultMaxFunctionDominatorDepths = instrument.DefaultMaxFunctionDominatorDepths
	DefaultMaxDominatorDepths         = instrument.DefaultMaxDominatorDepths
	DefaultMaxLabelBranches           = instrument.DefaultMaxLabelBranches
)

// TableElementBytes is what an instance holds per table element; a
// module's tables at their maxima count toward each call's memory limit.
const TableElementBytes = instrument.TableElementBytes

// limitError returns the *LimitError for an instrumenter refusal over a
// structure limit, or nil.
func limitError(err error) *LimitError {
	var le *instrument.LimitError
	if !errors.As(err, &le) {
		return nil
	}
	return &LimitError{Limit: le.Limit, Value: le.Value, Max: le.Max, Where: le.Where}
}

package host

import (
	"errors"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// ModuleLimits are the module structure limits: [Runtime.Load] checks them
// before it compiles a module, in the instrumenter's pass, and refuses a
// module over one with a *[LimitError]. Zero means the Default of the same
// name; docs/host.md, "Module limits", says what real modules use and what
// each limit guards.
type ModuleLimits struct {
	// MaxFunctions caps the functions, imported and defined.
	MaxFunctions uint32
	// MaxTables caps the tables, imported and defined.
	MaxTables uint32
	// MaxTableElements caps every table a module defines (its initial size
	// is refused over it, its maximum lowered to it).
	MaxTableElements uint32
	// MaxTotalTableElements caps the sum of all tables' sizes, which with
	// the memory minimum must fit each call's memory limit
	// ([TableElementBytes] each).
	MaxTotalTableElements uint64
	// MaxFunctionBrTableTargets and MaxBrTableTargets cap the br_table
	// targets, counted per function and per module, each br_table's
	// default label included.
	MaxFunctionBrTableTargets uint32
	MaxBrTableTargets         uint64
	// MaxFunctionDominatorDepths and MaxDominatorDepths cap the depths of
	// the basic blocks the compiler makes of a function, in its dominator
	// tree, added up per function and per module; MaxLabelBranches the
	// ways into one label (br, br_if and br_table labels to it, its end,
	// or a function's returns). The compiler's time grows with both.
	MaxFunctionDominatorDepths uint64
	MaxDominatorDepths         uint64
	MaxLabelBranches           uint32
}

// The defaults of [ModuleLimits].
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

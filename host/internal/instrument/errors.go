package instrument

import (
	"errors"
	"fmt"
)

var (
	// ErrMalformed is returned when the input is not a well-formed
	// WebAssembly binary: truncated data, an over-long LEB128 number, a
	// length that runs past its section, an unknown opcode, an index out of
	// range, unbalanced blocks or a section out of order.
	ErrMalformed = errors.New("malformed WebAssembly module")

	// ErrUnsupported is returned when the module is well formed but uses a
	// feature the rewriter does not handle (relaxed SIMD, threads,
	// exceptions, tail calls, multiple memories, 64-bit memories or tables,
	// GC types), a SIMD sub-opcode in an over-long encoding, or an export
	// name in the reserved "toolhost." prefix.
	ErrUnsupported = errors.New("unsupported WebAssembly feature")

	// ErrLimits is returned when the module is over a structure limit of
	// Options or of the rewriter (locals, nesting) or its declared sizes
	// cannot be brought under the caps in Options, the error then being a
	// *LimitError naming the limit; or when an Image is outside the
	// memory's limits.
	ErrLimits = errors.New("module exceeds limits")
)

// The names of the structure limits, in [LimitError.Limit]. They are stable:
// the host reports them to operators as the reason a module was refused.
const (
	// LimitFunctions is the number of functions, imported and defined
	// ([Options.MaxFunctions]).
	LimitFunctions = "functions"
	// LimitTables is the number of tables, imported and defined
	// ([Options.MaxTables]).
	LimitTables = "tables"
	// LimitTableElements is a table's initial size ([Options.MaxTableElements])
	// or the sum of all tables' initial sizes ([Options.MaxTotalTableElements]).
	LimitTableElements = "table_elements"
	// LimitBrTableTargets is the number of br_table labels (each br_table's
	// default included) in one function ([Options.MaxFunctionBrTableTargets])
	// or in the whole module ([Options.MaxBrTableTargets]).
	LimitBrTableTargets = "br_table_targets"
	// LimitDominatorDepths is the depths of the basic blocks the compiler
	// makes of the instrumented code, in the dominator tree of their
	// function, added up: in one function
	// ([Options.MaxFunctionDominatorDepths]) or in the module
	// ([Options.MaxDominatorDepths]). The rewriter bounds each depth from
	// above where ways into a block join.
	LimitDominatorDepths = "dominator_depths"
	// LimitLabelBranches is the number of ways into one label: the
	// branches to a block's, loop's or if's label (each br_table label
	// counted) and its end, or a function's returns
	// ([Options.MaxLabelBranches]).
	LimitLabelBranches = "label_branches"
	// LimitMemoryPages is the memory's initial size in pages
	// ([Options.MaxMemoryPages]).
	LimitMemoryPages = "memory_pages"
	// LimitLocals is the number of locals of one function, parameters
	// included (50,000, fixed).
	LimitLocals = "locals"
	// LimitBlockNesting is the depth of nested blocks in one function
	// (16,384, fixed).
	LimitBlockNesting = "block_nesting"
)

// LimitError is returned when a module is over one of the structure limits
// above: Value is what the module has (or, for a limit hit while counting,
// the count when Rewrite stopped, which is then Max+1 or more) and Max the
// limit. Where names the function or table concerned, or is "module". It
// wraps [ErrLimits].
type LimitError struct {
	Limit      string
	Value, Max uint64
	Where      string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s %d is over the limit of %d", e.Where, e.Limit, e.Value, e.Max)
}

// Unwrap returns ErrLimits.
func (e *LimitError) Unwrap() error { return ErrLimits }

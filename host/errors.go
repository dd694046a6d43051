package host

import (
	"errors"
	"fmt"
)

// The codes of a failed call. They are the platform's error codes
// (docs/errors.md), spelled as strings so that this package stands alone.
const (
	CodeInvalidParameters   = "invalid_parameters"
	CodeInputLimitExceeded  = "input_limit_exceeded"
	CodeExecutionLimit      = "execution_limit"
	CodeExecutionTimeout    = "execution_timeout"
	CodeMemoryLimit         = "memory_limit"
	CodeExecutionFailed     = "execution_failed"
	CodeOutputLimitExceeded = "output_limit_exceeded"
)

// Error is a failed call. Code is one of the Code constants. Message is set
// only when the guest raised the error itself (Raised), and is then the tool
// author's text, at most 512 bytes; Cause is the underlying error for the
// operator's log and is never meant for callers.
type Error struct {
	Code      string
	Retryable bool
	Raised    bool
	Message   string
	Cause     error
	// Detail is for the operator's log, never for callers: the whole
	// error the guest set through error_set (valid UTF-8, at most 4 KiB),
	// and how a command's _start exited ("exited with code 3: …").
	Detail string
}

func (e *Error) Error() string {
	switch {
	case e.Message != "":
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	case e.Cause != nil:
		return fmt.Sprintf("%s: %v", e.Code, e.Cause)
	}
	return e.Code
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// fail returns a platform-raised Error with the platform's retryable rule.
func fail(code string, cause error) *Error {
	retryable := code == CodeExecutionLimit || code == CodeExecutionTimeout
	return &Error{Code: code, Retryable: retryable, Cause: cause}
}

// Refusals of [Runtime.Load].
var (
	// ErrImport is returned when a module imports a function, table, memory
	// or global the host does not provide.
	ErrImport = errors.New("module imports what the host does not provide")
	// ErrExport is returned when a module lacks a required export or has
	// one with the wrong signature.
	ErrExport = errors.New("module lacks a required export")
	// ErrModule is returned when the module bytes cannot be decoded,
	// instrumented or compiled.
	ErrModule = errors.New("module is not a usable WebAssembly module")
	// ErrInitBudget is returned (wrapped in ErrModule) when a module's
	// start function or _initialize, run once by Load in the image
	// template, does not end within its image budget: its fuel, or Load's
	// context and the image timeout (10 s), whichever comes first. No call
	// could initialise the module either. When time was the cause, the
	// context's error is wrapped too (docs/host.md, "Start functions,
	// _initialize and their budgets").
	ErrInitBudget = errors.New("initialising the module ran out of its image budget")
	// ErrClosed is returned when the Runtime has been closed.
	ErrClosed = errors.New("runtime is closed")
)

// The names of the module structure limits, in [LimitError.Limit]. They are
// stable: the loader reports them as the reason a module was refused
// (docs/host.md, "Module limits").
const (
	LimitModuleBytes     = "module_bytes"     // the module's size, [MaxModuleBytes]
	LimitFunctions       = "functions"        // functions, imported and defined, [ModuleLimits.MaxFunctions]
	LimitTables          = "tables"           // tables, [ModuleLimits.MaxTables]
	LimitTableElements   = "table_elements"   // one table's or all tables' initial size, [ModuleLimits.MaxTableElements], [ModuleLimits.MaxTotalTableElements]
	LimitBrTableTargets  = "br_table_targets" // br_table labels in one function or in all, [ModuleLimits.MaxFunctionBrTableTargets], [ModuleLimits.MaxBrTableTargets]
	LimitDominatorDepths = "dominator_depths" // basic blocks' dominator-tree depths added up, per function or in all, [ModuleLimits.MaxFunctionDominatorDepths], [ModuleLimits.MaxDominatorDepths]
	LimitLabelBranches   = "label_branches"   // ways into one label, [ModuleLimits.MaxLabelBranches]
	LimitMemoryPages     = "memory_pages"     // the memory's initial size in pages, [Config.MaxMemoryBytes]
	LimitLocals          = "locals"           // one function's locals, 50,000
	LimitBlockNesting    = "block_nesting"    // one function's block nesting, 16,384
)

// LimitError is a module refused by [Runtime.Load] for being over one of its
// structure limits, before it was compiled. Limit is one of the Limit
// constants; Value is what the module has (for a count stopped at its
// limit, the count so far), Max the limit; Where names the function, table
// or memory concerned, or is "module". It wraps [ErrModule], so callers that
// only test for ErrModule keep working.
type LimitError struct {
	Limit      string
	Value, Max uint64
	Where      string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: %s: %s %d is over the limit of %d", ErrModule, e.Where, e.Limit, e.Value, e.Max)
}

// Unwrap returns [ErrModule].
func (e *LimitError) Unwrap() error { return ErrModule }

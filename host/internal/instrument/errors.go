package instrument

import "errors"

var (
	// ErrMalformed is returned when the input is not a well-formed
	// WebAssembly binary: truncated data, an over-long LEB128 number, a
	// length that runs past its section, an unknown opcode, an index out of
	// range, unbalanced blocks or a section out of order.
	ErrMalformed = errors.New("malformed WebAssembly module")

	// ErrUnsupported is returned when the module is well formed but uses a
	// feature the rewriter does not handle (SIMD, threads, exceptions, tail
	// calls, multiple memories, 64-bit memories or tables, GC types, an
	// imported table), or an export name in the reserved "toolhost." prefix.
	ErrUnsupported = errors.New("unsupported WebAssembly feature")

	// ErrLimits is returned when the module's declared limits cannot be
	// brought under the caps in Options: a table whose initial size exceeds
	// MaxTableElements, a memory whose minimum exceeds MaxMemoryPages, or a
	// function or nesting depth beyond what the rewriter accepts.
	ErrLimits = errors.New("module exceeds limits")
)

// Package instrument rewrites WebAssembly modules for the host's load
// pipeline (read → decode → instrument → encode → compile). Its one entry
// point is [Rewrite]. It uses the standard library only.
//
// What a rewritten module guarantees:
//
//   - Deterministic fuel. A mutable i64 global, exported as [FuelGlobal], is
//     appended after the imported and defined globals. Every defined
//     function subtracts a fixed cost from it on entry, and every loop on
//     each iteration; when the result is below zero the function executes
//     unreachable. The costs are fixed at rewrite time from the code alone,
//     so the same module given the same input uses the same fuel on any
//     machine, and fuel exhaustion is told from other traps by reading the
//     global: it is below zero. Imported functions are not metered.
//   - Indices preserved. No function, global, table, memory, type, element
//     or data index moves: the fuel global comes after all existing globals,
//     metering uses at most two locals appended after a function's own, and
//     start, element and data sections are copied unchanged. Custom sections
//     (names, producers, …) are copied unchanged and in place, except a
//     "name" section that does not parse, which is dropped and reported.
//   - Bounded tables. Every defined table's maximum is at most
//     [Options.MaxTableElements]; a table that starts larger is refused, and
//     so is an imported table. The memory's maximum is lowered to
//     [Options.MaxMemoryPages] when that is set.
//
// # Cost model
//
// The cost of a scope is the sum of the weights of the instructions directly
// in it: for a function, those outside any loop (both arms of an if count);
// for a loop, those in its body outside nested loops, which count at their
// own headers. Each instruction weighs 1, except call and call_indirect (5),
// memory.grow (1000) and table.grow (100). memory.copy, memory.fill and
// memory.init weigh 10 plus one unit per 64 bytes of their length operand,
// table.copy, table.fill and table.init 10 plus one per 8 elements; the
// length part is charged just before the operation. The metering code
// itself is not charged.
//
// A charge at a function's entry or a loop's header is, in a function
// without a loop of cost 256 or less,
//
//	global.get $fuel; i64.const cost; i64.sub; local.tee $t; global.set $fuel
//	local.get $t; i64.const 0; i64.lt_s; if; unreachable; end
//
// In a function with such a loop the count is kept in a local instead, so
// that a tight loop's charge stays in registers: the local is loaded from the
// global on entry and after each call, stored back before each call, return
// and branch out of the function and before a fuel trap, and a charge is
//
//	local.get $f; i64.const cost; i64.sub; local.tee $f
//	i64.const 0; i64.lt_s; if; local.get $f; global.set $fuel; unreachable; end
//
// Both forms charge the same fuel at the same points. The global is exact
// whenever the guest calls out (so a host function may read it, or charge
// for its own work by lowering it) and after a return or a fuel trap; after
// another trap it may still hold the count of the function's last call or
// entry: deterministic, and not below zero.
//
// # Accepted input
//
// The decoder reads the WebAssembly 1.0 binary format with the extensions
// that Go's wasip1 port, Rust, Clang and AssemblyScript emit: mutable
// globals, sign extension, saturating float-to-int conversion, bulk memory,
// multi-value and reference types. SIMD, threads, exception handling, tail
// calls, typed function references, GC, multiple memories, 64-bit memories
// and extended constant expressions are refused with [ErrUnsupported].
// Lengths are checked against the bytes that remain before anything is
// allocated; block nesting and locals per function are bounded. The
// sections copied unchanged (start, element, data, data count, the name
// section) are checked the same way, so that the compiler that reads the
// output is not made to allocate on a count its bytes cannot back.
package instrument

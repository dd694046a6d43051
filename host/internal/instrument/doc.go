// Package instrument rewrites WebAssembly modules for the host's load
// pipeline (read → decode → instrument → encode → compile). Its one entry
// point is [Rewrite]. It uses the standard library only.
//
// What a rewritten module guarantees:
//
//   - Deterministic fuel. A mutable i64 global, exported as [FuelGlobal], is
//     appended after the imported and defined globals. Every defined
//     function subtracts, at fixed points, the weight of the straight-line
//     code it is about to run (see Cost model), so fuel is the weighted
//     count of instructions executed; when the count falls below zero at a
//     test the function executes unreachable. The costs are fixed at
//     rewrite time from the code alone,
//     so the same module given the same input uses the same fuel on any
//     machine, and fuel exhaustion is told from other traps by reading the
//     global: it is below zero. Imported functions are not metered.
//   - Yields and interruption. Every test compares the count with a floor
//     global (unexported) instead of zero; below it the test calls a yield
//     function the rewriter appends after all others (its index is
//     [Info.Functions]). The yield grows memory by nothing, which leaves the
//     compiled code for the engine's Go code and comes back (the one place a
//     Go runtime can stop the goroutine, for a garbage collection among
//     others); traps if the count is below zero (fuel exhaustion, exactly as
//     before); and sets the floor [YieldFuel] below the count, or to zero.
//     The floor starts above any count, so the first test yields. So a guest
//     calls its yield at least once per YieldFuel of fuel, and that call is
//     where the host interrupts it: a function listener on the yield (the
//     host compiles one into that function alone) ends the call, with the
//     fuel global not below zero, which tells the interruption from
//     exhaustion. The rewritten module itself has no stop flag.
//   - Indices preserved. No function, global, table, memory, type, element
//     or data index moves: the fuel and floor globals come after all
//     existing globals, the yield function after all functions and its type
//     () → () after all types, a module with code and no memory is given
//     one (0 pages, at most 0) for the yield to grow, metering uses at most
//     two locals appended after a function's own, and start, element and
//     data sections are copied unchanged. Custom sections
//     (names, producers, …) are copied unchanged and in place, except a
//     "name" section that does not parse, which is dropped and reported.
//   - Bounded tables. Every table's maximum is at most
//     [Options.MaxTableElements], and the sum of their maxima at most
//     [Options.MaxTotalTableElements]; a table that starts larger, or tables
//     whose initial sizes add up to more, are refused, and so are more than
//     [Options.MaxTables] tables. [Info.TableBytes] is what they can hold at
//     most, for the host to charge. An imported table is capped like a
//     defined one and reported in Info.Imports (the host refuses it). The
//     memory's maximum is lowered to [Options.MaxMemoryPages] when that is
//     set.
//   - Bounded structure. A module with more than [Options.MaxFunctions]
//     functions, or more br_table labels in one function or in all than
//     [Options.MaxFunctionBrTableTargets] and [Options.MaxBrTableTargets],
//     is refused with a [*LimitError] as soon as the count is read, before
//     the rest is: wazero's compile time is quadratic in the branches to one
//     block, so such a module would tie up its compiler for minutes.
//     So is a function whose basic blocks, as wazero makes them of the
//     instrumented code, lie deep in its dominator tree: their depths added
//     up, in one function or in all, over
//     [Options.MaxFunctionDominatorDepths] or [Options.MaxDominatorDepths]
//     (wazero walks up the tree from every block; 10,000 loops in a row
//     compile in 18 s), or a label with more ways in than
//     [Options.MaxLabelBranches] (one block's predecessors cost it their
//     square). Each is refused as the count passes its limit.
//
// # Cost model
//
// Fuel counts the instructions that run, by weight. Each instruction weighs
// 1, SIMD instructions included (a v128.load or v128.store as any load or
// store, an i8x16.shuffle as an i32.add), except block, loop, else and end,
// which mark structure and weigh 0,
// call and call_indirect (5; the callee's instructions count in the
// callee), memory.grow (1000) and table.grow (100). memory.copy,
// memory.fill and memory.init weigh 10 plus one unit per 64 bytes of their
// length operand, table.copy, table.fill and table.init 10 plus one per 8
// elements. Code that cannot run (after br, br_table, return or
// unreachable, up to the end of its block) counts nothing. The metering code
// itself is not charged. A call that returns has used exactly the weight of
// the instructions it ran.
//
// The rewriter splits each function body into segments of straight-line
// code. A segment starts at the function's entry, at a loop's header, at
// the start of an if's then-arm and else-arm, after a br_if (where it does
// not branch), and after the end of a block or if; it ends at a branch, an
// if, an else or an end. A segment's weight is charged at a metering point
// where it starts, before it runs, with these exceptions:
//
//   - Code after the end of a block or if that nothing reaches but
//     segments that always get there (falling through, a br to the block,
//     an if's arm) is charged as part of each of them: it has no metering
//     point. The same goes for a loop's header when no br_if or br_table
//     goes to the loop, unless the header always goes on, segment after
//     segment, to a br back to itself: the segment that falls into the loop
//     and each segment ending in a br back to it charge for the header too.
//   - A segment that ends in an if, starts at a metering point other than
//     the function's entry or a loop's header, and holds only instructions
//     of weight 1 is charged at the start of both of the if's arms instead
//     (an else is added to an if without one): it runs just before it is
//     charged.
//   - A metering point that charges 0 is left out.
//   - The length part of a bulk operation is charged just before it.
//
// A charge lowers the count. Where the count is tested, the function calls
// the yield if the count is below the floor (the yield traps if it is
// below zero): at every function's entry (after its charge), at every loop's header (with its charge, or alone
// when the header is paid for by the segments entering it), at a bulk
// operation's length charge, and at each charge that pays for a segment
// that calls an import, calls through a table (call_indirect), grows a
// memory or a table, or leaves the function (return, a branch to the
// function's label, its final end). Elsewhere a charge is not tested. So a
// test comes before every loop iteration, callee's body, call to the host,
// grow, bulk operation and return, and a run out of fuel stops at the first
// test after the count drops below zero, having run on at most to the end
// of the straight-line code it was in.
//
// A charge of cost c is, in a function without a loop of weight 256 or less
// (the weight of the instructions in its body outside nested loops),
//
//	global.get $fuel; i64.const c; i64.sub; global.set $fuel
//
// untested, and tested
//
//	global.get $fuel; i64.const c; i64.sub; local.tee $t; global.set $fuel
//	local.get $t; global.get $floor; i64.lt_s; if; call $yield; end
//
// In a function with such a loop the count is kept in a local instead, so
// that a tight loop's charges stay in registers: the local is loaded from the
// global on entry and after each call, stored back before each call and
// each exit from the function and before a fuel trap, and a charge is
//
//	local.get $f; i64.const c; i64.sub; local.set $f
//
// untested, and tested
//
//	local.get $f; i64.const c; i64.sub; local.tee $f
//	global.get $floor; i64.lt_s; if; local.get $f; global.set $fuel; call $yield; end
//
// A test alone is global.get $fuel or local.get $f, then global.get $floor,
// i64.lt_s and the if as above. Both forms charge the same fuel at the same
// points and test it at the same points.
// The global is exact whenever the guest calls out (so a host function may
// read it, or charge for its own work by lowering it), after a return, and
// after a fuel trap, where it is below zero. After another trap it is
// deterministic: in the global form it holds every charge made, and so is
// below zero if a charge not yet tested had overdrawn the budget (the host
// then reports the run as out of fuel, as it was about to be); in the local
// form it holds the count of the function's last call or entry.
//
// # Accepted input
//
// The decoder reads the WebAssembly 2.0 binary format, the extensions to
// 1.0 that Go's wasip1 port, Rust, Clang, AssemblyScript and the Haskell
// PDK emit: mutable globals, sign extension, saturating float-to-int
// conversion, bulk memory, multi-value, reference types and fixed-width
// SIMD (v128 values in locals, parameters, results, block types and
// globals, v128.const in a global's initialiser, and every instruction of
// the 0xfd prefix from v128.load, 0xfd 0, to f64x2.convert_low_i32x4_u,
// 0xfd 255, with its memory argument, lane or 16-byte immediate). A SIMD
// sub-opcode must be in its shortest encoding, the one wazero reads. Relaxed
// SIMD (0xfd 256 to 0xfd 275), threads, exception handling, tail calls,
// typed function references, GC, multiple memories, 64-bit memories and
// extended constant expressions are refused with [ErrUnsupported]; another
// 0xfd opcode is malformed. A module with a v128 global is not imaged
// (see [Image]).
// Lengths are checked against the bytes that remain before anything is
// allocated; block nesting and locals per function are bounded. The
// sections copied unchanged (start, element, data, data count, the name
// section) are checked the same way, so that the compiler that reads the
// output is not made to allocate on a count its bytes cannot back.
package instrument

// Package host runs Toolhost tool modules: WebAssembly modules that speak the
// Extism guest ABI (see docs/guest-abi.md), on wazero.
//
// A [Runtime] owns one wazero runtime, its on-disk compilation cache and the
// host functions tools may import. [Runtime.Load] takes module bytes through
// a pipeline — decode, instrument (fuel metering, bounded tables, capped
// memory), encode, compile — and refuses a module that imports anything the
// host does not provide. [Module.Call] runs one export with fresh state: on
// an idle instance reset to the module's pristine state (memory, globals,
// the host side), or on a new instance when the module's code can change
// state a reset does not restore. No state survives from one call to the
// next either way ([Module.Pooled]).
//
// Every call is capped: linear memory and host-side memory blocks by
// [Limits.MemoryBytes], instructions by [Limits.Fuel] (deterministic: the
// same input uses the same fuel on any machine), time by the soft deadline
// (cooperative, through the checkpoint host function) and the hard deadline
// (the instance is interrupted), input and output by byte limits. A guest
// gets no filesystem, network, environment or arguments; what it writes to
// stdout, stderr or the Extism log goes to a bounded per-call log.
//
// The package is public so that tool authors can test their modules with it;
// it depends on nothing in Toolhost's internal packages. The whole path is
// three calls (Example runs it on a Go guest):
//
//	rt, err := host.NewRuntime(ctx, host.Config{}) // once, for every module
//	defer rt.Close(ctx)
//	m, err := rt.Load(ctx, wasm) // the module's bytes, as go build wrote them
//	res, err := m.Call(ctx, "compute", item, host.Limits{})
//	// res.Output is what the guest set as its output; a failure is a
//	// *host.Error with a Code, a refused module wraps ErrModule, ErrImport
//	// or ErrExport.
//
// [Config] holds what an embedder sets, the module structure limits among
// it as a [ModuleLimits]; the switches for tests and measurements (no
// pre-initialised image, a fresh instance per call, the interpreter tier
// first) are package hosttest's, not Config's.
package host

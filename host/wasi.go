package host

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// WASI, charged and stoppable.
//
// The WASI functions are wazero's, but a module does not import them from
// wazero's own host module: NewRuntime defines wasi_snapshot_preview1 as a
// host module of its own whose every function wraps wazero's (taken from
// the definitions of a host module compiled from wazero's exporter and
// never instantiated). Each wrapper runs callState.enter (the stop check
// and hostCallFuel), charges the function's work from its arguments, and
// then calls wazero's function with the guest as the caller, as a direct
// import would.

// wasiStateless are the WASI functions that cannot change an instance's
// WASI state: they read the call's clocks and random source, its (empty)
// arguments and environment, write its log, or read descriptors without
// changing them. Any other (fd_close, fd_renumber, fd_seek, path_open, …)
// marks the call so that a pooled instance is discarded after it: its
// descriptor table is the instance's, and a reset does not restore it.
var wasiStateless = map[string]bool{
	"args_get": true, "args_sizes_get": true, "environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true, "random_get": true, "sched_yield": true,
	"poll_oneoff": true, "proc_raise": true, "fd_write": true, "fd_read": true,
	"fd_fdstat_get": true, "fd_filestat_get": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
}

// wasiMaxElems bounds the arrays a WASI call may walk in one call: iovecs
// (Linux's IOV_MAX) and poll_oneoff subscriptions. A larger count answers
// EINVAL without running, so that no single call holds the guest's
// goroutine for long past its deadline.
const wasiMaxElems = 1024

// wasiErrnoInval is WASI's EINVAL.
const wasiErrnoInval = 28

// wasiCost says how to charge one WASI function, by the position of its
// parameters (-1 when it has none of the kind).
type wasiCost struct {
	lengths []int // parameters that are byte counts (buf_len, path_len, …)
	vecPtr  int   // iovec array pointer (iovs, ri_data, si_data)
	vecLen  int   // its element count
	elems   int   // parameter counting other elements (nsubscriptions)
	random  bool  // the bytes are random bytes (random_get)
}

// wasiCostOf reads the charging rule from the function's name and
// wazero's parameter names.
func wasiCostOf(name string, names []string) wasiCost {
	c := wasiCost{vecPtr: -1, vecLen: -1, elems: -1, random: name == "random_get"}
	for i, n := range names {
		switch n {
		case "buf_len", "path_len", "old_path_len", "new_path_len":
			c.lengths = append(c.lengths, i)
		case "iovs", "ri_data", "si_data":
			c.vecPtr = i
		case "iovs_len", "ri_data_len", "si_data_len":
			c.vecLen = i
		case "nsubscriptions":
			c.elems = i
		}
	}
	return c
}

// charge charges the call's work before it runs, or reports false when an
// array is longer than wasiMaxElems.
func (c wasiCost) charge(s *callState, mod api.Module, stack []uint64) bool {
	var bytes, elems uint64
	for _, i := range c.lengths {
		bytes += uint64(uint32(stack[i]))
	}
	if c.elems >= 0 {
		elems = uint64(uint32(stack[c.elems]))
	}
	if c.vecLen >= 0 {
		n := uint32(stack[c.vecLen])
		elems += uint64(n)
		if n <= wasiMaxElems && c.vecPtr >= 0 {
			// Each iovec is {buf u32, len u32}; what the function copies is
			// the sum of the lengths. An iovec out of bounds is left to
			// wazero, which answers EFAULT.
			ptr := uint32(stack[c.vecPtr])
			for k := range n {
				if l, ok := mod.Memory().ReadUint32Le(ptr + 8*k + 4); ok {
					bytes += uint64(l)
				}
			}
		}
	}
	if elems > wasiMaxElems {
		return false
	}
	if c.random {
		s.charge(elems*hostElemFuel + bytes*hostRandomByteFuel)
		return true
	}
	s.charge(elems*hostElemFuel + bytesFuel(bytes))
	return true
}

// instantiateWASI defines wasi_snapshot_preview1 in r, wrapping wazero's
// functions, and returns the functions it exports with their types.
func instantiateWASI(ctx context.Context, r wazero.Runtime) (map[string]signature, error) {
	inner := r.NewHostModuleBuilder("toolhost:wasi-inner")
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(inner)
	compiled, err := inner.Compile(ctx)
	if err != nil {
		return nil, err
	}
	defs := compiled.ExportedFunctions()
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	slices.Sort(names)
	b := r.NewHostModuleBuilder(WASIModule)
	exported := map[string]signature{}
	for _, name := range names {
		def := defs[name]
		fn, ok := def.GoFunction().(api.GoModuleFunction)
		if !ok {
			return nil, errors.Join(fmt.Errorf("WASI function %s is not a Go module function (%T)", name, def.GoFunction()), compiled.Close(ctx))
		}
		cost := wasiCostOf(name, def.ParamNames())
		stateless := wasiStateless[name]
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
				s := stateFrom(ctx)
				if s == nil {
					panic(fmt.Errorf("host function called outside a Toolhost call"))
				}
				s.enter(mod)
				if !stateless {
					s.wasiState = true
				}
				if !cost.charge(s, mod, stack) {
					stack[0] = wasiErrnoInval
					return
				}
				fn.Call(ctx, mod, stack)
			}), def.ParamTypes(), def.ResultTypes()).
			WithParameterNames(def.ParamNames()...).
			WithResultNames(def.ResultNames()...).
			Export(name)
		exported[name] = signature{def.ParamTypes(), def.ResultTypes()}
	}
	// The definitions were all that was needed of the inner module; the
	// Go functions stay valid without it.
	if err := compiled.Close(ctx); err != nil {
		return nil, err
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return nil, err
	}
	return exported, nil
}

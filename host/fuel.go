package host

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// Fuel for host work.
//
// The instrumented guest pays for its own instructions; a host function is
// one call instruction (5) to it, whatever the function does. So every host
// function also charges the fuel global for its own work before doing it,
// at fixed rates, from its arguments alone: the same call costs the same
// fuel on any machine. The rates put a unit of host work near the time of
// a unit of guest work (≈ 1 ns on the 2-core VM of DESIGN.md): entering Go
// and coming back costs ≈ 50–100 ns, allocating or copying in Go ≈ 0.1–0.2
// ns a byte plus the collector's share.
const (
	// hostCallFuel is charged for every call to a host function (Extism,
	// Toolhost and WASI alike), on top of the call instruction.
	hostCallFuel = 50
	// hostBytesPerFuel: one unit per this many bytes a host function
	// allocates, zeroes, copies or logs (alloc, input_set, the input's
	// first copy into a block, error_set, the bytes of a log_* message the
	// bounded log keeps, the buffers of WASI fd_write, fd_read and the
	// other buffer-taking WASI functions).
	hostBytesPerFuel = 8
	// spanFuel is charged per span of the Extism blocks' free list an
	// alloc looks at or a free moves (blocks.go).
	spanFuel = 1
	// hostRandomByteFuel is charged per byte WASI random_get produces:
	// wazero's deterministic source takes ≈ 2.5 ns a byte.
	hostRandomByteFuel = 1
	// hostElemFuel is charged per element of an array a WASI function
	// walks: an iovec of fd_read or fd_write, a subscription of
	// poll_oneoff.
	hostElemFuel = 10
)

// bytesFuel is the fuel for n bytes of host work.
func bytesFuel(n uint64) uint64 { return n/hostBytesPerFuel + boolFuel(n%hostBytesPerFuel != 0) }

func boolFuel(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// enter is the start of every host function: it binds the calling
// instance's fuel global, stops the guest if the call's context is done
// (the hard deadline passed, or the call was cancelled), and charges
// hostCallFuel.
func (s *callState) enter(mod api.Module) {
	s.bind(mod)
	s.checkStop()
	s.charge(hostCallFuel)
}

// bind finds the calling instance's fuel global on first use. Until then
// the host has no handle on it when a start function runs, inside
// InstantiateModule; the first yield (every guest yields at its first
// fuel test) or host call binds it, so that a trap there can be told to
// be fuel exhaustion.
func (s *callState) bind(mod api.Module) {
	if s.fuel == nil {
		s.fuel, _ = mod.ExportedGlobal(instrument.FuelGlobal).(api.MutableGlobal)
	}
}

// charge lowers the fuel global by cost and stops the guest with
// execution_limit when that spends the budget: the work is not done.
func (s *callState) charge(cost uint64) {
	if s.fuel == nil {
		return // only the host's own benchmarks run a guest without one
	}
	left := int64(s.fuel.Get())
	if cost > math.MaxInt64/2 {
		cost = math.MaxInt64 / 2
	}
	left -= int64(cost)
	s.fuel.Set(uint64(left))
	if left < 0 {
		s.abortCause = errors.New("fuel exhausted in a host function")
		s.abort(CodeExecutionLimit)
	}
}

// checkStop stops the guest when the call's context is done. The failure
// is then classified by the context's error (see callState.failure).
func (s *callState) checkStop() {
	if err := s.ctx.Err(); err != nil {
		panic(interruptSignal{err})
	}
}

// interruptSignal is the panic that ends a guest whose call's context is
// done; wazero turns it into the call's error.
type interruptSignal struct{ err error }

func (i interruptSignal) Error() string { return "guest interrupted: " + i.err.Error() }

// Interruption through the yield.
//
// The instrumented guest calls its yield function at least once per
// instrument.YieldFuel of fuel. A function listener on that one function
// (wazero's experimental listener API: a listener is compiled into the
// functions it is returned for, and into no other) runs checkStop there,
// on the guest's goroutine; it is the only way the host ends running guest
// code (host functions check the context themselves). Unlike a stop flag in
// the instance (the instrumenter exported one before issue 11), which the
// host could set only once it held the instance, the listener finds the
// call's state in the context and so also ends a start function, which runs
// inside InstantiateModule, and the template's _initialize.

// yieldListener stops a guest at its yield when its call's context is
// done.
type yieldListener struct{}

func (yieldListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if s := stateFrom(ctx); s != nil {
		s.bind(mod)
		s.checkStop()
	}
}

func (yieldListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (yieldListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// yieldFactory returns the listener for the yield function only.
type yieldFactory struct{ index uint32 }

func (f yieldFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	_, _, imported := def.Import()
	if def.Index() == f.index && !imported && len(def.ParamTypes()) == 0 && len(def.ResultTypes()) == 0 {
		return yieldListener{}
	}
	return nil
}

// withYieldListener returns ctx for compiling a module that instrument
// rewrote with info: the yield function comes right after the module's
// own functions (imports first).
func withYieldListener(ctx context.Context, info instrument.Info) context.Context {
	if info.MeteredFunctions == 0 {
		return ctx // no code, so no yield and nothing to stop
	}
	index := uint32(info.MeteredFunctions)
	for _, im := range info.Imports {
		if im.Kind == instrument.KindFunction {
			index++
		}
	}
	return experimental.WithFunctionListenerFactory(ctx, yieldFactory{index})
}

// stopped is the error of a call that ended because its context did.
func stopped(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(CodeExecutionTimeout, fmt.Errorf("interrupted at the hard deadline: %w", err))
	}
	return fail(CodeExecutionLimit, fmt.Errorf("interrupted, call cancelled: %w", err))
}

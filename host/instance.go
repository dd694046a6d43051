package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// instance is one instantiated module and the handles the host keeps on
// it. It serves one call at a time: cur is that call's state, which the
// instance's WASI clocks, random source and standard streams read, so that
// a pooled instance gives each call the same clean host side a fresh one
// does.
type instance struct {
	mod     api.Module
	fuel    api.MutableGlobal
	floor   api.MutableGlobal
	globals []savedGlobal // every mutable defined global, as instantiated
	memory  *linearMemory // nil for a module without memory
	funcs   map[string]api.Function
	cur     *callState
}

// savedGlobal is a mutable global and the value a reset gives it back.
type savedGlobal struct {
	g api.MutableGlobal
	v uint64
}

// instantiate makes an instance of m's tier t for the call s. A pooled
// instance's memory is a mapping of the pristine image and its mutable
// globals are saved for reset.
func (m *Module) instantiate(ctx context.Context, s *callState, t *tier, pooled bool) (*instance, error) {
	inst := &instance{cur: s, funcs: map[string]api.Function{}}
	img := m.image
	if pooled {
		img = m.pristine
	}
	alloc := allocator{s: s, image: img, pooled: pooled, made: &inst.memory}
	instCtx := experimental.WithMemoryAllocator(ctx, alloc)
	mod, err := t.rt.InstantiateModule(instCtx, t.compiled, inst.config())
	if err != nil {
		return nil, err
	}
	inst.mod = mod
	inst.fuel, _ = mod.ExportedGlobal(instrument.FuelGlobal).(api.MutableGlobal)
	inst.floor, _ = mod.ExportedGlobal(instrument.FloorGlobal).(api.MutableGlobal)
	if inst.fuel == nil || inst.floor == nil {
		return nil, errors.Join(errors.New("instrumented module lacks its fuel and floor globals"), mod.Close(context.Background()))
	}
	if pooled {
		for _, name := range m.mutableGlobals {
			g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
			if !ok {
				return nil, errors.Join(fmt.Errorf("mutable global %s is not exported", name), mod.Close(context.Background()))
			}
			inst.globals = append(inst.globals, savedGlobal{g, g.Get()})
		}
	}
	return inst, nil
}

// config is the instance's module configuration: no start functions, and
// the standard streams, clocks and random source of the call it serves.
func (inst *instance) config() wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithStdout(stdoutOf{inst}).
		WithStderr(stderrOf{inst}).
		WithWalltime(inst.walltime, sys.ClockResolution(time.Microsecond)).
		WithNanotime(inst.nanotime, sys.ClockResolution(1)).
		WithRandSource(randomOf{inst})
}

// bind makes the instance serve the call s.
func (inst *instance) bind(s *callState) {
	inst.cur = s
	s.fuel = inst.fuel
	if inst.memory != nil {
		inst.memory.s = s
		s.memory = inst.memory
	}
}

// function returns the export name, looked up once per instance.
func (inst *instance) function(name string) api.Function {
	f, ok := inst.funcs[name]
	if !ok {
		f = inst.mod.ExportedFunction(name)
		inst.funcs[name] = f
	}
	return f
}

// reset sets the instance back to its state at instantiation after a call
// that ended cleanly: memory, every mutable global, the floor. It reports
// false when that is not possible (the memory grew).
func (inst *instance) reset() bool {
	if inst.memory != nil && !inst.memory.reset() {
		return false
	}
	for _, g := range inst.globals {
		g.g.Set(g.v)
	}
	inst.floor.Set(uint64(instrument.FloorStart))
	inst.cur = nil
	return true
}

// close closes the instance. An instance opens no files (its standard
// streams write to the call's log), so closing it frees memory only.
func (inst *instance) close() {
	inst.mod.Close(context.Background()) //nolint:errcheck // see above: nothing to lose
}

// The host side of WASI a call sees: a clock and a random source of its
// own, as wazero's defaults (which live as long as the instance) would be
// for a fresh instance. The wall clock starts at 2022-01-01T00:00:00Z and
// the monotonic clock at 0, each advancing 1 ms per reading; the random
// bytes are those of math/rand seeded with 42. Every call of a module thus
// sees the same sequence, on any machine and whatever ran before it.

// fakeEpoch is the wall clock's first reading, in Unix nanoseconds.
const fakeEpoch = 1640995200 * int64(time.Second)

// callClocks is the per-call state behind the clocks and random source.
type callClocks struct {
	wall, mono int64 // readings so far
	rand       *rand.Rand
}

func (inst *instance) walltime() (int64, int32) {
	c := &inst.cur.clocks
	t := fakeEpoch + c.wall*int64(time.Millisecond)
	c.wall++
	return t / 1e9, int32(t % 1e9)
}

func (inst *instance) nanotime() int64 {
	c := &inst.cur.clocks
	t := c.mono * int64(time.Millisecond)
	c.mono++
	return t
}

// randomOf reads the random source of the call its instance serves.
type randomOf struct{ inst *instance }

func (r randomOf) Read(p []byte) (int, error) {
	c := &r.inst.cur.clocks
	if c.rand == nil {
		c.rand = rand.New(rand.NewSource(42))
	}
	return c.rand.Read(p)
}

// stdoutOf and stderrOf write to the log of the call their instance
// serves, as its stdout and stderr. Each is one pointer, so that making it
// an io.Writer allocates nothing.
type (
	stdoutOf struct{ inst *instance }
	stderrOf struct{ inst *instance }
)

func (w stdoutOf) Write(p []byte) (int, error) { return w.inst.writeStream(0, p) }
func (w stderrOf) Write(p []byte) (int, error) { return w.inst.writeStream(1, p) }

func (inst *instance) writeStream(stream int, p []byte) (int, error) {
	if s := inst.cur; s != nil {
		return s.log.writeStream(stream, p), nil
	}
	return len(p), nil
}

var _, _ io.Writer = stdoutOf{}, stderrOf{}

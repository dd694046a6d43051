package host

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Instance reuse.
//
// A module whose whole state is its memory and its globals gets a pool of
// idle instances, the way Wasmtime's pooling allocator keeps them: a call
// takes an idle instance (or instantiates one), and after a call that ended
// cleanly the instance is reset to its state at instantiation and put back.
// The state at instantiation is the module's pristine image — for an
// imaged module its pre-initialised image, otherwise the memory as its data
// segments left it, captured at Load — together with every mutable global
// as instantiated, the floor global, and on the host side a new callState
// per call (input, output, blocks, error, log, clocks, random source).
//
// Load refuses reuse, and every call then gets a fresh instance as before,
// for a module whose code can change state a reset does not restore: a
// start section left in (not imaged, it would run once per instance), an
// _initialize run per call,
// any of the instructions instrument.Info.StateOps names (tables and
// segments), or more than maxPooledBytes of memory at start without an
// image. An instance is discarded, never put back, after a call that
// trapped, was interrupted, ran out of fuel, was stopped by a host function
// or refused memory; after its memory grew past the image (it cannot
// shrink); after a WASI function that can change the instance's WASI state
// (its file descriptors); and when the pool is full.

// The reasons an instance is discarded, in [InstanceStats.Discarded].
const (
	DiscardTrap        = "trap"          // the call trapped
	DiscardInterrupt   = "interrupt"     // stopped at its deadline or cancelled
	DiscardFuel        = "fuel"          // ran out of fuel
	DiscardHostError   = "host_error"    // a host function stopped the call
	DiscardMemoryLimit = "memory_limit"  // an allocation was refused
	DiscardGrowth      = "memory_growth" // memory grew past the image
	DiscardWASIState   = "wasi_state"    // a WASI call could change the instance's descriptors
	DiscardPoolFull    = "pool_full"     // the pool already held its idle instances
	DiscardClosed      = "closed"        // the module was closed
)

// InstanceStats counts what calls did with instances since the runtime was
// made.
type InstanceStats struct {
	// Instantiated counts instances made for calls: every call of a module
	// without reuse, and each call of a pooled module that found no idle
	// instance.
	Instantiated uint64
	// Reused counts calls served by an idle instance.
	Reused uint64
	// Discarded counts pooled instances closed instead of put back, by
	// reason (the Discard constants; every reason is present).
	Discarded map[string]uint64
}

// instanceCounters are a runtime's InstanceStats, kept atomically.
type instanceCounters struct {
	instantiated, reused atomic.Uint64
	discarded            [len(discardNames)]atomic.Uint64
}

var discardNames = [...]string{DiscardTrap, DiscardInterrupt, DiscardFuel, DiscardHostError,
	DiscardMemoryLimit, DiscardGrowth, DiscardWASIState, DiscardPoolFull, DiscardClosed}

func (c *instanceCounters) discard(reason string) {
	for i, n := range discardNames {
		if n == reason {
			c.discarded[i].Add(1)
			return
		}
	}
}

// InstanceStats returns the runtime's instance counters.
func (r *Runtime) InstanceStats() InstanceStats {
	st := InstanceStats{
		Instantiated: r.counters.instantiated.Load(),
		Reused:       r.counters.reused.Load(),
		Discarded:    make(map[string]uint64, len(discardNames)),
	}
	for i, n := range discardNames {
		st.Discarded[n] = r.counters.discarded[i].Load()
	}
	return st
}

// defaultIdleInstances is Config.IdleInstances when zero: one per
// processor, at least two (the default platform policy's worker lanes).
func defaultIdleInstances() int { return max(2, runtime.GOMAXPROCS(0)) }

// instancePool holds a module's idle instances, each reset.
type instancePool struct {
	mu     sync.Mutex
	idle   []*instance
	max    int
	closed bool
}

// get returns an idle instance, or nil.
func (p *instancePool) get() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	inst := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return inst
}

// put keeps a reset instance, or returns the reason it must be closed.
func (p *instancePool) put(inst *instance) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return DiscardClosed
	case len(p.idle) >= p.max:
		return DiscardPoolFull
	}
	p.idle = append(p.idle, inst)
	return ""
}

// close closes the idle instances; instances in use are closed when
// their call ends.
func (p *instancePool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
}

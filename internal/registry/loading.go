package registry

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Load is one load of a module file in progress, as [Registry.Loading]
// reports it: a file that has settled and is being read, instrumented,
// compiled, pre-initialised or described, or whose abandoned work still
// runs. A file that is not in the snapshot yet and not here has not been
// seen, or is still being written (the settle rule).
type Load struct {
	// File is the module's file name ("NAME.wasm"), never a path: the
	// same sanitised name as a [Failure]'s.
	File string
	// Phase is the phase running now: [PhaseQueued] while the load waits
	// for a load slot (the registry's, or the loader's, which abandoned
	// work may hold), then the Loader's phases (wasmtool's: read,
	// instrument, compile, image, describe).
	Phase string
	// Since is when the load began, once its file had settled; PhaseSince
	// is when its current phase (or its wait for a slot) began.
	Since, PhaseSince time.Time
	// PhaseTimeout is the deadline of the current phase, counted from
	// PhaseSince; zero while queued.
	PhaseTimeout time.Duration
	// Abandoned is set once the loader gave the load up — its phase
	// outlasted its deadline (the refusal is then in the snapshot's
	// failures), or the load was superseded by a newer version of its
	// file, its file was removed, or the registry closed — while its work
	// runs on and keeps one of the loader's slots (wazero's compiler
	// cannot be interrupted). Phase then follows what that work still
	// does, with no deadline. The Load is gone once the slot is back.
	Abandoned bool
}

// progress is the state of one load job as its observer reports it.
// Guarded by loads.mu.
type progress struct {
	Load
	done    bool // the load job returned
	holding int  // abandoned works that have not given their slot back
}

// loads is the set of loads in progress, with its own lock so that
// reading it never waits for a discovery holding r.mu (a scan stats the
// whole folder under it). It is safe for concurrent use.
type loads struct {
	mu  sync.Mutex
	set map[*progress]struct{}
}

// begin records a load of the file name starting now, queued, and
// returns the observer that keeps it current and end, which the load job
// calls when it returns.
func (l *loads) begin(name string) (obs *LoadObserver, end func()) {
	now := time.Now()
	p := &progress{Load: Load{File: fileSource(name), Phase: PhaseQueued, Since: now, PhaseSince: now}}
	l.mu.Lock()
	if l.set == nil {
		l.set = map[*progress]struct{}{}
	}
	l.set[p] = struct{}{}
	l.mu.Unlock()
	update := func(f func()) {
		l.mu.Lock()
		defer l.mu.Unlock()
		f()
		if p.done && p.holding == 0 {
			delete(l.set, p)
		}
	}
	obs = &LoadObserver{
		Phase: func(phase string, timeout time.Duration) {
			update(func() {
				p.Phase, p.PhaseSince, p.PhaseTimeout = phase, time.Now(), timeout
				if p.Abandoned {
					p.PhaseTimeout = 0 // nothing stops it any more
				}
			})
		},
		Abandoned: func(string) {
			update(func() { p.Abandoned, p.PhaseTimeout = true, 0; p.holding++ })
		},
		Released: func() { update(func() { p.holding-- }) },
	}
	return obs, func() { update(func() { p.done = true }) }
}

// list returns the loads in progress, by file name, then oldest first.
func (l *loads) list() []Load {
	l.mu.Lock()
	out := make([]Load, 0, len(l.set))
	for p := range l.set {
		out = append(out, p.Load)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b Load) int {
		return cmp.Or(cmp.Compare(a.File, b.File), a.Since.Compare(b.Since))
	})
	return out
}

// Loading returns the loads of the tools folder in progress: each file
// being loaded, with its phase and since when, and the abandoned loads
// whose work still holds a loader slot. A file can appear twice — a load
// abandoned when a newer version of the file arrived, beside the newer
// one's load — and, once abandoned at a phase deadline, both here and in
// the current snapshot's failures until its work ends. It is safe for
// concurrent use, takes no lock a discovery holds, and costs one small
// copy.
func (r *Registry) Loading() []Load { return r.progress.list() }

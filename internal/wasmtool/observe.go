package wasmtool

import (
	"context"
	"time"
)

// PhaseQueued is what an [Observer] is told while a read or a load waits
// for one of the Loader's slots (Config.MaxLoads, abandoned work
// included). It is not a phase: it has no deadline and never names a
// LoadTimeout.
const PhaseQueued = "queued"

// Observer follows the reads and loads run under a context made by
// [WithObserver]: which phase each is in, and whether its work was
// abandoned and still holds a slot. Its funcs are called on the Loader's
// goroutines, so they must be safe for concurrent use, cheap, and must
// not block or call back into the Loader; a nil func is skipped.
type Observer struct {
	// Phase is called as the work waits for a slot (PhaseQueued) and as
	// it enters each phase (PhaseRead, PhaseInstrument, PhaseCompile,
	// PhaseImage, PhaseDescribe) with that phase's deadline.
	Phase func(phase string, timeout time.Duration)
	// Abandoned is called once when ReadFiles or Load gives up on work
	// that has not returned — its phase outlasted its deadline, or the
	// context ended — just before it returns its refusal. The work runs on
	// and keeps its slot.
	Abandoned func(phase string)
	// Released is called once when abandoned work has returned and given
	// its slot back, always after Abandoned has returned.
	Released func()
}

type observerKey struct{}

// WithObserver returns a context under which [Loader.ReadFiles],
// [Loader.Load] and [Loader.LoadFile] report their progress to o.
func WithObserver(ctx context.Context, o *Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// observerOf is the context's observer, or one that does nothing.
func observerOf(ctx context.Context) *Observer {
	if o, ok := ctx.Value(observerKey{}).(*Observer); ok && o != nil {
		return o
	}
	return &Observer{}
}

func (o *Observer) phase(phase string, timeout time.Duration) {
	if o.Phase != nil {
		o.Phase(phase, timeout)
	}
}

func (o *Observer) abandoned(phase string) {
	if o.Abandoned != nil {
		o.Abandoned(phase)
	}
}

func (o *Observer) released() {
	if o.Released != nil {
		o.Released()
	}
}

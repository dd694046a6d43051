package host

import "context"

// The phases of [Runtime.Load], in order, as a load observer sees them.
const (
	PhaseInstrument = "instrument" // decoding and rewriting the module
	PhaseCompile    = "compile"    // compiling it (wazero does not honour ctx here)
	PhaseImage      = "image"      // running _initialize in a template and recompiling the image
)

type loadObserverKey struct{}

// WithLoadObserver returns a context under which [Runtime.Load] calls
// observe with each phase's name (PhaseInstrument, PhaseCompile,
// PhaseImage) as the phase starts, on Load's goroutine. A caller uses it
// to give each phase its own deadline.
func WithLoadObserver(ctx context.Context, observe func(phase string)) context.Context {
	return context.WithValue(ctx, loadObserverKey{}, observe)
}

// enterPhase reports a phase of Load to the context's observer, if any.
func enterPhase(ctx context.Context, phase string) {
	if observe, ok := ctx.Value(loadObserverKey{}).(func(string)); ok {
		observe(phase)
	}
}

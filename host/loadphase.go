package host

import "context"

// The phases of [Runtime.Load], as a load observer sees them: instrument,
// then, for a module with an initialiser, image, then compile.
const (
	PhaseInstrument = "instrument" // decoding and rewriting the module
	PhaseCompile    = "compile"    // compiling it, or its image (wazero does not honour ctx here)
	PhaseImage      = "image"      // running its initialiser in a template (or reading the cached image)
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

// Package switches carries the host's switches for tests and measurements
// from package hosttest to host.NewRuntime, in the context NewRuntime
// takes, so that they are no field of host.Config: only packages under
// host can name the context's key.
package switches

import "context"

// Switches are hosttest.Switches; see there for each.
type Switches struct {
	NoPreinitialise bool
	FreshInstances  bool
	InterpretFirst  bool
}

type key struct{}

// With returns a context under which host.NewRuntime makes a runtime with
// the switches s.
func With(ctx context.Context, s Switches) context.Context {
	return context.WithValue(ctx, key{}, s)
}

// From returns the switches of ctx, none set without With.
func From(ctx context.Context) Switches {
	s, _ := ctx.Value(key{}).(Switches)
	return s
}

// Package hosttest makes host runtimes with the switches that exist for
// tests, measurements and debugging, not for embedders: each gives up
// speed to show what the host's shortcuts would otherwise hide (the
// pre-initialised image, the reset of a reused instance, the compiled tier
// found in the cache). A Toolhost server never sets them; they are kept
// out of [host.Config] so that what an embedder sets stays there alone.
package hosttest

import (
	"context"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/internal/switches"
)

// Switches are the test and measurement switches of a runtime. The zero
// value sets none: a runtime as [host.NewRuntime] makes it.
type Switches struct {
	// NoPreinitialise makes every call run the module's _initialize instead
	// of starting from a captured image (see [host.Module.Preinitialised]).
	NoPreinitialise bool
	// FreshInstances makes every call instantiate the module and close the
	// instance afterwards, instead of reusing instances reset to their
	// pristine state (see [host.Module.Pooled]): what a reset must give
	// back, for the tests that compare the two.
	FreshInstances bool
	// InterpretFirst makes every Load under [host.WithTiering] start on the
	// interpreter tier, even when the optimised code is in the cache, for
	// the tests that compare the tiers.
	InterpretFirst bool
}

// NewRuntime is [host.NewRuntime] with the switches s.
func NewRuntime(ctx context.Context, cfg host.Config, s Switches) (*host.Runtime, error) {
	return host.NewRuntime(switches.With(ctx, switches.Switches(s)), cfg)
}

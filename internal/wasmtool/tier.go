package wasmtool

import (
	"context"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/host"
)

// The tiers a Tool's module is served from (host's; docs/host.md,
// "Tiered start").
const (
	TierInterpreter = host.TierInterpreter // wazero's interpreter, until Promote
	TierCompiled    = host.TierCompiled    // wazero's optimising compiler
)

// Tier is the tier serving the Tool's new items: [TierInterpreter] for a
// module a tiered loader (Config.Tiered) loaded cold, until [Loader.Promote]
// has swapped its optimised code in; [TierCompiled] otherwise.
func (t *Tool) Tier() string { return t.module.Tier() }

// Promote compiles the module of t, loaded by l, with the optimising
// compiler and swaps it in for the items that start from then on
// (host.Module.Optimise); items running on the interpreter finish there.
// It returns nil at once for a Tool on the compiled tier.
//
// The compile runs in one of the loader's promotion slots (at most half of
// MaxLoads, at least one, so that loads of new modules keep theirs) under
// its deadline (Config.PromoteTimeout): one that outlasts it is refused with a LoadTimeout
// naming the compile phase, like a load's, and abandoned — it runs on in
// its slot and what it makes is discarded. When ctx ends the compile is
// abandoned too (ctx's error). A compile that fails is a *LoadError
// (module_invalid). In each of these cases the interpreter keeps serving
// the Tool.
func (l *Loader) Promote(ctx context.Context, t *Tool) error {
	if t.Tier() == TierCompiled {
		return nil
	}
	timeout := func(string) time.Duration { return l.cfg.PromoteTimeout }
	_, err := runPhasesIn(l.promotions, timeout, ctx, PhaseCompile, func(ctx context.Context, _ func(string)) (struct{}, error) {
		err := t.module.Optimise(ctx)
		switch {
		case err == nil:
			return struct{}{}, nil
		case ctx.Err() != nil:
			return struct{}{}, fmt.Errorf("promoting: %w", ctx.Err())
		}
		return struct{}{}, &LoadError{Reason: ModuleInvalid, Err: err}
	}, func(struct{}) {})
	return err
}

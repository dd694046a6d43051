package registry

import (
	"context"
	"errors"
	"time"
)

// Tiered start.
//
// A loader may publish a module on a quick first tier (wasmtool: wazero's
// interpreter, for a module whose optimised code is not in the compilation
// cache) and compile its optimised code afterwards. The registry publishes
// the module as soon as its first tier is ready, and promotes it in the
// background: the promotion swaps the tier inside the module (the
// LoadedModule), so the snapshot, the services, their runners, the
// module's hash and its generation stay as they are — nothing is
// published for it. A failed promotion leaves the first tier serving and
// is logged, and diagnostics show it (Service.Tier). A module retired
// (replaced, removed, the registry closed) stops its promotion.

// startPromotion promotes m in the background when its module is a
// TieredModule on its first tier. r.mu is held, and the registry is open.
func (r *Registry) startPromotion(m *module) {
	tm, ok := m.tool.(TieredModule)
	if !ok || tm.Tier() == TierCompiled {
		return
	}
	ctx, cancel := context.WithCancel(r.loadCtx)
	m.mu.Lock()
	m.stopPromotion = cancel
	m.mu.Unlock()
	r.jobs.Add(1)
	r.promotions.Add(1)
	go func() {
		defer r.jobs.Done()
		defer cancel()
		r.promote(ctx, m, tm)
		if r.promotions.Add(-1) == 0 && r.cfg.PromotionsIdle != nil {
			r.cfg.PromotionsIdle()
		}
	}()
}

// promote runs m's promotion and logs its end.
func (r *Registry) promote(ctx context.Context, m *module, tm TieredModule) {
	start := time.Now()
	r.log.Info("registry: serving a module from the interpreter while it compiles", "file", m.file)
	err := tm.Promote(ctx)
	switch {
	case err == nil:
		r.log.Info("registry: module swapped to its compiled tier", "file", m.file,
			"tier", tm.Tier(), "compile_ms", time.Since(start).Milliseconds())
	case ctx.Err() != nil:
		r.log.Debug("registry: a retired module's compile stopped", "file", m.file, "error", err)
	default:
		failure := "compile_failed"
		var lr LoadRefusal
		if errors.As(err, &lr) {
			reason, detail := lr.Refusal()
			failure = reason
			if detail != "" {
				failure += "/" + detail
			}
		}
		m.mu.Lock()
		m.promotionFailure = failure
		m.mu.Unlock()
		r.log.Warn("registry: compiling a module failed; the interpreter keeps serving it", "file", m.file,
			"failure", failure, "error", err)
	}
}

// tier is the tier serving m's new items and why its promotion failed,
// if it did; "" for a module that is not a TieredModule.
func (m *module) tier() (tier, failure string) {
	tm, ok := m.tool.(TieredModule)
	if !ok {
		return "", ""
	}
	m.mu.Lock()
	failure = m.promotionFailure
	m.mu.Unlock()
	return tm.Tier(), failure
}

// Tier reports which tier serves the new items of the service's module:
// [TierInterpreter] while its optimised compile runs (or after it failed:
// failure is then its sanitised reason, "load_timeout/compile" or
// "module_invalid"), [TierCompiled] once swapped in; "" for a builtin. It
// is read live: the service and its snapshot stay the same across the
// swap.
func (s *Service) Tier() (tier, failure string) {
	r, ok := s.Runner.(*wasmRunner)
	if !ok {
		return "", ""
	}
	return r.mod.tier()
}

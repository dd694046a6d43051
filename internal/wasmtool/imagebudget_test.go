package wasmtool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// A template whose start function or _initialize runs out of host's image
// budget (its own 10 s bound or its fuel) before the loader's image
// deadline is refused as that deadline would refuse it: load_timeout,
// phase image — not module_invalid — with host.ErrInitBudget as the cause.
func TestLoadImageBudget(t *testing.T) {
	// The default image deadline (20 s) is longer than host's own bound
	// (10 s): host ends the template first.
	l := phaseLoader(t, wasmtool.Config{})
	const bound = 10 * time.Second // host's imageTimeout
	const margin = 5 * time.Second
	for _, name := range []string{"init_host_loop", "start_host_loop", "image_loop"} {
		t.Run(name, func(t *testing.T) {
			if name == "image_loop" && testing.Short() {
				t.Skip("may take host's 10 s image bound")
			}
			start := time.Now()
			_, err := l.Load(context.Background(), testkit.WAT(t, name), nil)
			took := time.Since(start)
			t.Logf("%s: refused after %v: %v", name, took.Round(time.Millisecond), err)
			wantReason(t, err, wasmtool.LoadTimeout, wasmtool.PhaseImage)
			if !errors.Is(err, host.ErrInitBudget) {
				t.Errorf("Load = %v, want it to wrap host.ErrInitBudget", err)
			}
			if took > bound+margin {
				t.Errorf("refused after %v, past host's %v image bound plus %v", took, bound, margin)
			}
		})
	}
}

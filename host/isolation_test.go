package host_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
)

// A call on a pooled instance observes nothing of the calls before it:
// whatever a leak_state dirty_* export changed and however it ended, the
// next compute observes what it observes on a fresh instance, with the
// same fuel, and the instance was reused or discarded for the right reason.
func TestPooledInstanceIsolation(t *testing.T) {
	fresh := load(t, newRuntimeWith(t, host.Config{}, hosttest.Switches{FreshInstances: true}), "leak_state")
	want, wantFuel := observe(t, fresh)
	for _, tt := range []struct {
		export  string
		limits  host.Limits
		discard string // "" when the instance goes back to the pool
	}{
		{export: "dirty"},
		{export: "dirty_fail"},
		{export: "dirty_trap", discard: host.DiscardTrap},
		{export: "dirty_grow", discard: host.DiscardGrowth},
		{export: "dirty_fuel", limits: host.Limits{Fuel: 1_000_000}, discard: host.DiscardFuel},
		{export: "dirty_close", discard: host.DiscardWASIState},
	} {
		t.Run(tt.export, func(t *testing.T) {
			r := newRuntime(t, host.Config{IdleInstances: 1})
			m := load(t, r, "leak_state")
			if ok, why := m.Pooled(); !ok {
				t.Fatalf("leak_state is not pooled: %v", why)
			}
			if got, fuel := observe(t, m); !bytes.Equal(got, want) || fuel != wantFuel {
				t.Fatalf("first call observed %x (fuel %d), a fresh instance %x (fuel %d)", got, fuel, want, wantFuel)
			}
			m.Call(context.Background(), tt.export, nil, tt.limits) // its outcome is another test's
			before := r.InstanceStats()
			got, fuel := observe(t, m)
			if !bytes.Equal(got, want) || fuel != wantFuel {
				t.Errorf("after %s: observed %x (fuel %d), a fresh instance %x (fuel %d)", tt.export, got, fuel, want, wantFuel)
			}
			st := r.InstanceStats()
			reused := st.Reused - before.Reused
			if tt.discard == "" && (reused != 1 || st.Reused != 2) {
				t.Errorf("after %s the next call did not reuse the instance: %+v", tt.export, st)
			}
			if tt.discard != "" && (reused != 0 || st.Discarded[tt.discard] != 1) {
				t.Errorf("after %s the instance was not discarded for %s: %+v", tt.export, tt.discard, st)
			}
		})
	}
}

// observe runs leak_state's compute and returns its output and fuel.
func observe(t *testing.T, m *host.Module) ([]byte, int64) {
	t.Helper()
	res, err := m.Call(context.Background(), "compute", nil, host.Limits{})
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	return res.Output, res.FuelUsed
}

// Many goroutines share one pooled module, mixing clean calls, calls that
// dirty their instance and calls that trap: every compute still observes a
// fresh instance. Run under the race detector by make test.
func TestPoolConcurrentIsolation(t *testing.T) {
	want, wantFuel := observe(t, load(t, newRuntimeWith(t, host.Config{}, hosttest.Switches{FreshInstances: true}), "leak_state"))
	r := newRuntime(t, host.Config{IdleInstances: 2})
	m := load(t, r, "leak_state")
	exports := []string{"dirty", "dirty_trap", "dirty_fail", "dirty_grow"}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 25 {
				m.Call(context.Background(), exports[(g+i)%len(exports)], nil, host.Limits{})
				res, err := m.Call(context.Background(), "compute", nil, host.Limits{})
				if err != nil || !bytes.Equal(res.Output, want) || res.FuelUsed != wantFuel {
					errs <- fmt.Errorf("goroutine %d call %d: %v, %x", g, i, err, res)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if st := r.InstanceStats(); st.Reused == 0 || st.Discarded[host.DiscardTrap] == 0 {
		t.Errorf("instance stats %+v: want reuse and trap discards", st)
	}
}

// A module whose code can change its tables is never pooled, nor is any
// module of a runtime with FreshInstances; the reason says why.
func TestPoolRefusals(t *testing.T) {
	for _, tt := range []struct {
		module string
		sw     hosttest.Switches
		why    string
	}{
		{"table_bomb", hosttest.Switches{}, "table.grow"},
		{"leak_state", hosttest.Switches{FreshInstances: true}, "FreshInstances"},
		{"v128_state", hosttest.Switches{}, "v128"},
	} {
		m := load(t, newRuntimeWith(t, host.Config{}, tt.sw), tt.module)
		if ok, why := m.Pooled(); ok || why == nil || !strings.Contains(why.Error(), tt.why) {
			t.Errorf("%s: Pooled() = %v, %v; want false and a reason naming %s", tt.module, ok, why, tt.why)
		}
	}
}

// A module with a mutable v128 global is not pooled (a reset could give
// back only its low half), so a call that changed it leaves nothing for
// the next one.
func TestV128GlobalFresh(t *testing.T) {
	m := load(t, newRuntime(t, host.Config{}), "v128_state")
	ctx := context.Background()
	for i := range 3 {
		if _, err := m.Call(ctx, "dirty", nil, host.Limits{}); err != nil {
			t.Fatalf("dirty: %v", err)
		}
		res, err := m.Call(ctx, "compute", nil, host.Limits{})
		if err != nil {
			t.Fatalf("compute: %v", err)
		}
		if got := binary.LittleEndian.Uint64(res.Output); got != 0x0102030405060708 {
			t.Fatalf("call %d: the global's high half is %#x after another call changed it", i, got)
		}
	}
}

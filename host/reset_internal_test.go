package host

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/host/internal/switches"
	"github.com/toolhost/toolhost/internal/testkit"
)

// Each way of resetting a pooled instance's memory — the PAGEMAP_SCAN
// ioctl, pagemap entries read per page, and a plain buffer the image is
// copied back into — leaves the next call observing what a fresh instance
// observes.
func TestResetModes(t *testing.T) {
	wasm := testkit.WAT(t, "leak_state")
	ctx := context.Background()
	call := func(m *Module, export string) []byte {
		t.Helper()
		res, err := m.Call(ctx, export, nil, Limits{})
		if export == "compute" && err != nil {
			t.Fatalf("compute: %v", err)
		}
		if res == nil {
			return nil
		}
		return res.Output
	}
	fresh, err := newTestRuntimeWith(t, Config{}, switches.Switches{FreshInstances: true}).Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	want := call(fresh, "compute")
	modes := []struct {
		name              string
		noScan, noMapping bool
	}{{"scan", false, false}, {"entries", true, false}, {"copy", false, true}}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			if runtime.GOOS != "linux" && !mode.noMapping {
				t.Skip("memory images are mapped on Linux only")
			}
			noPagemapScan.Store(mode.noScan)
			noMapping = mode.noMapping
			defer func() { noPagemapScan.Store(false); noMapping = false }()
			r := newTestRuntime(t, Config{IdleInstances: 1})
			m, err := r.Load(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				call(m, "dirty")
				if got := call(m, "compute"); !bytes.Equal(got, want) {
					t.Fatalf("round %d: observed %x, fresh %x", i, got, want)
				}
			}
			if !mode.noScan && !mode.noMapping && noPagemapScan.Load() {
				t.Skip("the kernel has no PAGEMAP_SCAN (Linux 6.7): the reset read entries")
			}
			inst := m.cur.pool.get()
			if inst == nil || inst.memory.mapped == mode.noMapping {
				t.Fatalf("the pooled instance's memory is not what mode %s uses", mode.name)
			}
			m.cur.pool.put(inst)
			if st := r.InstanceStats(); st.Reused < 5 {
				t.Errorf("instance stats %+v: want the calls to reuse the instance", st)
			}
		})
	}
}

func newTestRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	return newTestRuntimeWith(t, cfg, switches.Switches{})
}

// newTestRuntimeWith is newTestRuntime with the switches s (hosttest's).
func newTestRuntimeWith(t *testing.T, cfg Config, s switches.Switches) *Runtime {
	t.Helper()
	r, err := NewRuntime(switches.With(context.Background(), s), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

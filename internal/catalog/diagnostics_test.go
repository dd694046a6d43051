package catalog

import (
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/registry"
)

// The projection gives each load its elapsed times at the document's
// time, its since in UTC to the millisecond, and its phase deadline only
// while one applies.
func TestLoadingProjection(t *testing.T) {
	since := time.Date(2026, 12, 1, 10, 0, 0, 123_456_789, time.FixedZone("x", 3600))
	p := Process{Loading: func() []registry.Load {
		return []registry.Load{
			{File: "a.wasm", Phase: "image", Since: since, PhaseSince: since.Add(2 * time.Second), PhaseTimeout: 20 * time.Second},
			{File: "b.wasm", Phase: "compile", Since: since, PhaseSince: since, Abandoned: true},
		}
	}}
	got := p.Loads(since.Add(3500 * time.Millisecond))
	want := []LoadingModule{
		{File: "a.wasm", Phase: "image", Since: time.Date(2026, 12, 1, 9, 0, 0, 123_000_000, time.UTC),
			ElapsedMS: 3500, PhaseElapsedMS: 1500, PhaseTimeoutMS: 20_000},
		{File: "b.wasm", Phase: "compile", Since: time.Date(2026, 12, 1, 9, 0, 0, 123_000_000, time.UTC),
			ElapsedMS: 3500, PhaseElapsedMS: 3500, Abandoned: true},
	}
	if len(got) != len(want) {
		t.Fatalf("loading = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] || got[i].Since.Location() != time.UTC {
			t.Errorf("loading[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if l := (Process{}).Loads(time.Now()); l == nil || len(l) != 0 {
		t.Errorf("without a view of the loads: %#v, want an empty list", l)
	}
}

package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/registry"
)

// /readyz reports the loads in progress and the abandoned ones apart,
// and stays 200 with them; without a view of the loads its answer is
// unchanged.
func TestReadyzCountsLoads(t *testing.T) {
	now := time.Now()
	loads := []registry.Load{
		{File: "a.wasm", Phase: "compile", Since: now, PhaseSince: now, PhaseTimeout: time.Minute},
		{File: "b.wasm", Phase: "queued", Since: now, PhaseSince: now},
		{File: "c.wasm", Phase: "compile", Since: now, PhaseSince: now, Abandoned: true},
	}
	get := func(s *Server) (int, string) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	tests := []struct {
		name    string
		loading func() []registry.Load
		want    string
	}{
		{name: "no view of the loads", want: `{"status":"ready"}`},
		{name: "none", loading: func() []registry.Load { return nil },
			want: `{"checks":{"tools":{"loading":0,"abandoned":0}},"status":"ready"}`},
		{name: "pending and abandoned", loading: func() []registry.Load { return loads },
			want: `{"checks":{"tools":{"loading":2,"abandoned":1}},"status":"ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(New(Config{Loading: tt.loading}))
			if code != http.StatusOK || body != tt.want {
				t.Errorf("/readyz = %d %s, want 200 %s", code, body, tt.want)
			}
		})
	}
}

// The projection gives each load its elapsed times at the document's
// time, its since in UTC to the millisecond, and its phase deadline only
// while one applies.
func TestLoadingProjection(t *testing.T) {
	since := time.Date(2026, 12, 1, 10, 0, 0, 123_456_789, time.FixedZone("x", 3600))
	s := New(Config{Loading: func() []registry.Load {
		return []registry.Load{
			{File: "a.wasm", Phase: "image", Since: since, PhaseSince: since.Add(2 * time.Second), PhaseTimeout: 20 * time.Second},
			{File: "b.wasm", Phase: "compile", Since: since, PhaseSince: since, Abandoned: true},
		}
	}})
	got := s.loading(since.Add(3500 * time.Millisecond))
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
	if l := New(Config{}).loading(time.Now()); l == nil || len(l) != 0 {
		t.Errorf("without a view of the loads: %#v, want an empty list", l)
	}
}

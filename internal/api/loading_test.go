package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/catalog"
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
			code, body := get(New(Config{Process: catalog.Process{Loading: tt.loading}}))
			if code != http.StatusOK || body != tt.want {
				t.Errorf("/readyz = %d %s, want 200 %s", code, body, tt.want)
			}
		})
	}
}

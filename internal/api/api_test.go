package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestReadyzWhileDraining(t *testing.T) {
	s := New(Config{})
	get := func(path string) int {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	if got := get("/readyz"); got != http.StatusOK {
		t.Fatalf("readyz before draining: %d", got)
	}
	s.Drain()
	if got := get("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d, want 503", got)
	}
	if got := get("/healthz"); got != http.StatusOK {
		t.Errorf("healthz while draining: %d, want 200", got)
	}
	if got := get("/nowhere"); got != http.StatusNotFound {
		t.Errorf("unknown route: %d", got)
	}
}

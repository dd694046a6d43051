package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReadyzChecks: /readyz is 503 "unavailable" while a named check
// fails, names it without its error's text, and is ready again once it
// passes.
func TestReadyzChecks(t *testing.T) {
	var down atomic.Bool
	s := New(Config{Checks: []ReadyCheck{
		{Name: "store", Check: func(context.Context) error {
			if down.Load() {
				return errors.New("dial tcp 10.1.2.3:5432: secret host")
			}
			return nil
		}},
		{Name: "redis", Check: func(context.Context) error { return nil }},
	}})
	get := func() (int, map[string]any) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("readyz body %q: %v", rec.Body, err)
		}
		return rec.Code, doc
	}
	if code, doc := get(); code != http.StatusOK || doc["status"] != "ready" {
		t.Fatalf("all checks pass: %d %v", code, doc)
	}
	down.Store(true)
	code, doc := get()
	checks, _ := doc["checks"].(map[string]any)
	if code != http.StatusServiceUnavailable || doc["status"] != "unavailable" || checks["store"] == nil || checks["redis"] != nil {
		t.Fatalf("store down: %d %v", code, doc)
	}
	if b, _ := json.Marshal(doc); strings.Contains(string(b), "secret host") {
		t.Fatalf("the answer shows the error: %s", b)
	}
	down.Store(false)
	if code, _ := get(); code != http.StatusOK {
		t.Fatalf("store back: %d", code)
	}
}

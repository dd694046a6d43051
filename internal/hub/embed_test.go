package hub_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/hub"
)

// TestEmbedded: the embedded dist gives a hub whether or not `make hub`
// ran: built, / is the app's index.html; not built, 503 hub.not_built.
func TestEmbedded(t *testing.T) {
	h, err := hub.New()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if h.Built() {
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<html") {
			t.Fatalf("built hub: %d %.200s", rec.Code, rec.Body)
		}
		return
	}
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), hub.CodeNotBuilt) {
		t.Fatalf("unbuilt hub: %d %s", rec.Code, rec.Body)
	}
	t.Log("the embedded dist holds no build (make hub); the not-built page was checked")
}

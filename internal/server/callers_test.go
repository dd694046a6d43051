package server_test

// Issue 16, items 11–17: callers, guard and abuse log.

import (
	"net/http"
	"testing"

	"github.com/toolhost/toolhost/internal/server"
)

// TestLegacyDeprecationSetting: the legacy routes send ADR-027's
// "Deprecation: true" by default and RFC 9745's "@<unix seconds>" when the
// server is configured so (issue 16, item 17).
func TestLegacyDeprecationSetting(t *testing.T) {
	for _, tc := range []struct {
		name, setting, want string
	}{
		{name: "default", want: "true"},
		{name: "rfc9745", setting: "@1790121600", want: "@1790121600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startConfigured(t, nil, false, func(cfg *server.Config) { cfg.Deprecation = tc.setting })
			status, h, body := r.do("GET", "/api/dev/nothing/here", "", nil)
			if status != http.StatusNotFound {
				t.Fatalf("unknown legacy route: %d %s", status, body)
			}
			if h.Get("Deprecation") != tc.want || h.Get("Sunset") == "" || h.Get("Link") == "" {
				t.Errorf("Deprecation=%q Sunset=%q Link=%q, want Deprecation %q", h.Get("Deprecation"), h.Get("Sunset"), h.Get("Link"), tc.want)
			}
		})
	}
}

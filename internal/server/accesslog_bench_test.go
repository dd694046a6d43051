package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolhost/toolhost/internal/api"
)

// BenchmarkAccessLog measures what the access log costs one request (issue
// 13, item 2: "Access logging stays, without allocation-heavy
// formatting"): GET /healthz through the API's handler, in process, with
// the access log off (a logger that discards), with the line written by
// the handlers toolhost serve uses (JSON and text, to io.Discard), and
// with a JSON handler above Info (the line not wanted). The allocations
// beyond the "discard" case are the access log's.
//
//	go test -run '^$' -bench AccessLog -benchmem ./internal/server
func BenchmarkAccessLog(b *testing.B) {
	for _, bc := range []struct {
		name   string
		logger *slog.Logger
	}{
		{name: "discard", logger: slog.New(slog.DiscardHandler)},
		{name: "json", logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		{name: "text", logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		{name: "json-warn", logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := api.New(api.Config{Logger: bc.logger}).Handler()
			req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET /healthz: %d", w.Code)
				}
			}
		})
	}
}

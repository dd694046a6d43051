package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/store"
)

// The abuse log's drop counter is in /metrics (issue 13, item 2: "a drop
// counter in the metrics when the queue is full"): a real Log over a real
// database, with room for one pending row and no flush during the test,
// drops the events of every other key, and the server's collectors show
// the count, with the events written once the log flushes.
func TestAbuseDropsInMetrics(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var l *abuse.Log
	m := metrics.New(metrics.WithCollectors(abuseCollectors(&l)...))
	if l, err = abuse.New(abuse.Config{Store: s, Logger: slog.New(slog.DiscardHandler), MaxPending: 1, FlushInterval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i, principal := range []string{"app:1", "app:1", "app:2", "app:3", "app:2"} {
		err := l.Record(ctx, abuse.Entry{Principal: principal, Tool: "hash", Reason: "quota_exceeded", Reported: true})
		if want := i >= 2; errors.Is(err, abuse.ErrDropped) != want {
			t.Fatalf("event %d (%s): %v", i, principal, err)
		}
	}
	scrape := func() string {
		t.Helper()
		srv := httptest.NewServer(m.Handler())
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	body := scrape()
	for _, want := range []string{
		"# TYPE toolhost_abuse_dropped_total counter",
		"toolhost_abuse_dropped_total 3",
		"toolhost_abuse_events_written_total 0",
		"toolhost_abuse_flush_errors_total 0",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if body := scrape(); !strings.Contains(body, "toolhost_abuse_events_written_total 2\n") || !strings.Contains(body, "toolhost_abuse_dropped_total 3\n") {
		t.Errorf("after a flush: %s", body)
	}
}

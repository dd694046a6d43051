package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/store"
)

func TestAbuseList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(dataDirEnv, "")
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, databaseFile))
	if err != nil {
		t.Fatal(err)
	}
	// Rows written directly: one from before migration 0005 (no last_at,
	// one event), 60 hours ago, and an aggregated one of 4 events, 48
	// hours ago.
	format := "2006-01-02T15:04:05.000Z"
	pre := time.Now().UTC().Add(-60 * time.Hour).Format(format)
	old := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Minute)
	oldAt, oldLast := old.Format(format), old.Add(20*time.Second).Format(format)
	if _, err := s.DB().Exec(`INSERT INTO abuse_log (at, tool, reason) VALUES (?, 'dns_lookup', 'probe.forbidden')`, pre); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`INSERT INTO abuse_log (at, bucket, last_at, count, tool, reason) VALUES (?, ?, ?, 4, 'port_check', 'throttled')`,
		oldAt, oldAt, oldLast); err != nil {
		t.Fatal(err)
	}
	l, err := abuse.New(abuse.Config{Store: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Three events of one key within a minute make one row of count 3;
	// they are recorded well inside a minute.
	if now := time.Now(); now.Second() >= 58 {
		time.Sleep(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
	}
	for _, id := range []string{"req-1", "req-2", "req-3"} {
		if err := l.Record(ctx, abuse.Entry{IP: netip.MustParseAddr("203.0.113.9"), Principal: "user:bob", Tool: "port_check", Reason: "quota.exceeded", Reported: true, RequestID: id}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	s.Close()

	recent := regexp.MustCompile(`^\{"caller":"[0-9a-f]{64}","count":3,"first_request_id":"req-1","id":3,"last_at":"([0-9T:.-]{23}Z)","last_request_id":"req-3","principal":"user:bob","reason":"quota.exceeded","reported":true,"time":"([0-9T:.-]{23}Z)","tool":"port_check"\}$`)
	older := []string{
		`{"caller":"","count":1,"id":1,"last_at":"` + pre + `","principal":"","reason":"probe.forbidden","reported":false,"time":"` + pre + `","tool":"dns_lookup"}`,
		`{"caller":"","count":4,"id":2,"last_at":"` + oldLast + `","principal":"","reason":"throttled","reported":false,"time":"` + oldAt + `","tool":"port_check"}`,
	}

	tests := []struct {
		name   string
		args   []string
		code   int
		lines  int    // stdout lines
		stderr string // substring expected on stderr
	}{
		{name: "all", args: []string{"abuse", "list", "--data-dir", dir}, lines: 3},
		{name: "since a duration", args: []string{"abuse", "list", "--since", "24h", "--data-dir", dir}, lines: 1},
		{name: "since days", args: []string{"abuse", "list", "--since", "3d", "--data-dir", dir}, lines: 3},
		{name: "since two days and a half", args: []string{"abuse", "list", "--since", "54h", "--data-dir", dir}, lines: 2},
		{name: "since a time", args: []string{"abuse", "list", "--data-dir", dir, "--since", time.Now().Add(-time.Hour).Format(time.RFC3339)}, lines: 1},
		{name: "since the future", args: []string{"abuse", "list", "--data-dir", dir, "--since", time.Now().Add(time.Hour).Format(time.RFC3339)}},
		{name: "bad since", args: []string{"abuse", "list", "--since", "yesterday", "--data-dir", dir}, code: 2, stderr: "usage"},
		{name: "negative since", args: []string{"abuse", "list", "--since", "-1h", "--data-dir", dir}, code: 2, stderr: "usage"},
		{name: "no subcommand", args: []string{"abuse"}, code: 2, stderr: "usage"},
		{name: "extra argument", args: []string{"abuse", "list", "x", "--data-dir", dir}, code: 2, stderr: "usage"},
		{name: "missing database", args: []string{"abuse", "list", "--data-dir", filepath.Join(dir, "nope")}, code: 1, stderr: "no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if stdout.Len() == 0 {
				lines = nil
			}
			if code != tt.code || len(lines) != tt.lines || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("run(%q) = %d\nstdout: %q\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
			if len(lines) == 0 {
				return
			}
			// Oldest first: the rows written directly that are recent
			// enough, then the one Record made.
			n := len(lines) - 1
			for i, want := range older[len(older)-n:] {
				if lines[i] != want {
					t.Fatalf("line %d: %s\nwant %s", i, lines[i], want)
				}
			}
			m := recent.FindStringSubmatch(lines[n])
			if m == nil {
				t.Fatalf("unexpected last line %s", lines[n])
			}
			first, err1 := time.Parse(format, m[2])
			last, err2 := time.Parse(format, m[1])
			if err1 != nil || err2 != nil || last.Before(first) {
				t.Fatalf("the recent row's time %s and last_at %s", m[2], m[1])
			}
		})
	}
}

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

	"toolhost/internal/abuse"
	"toolhost/internal/store"
)

func TestAbuseList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(dataDirEnv, "")
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, databaseFile))
	if err != nil {
		t.Fatal(err)
	}
	l, err := abuse.New(abuse.Config{Store: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, abuse.Entry{IP: netip.MustParseAddr("203.0.113.9"), Principal: "user:bob", Tool: "port_check", Reason: "quota.exceeded", Reported: true}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// A row of two days ago, written directly.
	old := time.Now().UTC().Add(-48 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	if _, err := s.DB().Exec(`INSERT INTO abuse_log (at, tool, reason) VALUES (?, 'dns_lookup', 'probe.forbidden')`, old); err != nil {
		t.Fatal(err)
	}
	s.Close()

	recent := regexp.MustCompile(`^\{"caller":"[0-9a-f]{64}","id":1,"principal":"user:bob","reason":"quota.exceeded","reported":true,"time":"[0-9T:.-]{23}Z","tool":"port_check"\}$`)
	older := `{"caller":"","id":2,"principal":"","reason":"probe.forbidden","reported":false,"time":"` + old + `","tool":"dns_lookup"}`

	tests := []struct {
		name   string
		args   []string
		code   int
		lines  int    // stdout lines
		stderr string // substring expected on stderr
	}{
		{name: "all", args: []string{"abuse", "list", "--data-dir", dir}, lines: 2},
		{name: "since a duration", args: []string{"abuse", "list", "--since", "24h", "--data-dir", dir}, lines: 1},
		{name: "since days", args: []string{"abuse", "list", "--since", "3d", "--data-dir", dir}, lines: 2},
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
			for _, line := range lines {
				if !recent.MatchString(line) && line != older {
					t.Fatalf("unexpected line %s", line)
				}
			}
			if tt.lines == 2 && lines[0] != older {
				t.Fatalf("rows not oldest first:\n%s", stdout.String())
			}
		})
	}
}

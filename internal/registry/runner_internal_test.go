package registry

import (
	"log/slog"
	"testing"
)

// Each guest log line is logged at its own level, without its tag.
func TestGuestLogLevel(t *testing.T) {
	for _, c := range []struct {
		line, msg string
		level     slog.Level
	}{
		{"[TRACE] t", "t", slog.LevelDebug},
		{"[DEBUG] d", "d", slog.LevelDebug},
		{"[INFO] i", "i", slog.LevelInfo},
		{"[WARN] w", "w", slog.LevelWarn},
		{"[ERROR] e", "e", slog.LevelError},
		{"[STDOUT] o", "o", slog.LevelInfo},
		{"[STDERR] panic: x", "panic: x", slog.LevelWarn},
		{"[host] http_request refused", "http_request refused", slog.LevelInfo},
		{"[log truncated]", "[log truncated]", slog.LevelInfo},
	} {
		level, msg := guestLogLevel([]byte(c.line))
		if level != c.level || string(msg) != c.msg {
			t.Errorf("guestLogLevel(%q) = %v %q, want %v %q", c.line, level, msg, c.level, c.msg)
		}
	}
}

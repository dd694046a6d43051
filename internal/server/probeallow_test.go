package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/server"
)

// An allow-list that does not parse stops the server at startup with an
// error naming the variable and the bad entry, before anything is opened,
// instead of failing every probe item later.
func TestBadProbeAllowRefusesToStart(t *testing.T) {
	data := t.TempDir()
	srv, err := server.New(context.Background(), server.Config{
		ToolsDir: t.TempDir(), DataDir: data, ProbeAllow: "127.0.0.0/8, localhost",
	})
	if err == nil {
		srv.Shutdown(context.Background())
		t.Fatal("server.New accepted the allow-list \"127.0.0.0/8, localhost\"")
	}
	if !errors.Is(err, netprobe.ErrAllowList) {
		t.Fatalf("err %v, want netprobe.ErrAllowList", err)
	}
	if msg := err.Error(); !strings.Contains(msg, netprobe.AllowEnv+" entry 2") || !strings.Contains(msg, `"localhost"`) {
		t.Fatalf("message %q does not name %s entry 2 \"localhost\"", msg, netprobe.AllowEnv)
	}
	if _, err := os.Stat(filepath.Join(data, server.DatabaseFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database was created before the refusal: %v", err)
	}
}

package server_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/engines/pages"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
)

// TestOpenTools checks the composition serve and the command line share:
// the page-only tools always, the native packages in a supervisor only when
// there are natives, and a refusal that leaves nothing open (TestMain's
// goleak checks what Close and a failed OpenTools leave behind).
func TestOpenTools(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Run("without natives", func(t *testing.T) {
		tools, err := server.OpenTools(ctx, server.ToolsConfig{Static: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if tools.Supervisor != nil || tools.MemoryMode() != engine.MemoryUnavailable {
			t.Errorf("supervisor %v, memory mode %q: want none without natives", tools.Supervisor, tools.MemoryMode())
		}
		snap := tools.Registry.Snapshot()
		if n := len(snap.Services()); n != 1 {
			t.Errorf("%d services, want the page-only tool alone", n)
		}
		if svc, ok := snap.Service("yt"); !ok || svc.Source != "builtin/"+pages.Name || svc.Definition.Platform.API {
			t.Errorf("yt: %v %+v, want the page-only tool of builtin/pages", ok, svc)
		}
		if err := tools.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := tools.Close(ctx); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})

	t.Run("with natives and a folder", func(t *testing.T) {
		dir := t.TempDir()
		tools, err := server.OpenTools(ctx, server.ToolsConfig{
			Dir: dir, Natives: testNatives(), Static: true, Logger: quiet,
			Supervisor: supervisor.Config{Executable: os.Args[0], Env: []string{workerEnv + "=1"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer tools.Close(ctx)
		if tools.Supervisor == nil || tools.MemoryMode() != tools.Supervisor.MemoryMode() {
			t.Fatalf("supervisor %v, memory mode %q", tools.Supervisor, tools.MemoryMode())
		}
		snap := tools.Registry.Snapshot()
		for _, code := range []string{"yt", "pac_allocator", "pdf_protect", "dns_lookup", "sleeper"} {
			if _, ok := snap.Service(code); !ok {
				t.Errorf("%s is not published", code)
			}
		}
		if f := snap.Failures(); len(f) != 0 {
			t.Errorf("failures %v, want none", f)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := server.OpenTools(ctx, server.ToolsConfig{Dir: filepath.Join(t.TempDir(), "nope"), Static: true, Logger: quiet})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a missing folder: err %v, want fs.ErrNotExist", err)
		}
		_, err = server.OpenTools(ctx, server.ToolsConfig{ProbeAllow: "localhost", Static: true, Logger: quiet})
		if !errors.Is(err, netprobe.ErrAllowList) {
			t.Errorf("a bad allow-list: err %v, want netprobe.ErrAllowList", err)
		}
	})
}

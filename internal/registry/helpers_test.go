package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// logBuffer collects the operator's log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLoader returns a loader on a fresh runtime sharing the test binary's
// compilation cache. The runtime closes when the test ends, after the
// registries the test opened.
func newLoader(t testing.TB) *wasmtool.Loader {
	t.Helper()
	rt, err := host.NewRuntime(context.Background(), host.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// config is a registry configuration over dir with a fresh loader, the
// default platform, and a log collected in the returned buffer.
func config(t testing.TB, dir string) (registry.Config, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	return registry.Config{
		Dir:      dir,
		Loader:   newLoader(t),
		Platform: policy.DefaultPlatform(),
		Settle:   50 * time.Millisecond,
		Interval: 200 * time.Millisecond,
		Static:   true,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, logs
}

// open opens a registry that closes when the test ends.
func open(t testing.TB, cfg registry.Config) *registry.Registry {
	t.Helper()
	r, err := registry.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// Module sources.
func pingWASM(t testing.TB) []byte             { return testkit.WAT(t, "ping") }
func liarWASM(t testing.TB) []byte             { return testkit.WAT(t, "output_lies") }
func bundled(t testing.TB, name string) []byte { return testkit.Go(t, "plugins-src/"+name) }

func vowelsWASM(t testing.TB) []byte {
	t.Helper()
	return testkit.Extism(t, "vowels")
}

// writeFile writes a file as a careful writer does: to a temporary name,
// then renamed into place.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// age sets a file's modification time an hour back: it counts as settled
// whatever the settle time.
func age(t testing.TB, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// service returns the vowel counter's sidecar service declared under code,
// changed by edit.
func service(t testing.TB, code string, edit func(map[string]any)) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", "vowels", "vowels.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decl struct {
		Services []map[string]any `json:"services"`
	}
	if err := json.Unmarshal(b, &decl); err != nil {
		t.Fatal(err)
	}
	s := decl.Services[0]
	s["tool_code"] = code
	s["ui"].(map[string]any)["component_key"] = code
	s["documentation"].(map[string]any)["path"] = "tools/" + code
	if edit != nil {
		edit(s)
	}
	return s
}

// declaration is a package declaration of services.
func declaration(t testing.TB, services ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"contract_version":       "1.0.0",
		"implementation_version": "1.0.0",
		"services":               services,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sidecarModule writes dir/NAME.wasm, the vowel counter, with a sidecar
// declaring services; both are aged so that they count as settled.
func sidecarModule(t testing.TB, dir, name string, services ...map[string]any) {
	t.Helper()
	side := filepath.Join(dir, name+wasmtool.SidecarSuffix)
	writeFile(t, side, declaration(t, services...))
	writeFile(t, filepath.Join(dir, name+".wasm"), vowelsWASM(t))
	age(t, side)
	age(t, filepath.Join(dir, name+".wasm"))
}

// codes returns the codes of a snapshot's services.
func codes(s *registry.Snapshot) []string {
	var out []string
	for _, svc := range s.Services() {
		out = append(out, svc.Code())
	}
	return out
}

// job is an item of svc with params, carrying the published effective
// policy of the params' operation.
func job(t testing.TB, svc *registry.Service, params string) engine.Job {
	t.Helper()
	var doc struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal([]byte(params), &doc); err != nil {
		t.Fatal(err)
	}
	eff, ok := svc.Effective[doc.Operation]
	if !ok {
		t.Fatalf("%s has no operation %q", svc.Code(), doc.Operation)
	}
	return engine.Job{ExecutionID: "test", ToolCode: svc.Code(), Operation: eff, Parameters: []byte(params)}
}

// run runs one item of the published service code.
func run(t testing.TB, s *registry.Snapshot, code, params string) (*engine.Outcome, error) {
	t.Helper()
	svc, ok := s.Service(code)
	if !ok {
		t.Fatalf("generation %d publishes no %q (services %v, failures %+v)", s.Generation(), code, codes(s), s.Failures())
	}
	return svc.Runner.Run(context.Background(), job(t, svc, params))
}

// waitFor polls the registry until cond holds for its snapshot. The
// timeout is generous: it only stops a broken test, it measures nothing.
func waitFor(t testing.TB, r *registry.Registry, what string, cond func(*registry.Snapshot) bool) *registry.Snapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := r.Snapshot()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: generation %d has services %v, failures %+v", what, s.Generation(), codes(s), s.Failures())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isCode(err error, code toolerr.Code) bool {
	c, ok := toolerr.CodeOf(err)
	return ok && c == code
}

func hasFailure(s *registry.Snapshot, want registry.Failure) bool {
	return slices.Contains(s.Failures(), want)
}

// noPath reports whether no failure carries a directory.
func noPath(t testing.TB, s *registry.Snapshot, dir string) {
	t.Helper()
	for _, f := range s.Failures() {
		if strings.ContainsAny(f.File, `/\`) && !strings.HasPrefix(f.File, "builtin/") || strings.Contains(f.Detail, dir) {
			t.Errorf("failure %+v carries a path", f)
		}
	}
}

package registry_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// boundedConfig is config(t, dir) with a loader of the given phase
// deadlines, whose loads (abandoned ones included) are waited for once
// the registry has closed.
func boundedConfig(t *testing.T, dir string, lc wasmtool.Config) (registry.Config, *logBuffer) {
	t.Helper()
	cfg, logs := config(t, dir)
	rt, err := host.NewRuntime(context.Background(), host.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	lc.Platform = policy.DefaultPlatform()
	l, err := wasmtool.NewLoader(rt, lc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Loader = l
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := l.Wait(ctx); err != nil {
			t.Errorf("abandoned loads never ended: %v", err)
		}
	})
	return cfg, logs
}

// settled writes dir/name with data, aged so that it counts as settled.
func settled(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, data)
	age(t, path)
	return path
}

func importFailed(file, detail string) registry.Failure {
	return registry.Failure{File: file, Reason: registry.ReasonImportFailed, Detail: detail}
}

// A FIFO and a link to one are refused without blocking the discovery and
// without being read; a healthy module beside them is published.
func TestFIFOsAreRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.wasm")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("fifo.wasm", filepath.Join(dir, "link.wasm")); err != nil {
		t.Fatal(err)
	}
	settled(t, dir, "ping.wasm", pingWASM(t))
	cfg, _ := config(t, dir)
	done := make(chan *registry.Registry, 1)
	go func() { done <- open(t, cfg) }()
	var r *registry.Registry
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Open blocked on a FIFO")
	}
	s := r.Snapshot()
	for _, f := range []string{"fifo.wasm", "link.wasm"} {
		if !hasFailure(s, importFailed(f, "not_regular_file")) {
			t.Errorf("%s: failures %+v", f, s.Failures())
		}
	}
	if _, ok := s.Service("ping"); !ok {
		t.Errorf("ping is not published beside the FIFOs: %v", codes(s))
	}
}

// A live link flipped from a module to a FIFO does not block the registry:
// the link is refused, other modules keep loading, and the refusal is
// warned once, not at every rescan; so is a link loop.
func TestLinkFlippedToFIFO(t *testing.T) {
	dir := t.TempDir()
	cfg, logs := config(t, dir)
	cfg.Static = false
	cfg.Interval = 50 * time.Millisecond
	settled(t, dir, ".ping", pingWASM(t))
	if err := os.Symlink(".ping", filepath.Join(dir, "link.wasm")); err != nil {
		t.Fatal(err)
	}
	r := open(t, cfg)
	if _, ok := r.Snapshot().Service("ping"); !ok {
		t.Fatalf("the link's module is not published: %+v", r.Snapshot().Failures())
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tmp := filepath.Join(dir, ".link.tmp")
	if err := os.Symlink(".fifo", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "link.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop.wasm", filepath.Join(dir, "loop.wasm")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, "the flipped link to be refused", func(s *registry.Snapshot) bool {
		return hasFailure(s, importFailed("link.wasm", "not_regular_file"))
	})
	settled(t, dir, "liar.wasm", liarWASM(t))
	waitFor(t, r, "a module dropped after the flip", func(s *registry.Snapshot) bool {
		_, ok := s.Service("liar")
		return ok
	})
	time.Sleep(10 * cfg.Interval) // ten more rescans
	// Logged when loading, loaded, and refused: not at every rescan.
	if n := strings.Count(logs.String(), "file=link.wasm"); n != 3 {
		t.Errorf("link.wasm logged %d times, want 3:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "file=loop.wasm"); n != 1 {
		t.Errorf("the link loop was warned %d times, want once:\n%s", n, logs)
	}
	if !hasFailure(r.Snapshot(), importFailed("loop.wasm", "unreadable")) {
		t.Errorf("the link loop is not listed: %+v", r.Snapshot().Failures())
	}
}

// vmRSS is the process's resident memory in bytes.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// A 1 GiB sparse module, and a module with a 1 GiB sidecar, are refused
// from their size without being read: resident memory does not jump.
func TestHugeFilesAreRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	huge := settled(t, dir, "huge.wasm", nil)
	if err := os.Truncate(huge, 1<<30); err != nil {
		t.Fatal(err)
	}
	settled(t, dir, "side.wasm", vowelsWASM(t))
	side := settled(t, dir, "side.tool.json", nil)
	if err := os.Truncate(side, 1<<30); err != nil {
		t.Fatal(err)
	}
	age(t, huge)
	age(t, side)
	cfg, logs := config(t, dir)
	before := vmRSS(t)
	r := open(t, cfg)
	if grown := vmRSS(t) - before; grown > 256<<20 {
		t.Errorf("resident memory grew by %d MiB refusing 1 GiB files", grown>>20)
	}
	s := r.Snapshot()
	if !hasFailure(s, importFailed("huge.wasm", "module_too_large")) || !hasFailure(s, importFailed("side.wasm", "sidecar_too_large")) {
		t.Errorf("failures %+v", s.Failures())
	}
	if !strings.Contains(logs.String(), "1073741824 bytes are over the 67108864-byte limit") {
		t.Errorf("the log does not give the size and the limit:\n%s", logs)
	}
}

// A module whose name is near the 255-byte limit (its sidecar's name would
// be over it) loads.
func TestLongModuleName(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, data []byte) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		age(t, path)
	}
	for _, n := range []int{241, 246, 250} {
		put(strings.Repeat(strconv.Itoa(n%10), n)+".wasm", pingWASM(t))
	}
	put(strings.Repeat("v", 245)+".wasm", vowelsWASM(t))
	put(strings.Repeat("v", 245)+".tool.json", declaration(t, service(t, "vowels", nil)))
	cfg, _ := config(t, dir)
	s := open(t, cfg).Snapshot()
	// Three modules claim ping: every one is listed, as a duplicate.
	dups := 0
	for _, f := range s.Failures() {
		if f.Reason == registry.ReasonDuplicateCode && f.ToolCode == "ping" {
			dups++
		}
	}
	if _, ok := s.Service("vowels"); dups != 3 || !ok {
		t.Fatalf("services %v, failures %+v", codes(s), s.Failures())
	}
}

// A module whose load outlasts its phase deadline (its _initialize loops:
// the image phase) delays only itself: a module dropped at the same time
// is published first, and the hostile one is refused with
// load_timeout/image within its deadline.
func TestHostileLoadDelaysOnlyItself(t *testing.T) {
	dir := t.TempDir()
	// Well under the time the loop takes to burn the image's fuel (host
	// then refuses it as module_invalid).
	const deadline = time.Second
	cfg, _ := boundedConfig(t, dir, wasmtool.Config{ImageTimeout: deadline})
	cfg.Static = false
	cfg.BatchWait = 100 * time.Millisecond
	r := open(t, cfg)
	loop := testkit.WAT(t, "image_loop")
	ping := pingWASM(t)
	dropped := time.Now()
	writeFile(t, filepath.Join(dir, "loop.wasm"), loop)
	writeFile(t, filepath.Join(dir, "ping.wasm"), ping)
	refused := importFailed("loop.wasm", "load_timeout/image")
	s := waitFor(t, r, "ping", func(s *registry.Snapshot) bool {
		_, ok := s.Service("ping")
		return ok
	})
	if hasFailure(s, refused) {
		t.Fatalf("ping was published only with the hostile module's refusal (after %v)", time.Since(dropped))
	}
	waitFor(t, r, "the hostile module's refusal", func(s *registry.Snapshot) bool { return hasFailure(s, refused) })
	// The settle time, the image deadline, and a generous margin.
	if took := time.Since(dropped); took > cfg.Settle+deadline+10*time.Second {
		t.Errorf("refused %v after it was dropped, image deadline %v", took, deadline)
	}
}

// Open returns after LoadWait with what is ready; a module still loading
// is published when its load ends (refused, whether its image deadline or
// its image fuel runs out first).
func TestOpenDoesNotWaitForSlowLoads(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, "loop.wasm", testkit.WAT(t, "image_loop"))
	settled(t, dir, "ping.wasm", pingWASM(t))
	const deadline = 3 * time.Second
	cfg, _ := boundedConfig(t, dir, wasmtool.Config{ImageTimeout: deadline})
	cfg.LoadWait = 300 * time.Millisecond
	start := time.Now()
	r := open(t, cfg)
	s := r.Snapshot()
	if took := time.Since(start); took >= deadline {
		t.Errorf("Open waited %v, for the hostile module's image deadline", took)
	}
	if len(s.Failures()) != 0 {
		t.Errorf("generation 1 waited for the hostile module: failures %+v", s.Failures())
	}
	waitFor(t, r, "ping and the hostile module's refusal", func(s *registry.Snapshot) bool {
		_, ok := s.Service("ping")
		return ok && slices.ContainsFunc(s.Failures(), func(f registry.Failure) bool { return f.File == "loop.wasm" })
	})
}

// Started is closed once the loads Open left running have ended and the
// snapshot with their outcomes is published — a load refused at its
// deadline included — and at once when Open waited for every load. Until
// then the snapshots say they are starting and FirstScan counts the files
// found and the loads ended; after it neither.
func TestStarted(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, "loop.wasm", testkit.WAT(t, "image_loop"))
	settled(t, dir, "ping.wasm", pingWASM(t))
	cfg, _ := boundedConfig(t, dir, wasmtool.Config{ImageTimeout: 3 * time.Second})
	cfg.LoadWait = time.Nanosecond // return at once, as serve does
	r := open(t, cfg)
	select {
	case <-r.Started():
		t.Fatalf("started before the first scan's loads ended: %+v", r.Loading())
	default:
	}
	if !r.Snapshot().Starting() {
		t.Error("a snapshot published while the first scan loads does not say it is starting")
	}
	if found, ended := r.FirstScan(); found != 2 || ended < 0 || ended > 1 {
		t.Errorf("FirstScan while loop.wasm loads: %d found, %d ended; want 2 and at most 1", found, ended)
	}
	select {
	case <-r.Started():
	case <-time.After(60 * time.Second):
		t.Fatalf("never started: loads %+v", r.Loading())
	}
	s := r.Snapshot()
	if s.Starting() {
		t.Error("the snapshot current once started says it is starting")
	}
	if found, ended := r.FirstScan(); found != 2 || ended != 2 {
		t.Errorf("FirstScan once started: %d found, %d ended; want 2 and 2", found, ended)
	}
	if _, ok := s.Service("ping"); !ok {
		t.Errorf("started without ping published")
	}
	if !slices.ContainsFunc(s.Failures(), func(f registry.Failure) bool { return f.File == "loop.wasm" }) {
		t.Errorf("started without the hostile module's refusal published: %+v", s.Failures())
	}

	quick := t.TempDir()
	settled(t, quick, "ping.wasm", pingWASM(t))
	cfg, _ = boundedConfig(t, quick, wasmtool.Config{})
	cfg.LoadWait = 0 // wait for every load
	r = open(t, cfg)
	select {
	case <-r.Started():
	default:
		t.Error("Open waited for every load, yet the registry is not started")
	}
	if r.Snapshot().Starting() {
		t.Error("generation 1, with every load of the first scan in it, says it is starting")
	}
	if found, ended := r.FirstScan(); found != 1 || ended != 1 {
		t.Errorf("FirstScan after Open waited for every load: %d found, %d ended; want 1 and 1", found, ended)
	}
}

// Close returns within its context while a load is stuck, and the load's
// work ends after it.
func TestCloseDuringStuckLoad(t *testing.T) {
	dir := t.TempDir()
	cfg, logs := boundedConfig(t, dir, wasmtool.Config{DescribeTimeout: 10 * time.Minute})
	cfg.Static = false
	r, err := registry.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "loop.wasm"), testkit.WAT(t, "describe_loop"))
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs.String(), "loading a module") {
		if time.Now().After(deadline) {
			t.Fatalf("the load never started:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // into describe
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	if err := r.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second+time.Second {
		t.Errorf("Close took %v with a 2 s context", took)
	}
}

// Structure limits and refused imports are told apart in diagnostics.
func TestStructureRefusalsInDiagnostics(t *testing.T) {
	dir := t.TempDir()
	settled(t, dir, "tables.wasm", testkit.WAT(t, "tables_bomb"))
	settled(t, dir, "table_import.wasm", testkit.WAT(t, "imported_table"))
	settled(t, dir, "global_import.wasm", testkit.WAT(t, "imported_global"))
	cfg, _ := config(t, dir)
	s := open(t, cfg).Snapshot()
	for _, want := range []registry.Failure{
		importFailed("tables.wasm", "module_limits/tables"),
		importFailed("table_import.wasm", "import_refused"),
		importFailed("global_import.wasm", "import_refused"),
	} {
		if !hasFailure(s, want) {
			t.Errorf("failures %+v, want %+v", s.Failures(), want)
		}
	}
}

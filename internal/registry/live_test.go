package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The live folder: a module dropped in, replaced and removed is published,
// swapped and withdrawn without a restart, each as a new generation.
func TestLiveFolder(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir)
	cfg.Static = false
	r := open(t, cfg)
	if s := r.Snapshot(); s.Generation() != 1 || len(s.Services()) != 0 {
		t.Fatalf("an empty folder: generation %d, services %v", s.Generation(), codes(s))
	}
	path := filepath.Join(dir, "tool.wasm")

	writeFile(t, path, pingWASM(t))
	s := waitFor(t, r, "ping to be added", func(s *registry.Snapshot) bool {
		_, ok := s.Service("ping")
		return ok
	})
	if out, err := run(t, s, "ping", `{"operation":"ping"}`); err != nil || string(out.Result) != `{"ok":true}` {
		t.Fatalf("ping = %+v, %v", out, err)
	}
	added := s.Generation()

	writeFile(t, path, liarWASM(t))
	s = waitFor(t, r, "tool.wasm to be replaced", func(s *registry.Snapshot) bool {
		return slices.Equal(codes(s), []string{"liar"})
	})
	if s.Generation() <= added {
		t.Errorf("replaced in generation %d, after %d", s.Generation(), added)
	}
	replaced := s.Generation()

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, r, "tool.wasm to be removed", func(s *registry.Snapshot) bool { return len(s.Services()) == 0 })
	if s.Generation() <= replaced {
		t.Errorf("removed in generation %d, after %d", s.Generation(), replaced)
	}
	// A synchronous rescan returns once the removal's publication (and its
	// retirements) are done.
	if _, err := r.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := r.OpenModules(); n != 0 {
		t.Errorf("%d modules open after the folder emptied", n)
	}
}

// A module written in two halves, with no rename, by a writer that pauses
// between them, ends healthy.
func TestLiveHalfWrittenModule(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir)
	cfg.Static = false
	r := open(t, cfg)
	wasm := pingWASM(t)
	path := filepath.Join(dir, "ping.wasm")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(wasm[:len(wasm)/2]); err != nil {
		t.Fatal(err)
	}
	// The writer pauses longer than the settle time: the half is read and
	// refused. (Whether the watcher reads it first does not matter.)
	age(t, path)
	waitFor(t, r, "the half-written module to be read", func(s *registry.Snapshot) bool {
		return hasFailure(s, registry.Failure{File: "ping.wasm", Reason: registry.ReasonImportFailed, Detail: "module_invalid"})
	})
	if _, err := f.Write(wasm[len(wasm)/2:]); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, r, "the completed module to be healthy", func(s *registry.Snapshot) bool {
		_, ok := s.Service("ping")
		return ok && len(s.Failures()) == 0
	})
	if out, err := run(t, s, "ping", `{"operation":"ping"}`); err != nil || string(out.Result) != `{"ok":true}` {
		t.Fatalf("ping = %+v, %v", out, err)
	}
}

// The settle rule, step by step: a file being written is not read; once
// settled it is; a truncated read is retried when the file changes; while
// the new bytes settle, the previous version stays published.
func TestSettleRule(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir)
	cfg.Settle = time.Hour
	r := open(t, cfg)
	ctx := context.Background()
	wasm := pingWASM(t)
	path := filepath.Join(dir, "ping.wasm")

	if err := os.WriteFile(path, wasm[:len(wasm)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if pending, err := r.ScanOnce(ctx); err != nil || pending.IsZero() {
		t.Fatalf("ScanOnce = %v, %v; want the file pending", pending, err)
	}
	if s := r.Snapshot(); s.Generation() != 1 || len(s.Failures()) != 0 {
		t.Fatalf("a file being written was read: generation %d, failures %+v", s.Generation(), s.Failures())
	}

	age(t, path) // the writer paused: the file has settled, half-written
	if _, err := r.ScanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	if want := (registry.Failure{File: "ping.wasm", Reason: registry.ReasonImportFailed, Detail: "module_invalid"}); !hasFailure(s, want) {
		t.Fatalf("failures %+v, want %+v", s.Failures(), want)
	}
	// Scanning again reads nothing and publishes nothing.
	if _, err := r.ScanOnce(ctx); err != nil || r.Snapshot() != s {
		t.Fatalf("an unchanged folder made generation %d (%v)", r.Snapshot().Generation(), err)
	}

	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if pending, err := r.ScanOnce(ctx); err != nil || pending.IsZero() || r.Snapshot() != s {
		t.Fatalf("the rest being written: pending %v, %v, generation %d", pending, err, r.Snapshot().Generation())
	}
	age(t, path)
	if _, err := r.ScanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	s = r.Snapshot()
	if _, ok := s.Service("ping"); !ok || len(s.Failures()) != 0 {
		t.Fatalf("generation %d: services %v, failures %+v", s.Generation(), codes(s), s.Failures())
	}

	// A replacement being written keeps the published version.
	if err := os.WriteFile(path, liarWASM(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ScanOnce(ctx); err != nil || r.Snapshot() != s {
		t.Fatalf("a replacement being written was published (%v)", err)
	}
}

// An unchanged module keeps its loaded Tool: a touched or re-copied file
// makes no new generation; a changed sidecar does.
func TestUnchangedModuleIsReused(t *testing.T) {
	dir := t.TempDir()
	sidecarModule(t, dir, "vowels", service(t, "vowels", nil))
	cfg, _ := config(t, dir)
	r := open(t, cfg)
	s := r.Snapshot()
	ctx := context.Background()

	path := filepath.Join(dir, "vowels.wasm")
	then := time.Now().Add(-30 * time.Minute)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
	if again, err := r.Reload(ctx); err != nil || again != s {
		t.Fatalf("a touched module made generation %d (%v)", again.Generation(), err)
	}
	writeFile(t, path, vowelsWASM(t))
	age(t, path)
	if again, err := r.Reload(ctx); err != nil || again != s {
		t.Fatalf("a re-copied module made generation %d (%v)", again.Generation(), err)
	}
	if n := r.OpenModules(); n != 1 {
		t.Errorf("%d modules open, want 1", n)
	}

	sidecarModule(t, dir, "vowels", service(t, "vowels", nil), service(t, "vowels_too", nil))
	next, err := r.Reload(ctx)
	if err != nil || next.Generation() != s.Generation()+1 || !slices.Equal(codes(next), []string{"vowels", "vowels_too"}) {
		t.Fatalf("a changed sidecar: generation %d, services %v (%v)", next.Generation(), codes(next), err)
	}
	if n := r.OpenModules(); n != 1 {
		t.Errorf("%d modules open after the swap, want 1", n)
	}
}

// An item running on a module that a new generation drops finishes on it;
// the module takes no new item and closes after the last one.
func TestRetiredModuleFinishesItsItems(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tool.wasm")
	writeFile(t, path, pingWASM(t))
	age(t, path)
	cfg, _ := config(t, dir)
	r := open(t, cfg)
	old := r.Snapshot()
	ping, _ := old.Service("ping")

	started, release := make(chan struct{}), make(chan struct{})
	restore := HoldRuns(t, started, release)
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	j := job(t, ping, `{"operation":"ping"}`)
	go func() {
		out, err := ping.Runner.Run(context.Background(), j)
		if out != nil {
			done <- result{out.Result, err}
			return
		}
		done <- result{nil, err}
	}()
	<-started
	restore()

	writeFile(t, path, liarWASM(t))
	age(t, path)
	s, err := r.Reload(context.Background())
	if err != nil || !slices.Equal(codes(s), []string{"liar"}) {
		t.Fatalf("the swap: services %v (%v)", codes(s), err)
	}
	if n := r.OpenModules(); n != 2 {
		t.Errorf("%d modules open during the item, want the retired one and its successor", n)
	}
	// A new item on the superseded generation is refused, retryably.
	if _, err := ping.Runner.Run(context.Background(), job(t, ping, `{"operation":"ping"}`)); !isCode(err, toolerr.VersionMismatch) {
		t.Errorf("an item on a retired module: %v, want version_mismatch", err)
	}

	close(release)
	res := <-done
	if res.err != nil || string(res.out) != `{"ok":true}` {
		t.Fatalf("the item in flight = %s, %v", res.out, res.err)
	}
	if n := r.OpenModules(); n != 1 {
		t.Errorf("%d modules open after the item, want 1", n)
	}
}

// Close waits for running items, and refuses new ones.
func TestCloseWaitsForRunningItems(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ping.wasm"), pingWASM(t))
	age(t, filepath.Join(dir, "ping.wasm"))
	cfg, _ := config(t, dir)
	cfg.Static = false
	r, err := registry.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ping, _ := r.Snapshot().Service("ping")

	started, release := make(chan struct{}), make(chan struct{})
	restore := HoldRuns(t, started, release)
	done := make(chan error, 1)
	j := job(t, ping, `{"operation":"ping"}`)
	go func() {
		_, err := ping.Runner.Run(context.Background(), j)
		done <- err
	}()
	<-started
	restore()

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // do not wait: the item is held
	if err := r.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with an item running = %v, want the context's error", err)
	}
	if _, err := ping.Runner.Run(context.Background(), job(t, ping, `{"operation":"ping"}`)); !isCode(err, toolerr.ServiceUnavailable) {
		t.Errorf("an item after Close: %v, want service_unavailable", err)
	}
	if _, err := r.Reload(context.Background()); !errors.Is(err, registry.ErrClosed) {
		t.Errorf("Reload after Close: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the item in flight: %v", err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if n := r.OpenModules(); n != 0 {
		t.Errorf("%d modules open after Close", n)
	}
}

// HoldRuns holds the next WASM item once it is counted on its module:
// started is closed when it is, and the item starts when release is
// closed. restore removes the hook (the held item stays held).
func HoldRuns(t testing.TB, started, release chan struct{}) (restore func()) {
	t.Helper()
	first := make(chan struct{}, 1)
	first <- struct{}{}
	restore = registry.HoldRuns(func() {
		select {
		case <-first:
			close(started)
			<-release
		default:
		}
	})
	t.Cleanup(restore)
	return restore
}

// A module renamed into the live folder is finished when it appears: it is
// loaded without waiting for the settle time (here an hour), while one
// written in place beside it waits for it; a module moved in and then
// written to waits too.
func TestMovedInModuleNeedsNoSettle(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := config(t, dir)
	cfg.Static = false
	cfg.Settle = time.Hour
	r := open(t, cfg)
	if err := os.WriteFile(filepath.Join(dir, "inplace.wasm"), liarWASM(t), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "moved.wasm"), pingWASM(t))
	s := waitFor(t, r, "the moved-in module to be published", func(s *registry.Snapshot) bool {
		_, ok := s.Service("ping")
		return ok
	})
	if _, ok := s.Service("liar"); ok {
		t.Fatal("the module written in place was read before it settled")
	}
	if _, err := r.ScanOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Snapshot().Service("liar"); ok {
		t.Fatal("the module written in place was read before it settled")
	}

	// Moved in, then written to: it is being written.
	path := filepath.Join(dir, "later.wasm")
	writeFile(t, path, pingWASM(t)[:8])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	time.Sleep(500 * time.Millisecond) // the watcher's events, and a rescan
	if _, err := r.ScanOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Snapshot().Failures() {
		if f.File == "later.wasm" {
			t.Fatalf("a moved-in module written to afterwards was read before it settled: %+v", f)
		}
	}
}

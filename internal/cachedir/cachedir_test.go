package cachedir

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

const wazeroDir = "wazero-v1.12.0-amd64-linux"

// put writes a file of size bytes at dir/rel, used age ago.
func put(t *testing.T, dir, rel string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestPrune(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int64
		gone     []string // of the files below
		evicted  int
		markers  int
	}{
		{name: "within the bound", maxBytes: 1000, gone: []string{"stale"}},
		{name: "no bound", maxBytes: 0, gone: []string{"stale"}},
		{name: "least recently used first", maxBytes: 250, gone: []string{"stale", "a", "b", "img", "old marker"}, evicted: 3, markers: 1},
		{name: "only what is written survives", maxBytes: 1, gone: []string{"stale", "a", "b", "img", "c", "old marker"}, evicted: 4, markers: 1},
		{name: "a marker newer than the code evicted stays", maxBytes: 450, gone: []string{"stale", "a"}, evicted: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"a":   put(t, dir, wazeroDir+"/aa", 100, 3*time.Hour),
				"b":   put(t, dir, wazeroDir+"/bb", 100, 2*time.Hour),
				"c":   put(t, dir, wazeroDir+"/cc", 100, time.Hour),
				"img": put(t, dir, "images/x.img", 100, 90*time.Minute),
				// Being written: never evicted, though it counts.
				"writing": put(t, dir, wazeroDir+"/dd.12345.tmp", 100, 0),
				// Left by a writer that died.
				"stale": put(t, dir, "images/.img-123", 100, 2*time.Hour),
				// Tier markers: not counted; removed with compiled code
				// evicted after them.
				"old marker": put(t, dir, "tiers/old", 0, 150*time.Minute),
				"new marker": put(t, dir, "tiers/new", 0, 0),
				// Not the cache's: never touched nor counted.
				"other": put(t, dir, "stray", 1000, 10*time.Hour),
			}
			st, err := Prune(dir, tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			gone := map[string]bool{}
			for _, g := range tt.gone {
				gone[g] = true
			}
			for name, p := range files {
				if exists(p) == gone[name] {
					t.Errorf("%s: exists %v, want %v", name, exists(p), !gone[name])
				}
			}
			if st.Files != 6 || st.Bytes != 600 || st.Evicted != tt.evicted || st.Stale != 1 || st.Markers != tt.markers {
				t.Errorf("stats %+v, want 6 files, 600 bytes, %d evicted, 1 stale, %d markers", st, tt.evicted, tt.markers)
			}
		})
	}
}

// A missing folder is an empty one; several processes (here goroutines)
// pruning the same folder at once see files vanish under them and report
// no error, and the folder ends within the bound.
func TestPruneConcurrent(t *testing.T) {
	if _, err := Prune(filepath.Join(t.TempDir(), "nope"), 1); err != nil {
		t.Errorf("a missing folder: %v", err)
	}
	dir := t.TempDir()
	for i := range 200 {
		put(t, dir, fmt.Sprintf("%s/%03d", wazeroDir, i), 100, time.Duration(i)*time.Minute)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := Prune(dir, 5000); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := Prune(dir, 5000)
	if err != nil || st.Bytes > 5000 || st.Bytes < 4000 {
		t.Errorf("after the prunes: %+v, %v; want 4000 to 5000 bytes", st, err)
	}
	// The most recently used are the ones kept.
	if !exists(filepath.Join(dir, wazeroDir, "000")) || exists(filepath.Join(dir, wazeroDir, "199")) {
		t.Error("the prunes did not keep the most recently used entries")
	}
}

// eventually waits for cond, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 10 s", what)
}

// A Bound prunes when opened, marks an entry used when a process opens it
// (as wazero reads compiled code), and prunes after a write, so that the
// entry read last survives the one used earlier.
func TestBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	old := put(t, dir, wazeroDir+"/old", 100, 5*time.Hour)
	p := put(t, dir, wazeroDir+"/p", 100, 2*time.Hour)
	q := put(t, dir, wazeroDir+"/q", 100, 3*time.Hour)
	b, err := Open(Config{Dir: dir, MaxBytes: 250, Delay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if exists(old) || !exists(p) || !exists(q) {
		t.Fatalf("Open did not prune the least recently used entry")
	}
	if runtime.GOOS == "linux" {
		// Read q, as wazero reads a module's compiled code from the cache.
		before := time.Now()
		if _, err := os.ReadFile(q); err != nil {
			t.Fatal(err)
		}
		eventually(t, "q marked used", func() bool {
			fi, err := os.Stat(q)
			return err == nil && !fi.ModTime().Before(before.Add(-time.Second))
		})
		// An entry folder that appears later is watched too.
		put(t, dir, "images/later.img", 10, time.Hour)
		eventually(t, "the new folder's entry marked used", func() bool {
			if _, err := os.ReadFile(filepath.Join(dir, "images/later.img")); err != nil {
				return false
			}
			fi, err := os.Stat(filepath.Join(dir, "images/later.img"))
			return err == nil && fi.ModTime().After(before.Add(-time.Second))
		})
		// A new entry, written as wazero writes one: a temporary file
		// renamed into place.
		tmp := put(t, dir, wazeroDir+"/r.999.tmp", 100, 0)
		if err := os.Rename(tmp, filepath.Join(dir, wazeroDir, "r")); err != nil {
			t.Fatal(err)
		}
		eventually(t, "p evicted after the write", func() bool { return !exists(p) })
		if !exists(q) || !exists(filepath.Join(dir, wazeroDir, "r")) {
			t.Error("the entries used last were evicted")
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// Close prunes what a one-shot command wrote; a Bound without a folder
// does nothing.
func TestBoundClosePrunes(t *testing.T) {
	defer goleak.VerifyNone(t)
	none, err := Open(Config{})
	if err != nil || none.Close() != nil {
		t.Fatalf("a Bound without a folder: %v", err)
	}
	var nilBound *Bound
	nilBound.Close()
	dir := filepath.Join(t.TempDir(), "cache") // made by Open
	b, err := Open(Config{Dir: dir, MaxBytes: 150, Delay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	a := put(t, dir, "images/a.img", 100, time.Hour)
	c := put(t, dir, "images/c.img", 100, 0)
	b.Close()
	if exists(a) || !exists(c) {
		t.Errorf("Close did not prune: a %v, c %v", exists(a), exists(c))
	}
}

// The host's load entries (DIR/loads) are entries like its images: counted
// and evicted least recently used first, their temporary files never.
func TestPruneLoadEntries(t *testing.T) {
	dir := t.TempDir()
	old := put(t, dir, "loads/old.json", 100, 2*time.Hour)
	recent := put(t, dir, "loads/recent.json", 100, time.Hour)
	writing := put(t, dir, "loads/.load-1", 100, 0)
	st, err := Prune(dir, 250)
	if err != nil {
		t.Fatal(err)
	}
	if exists(old) || !exists(recent) || !exists(writing) {
		t.Errorf("after the prune: old %v, recent %v, writing %v; want only old gone", exists(old), exists(recent), exists(writing))
	}
	if st.Files != 3 || st.Evicted != 1 {
		t.Errorf("stats %+v, want 3 files and 1 evicted", st)
	}
}

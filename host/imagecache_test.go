package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host/internal/instrument"
	"github.com/toolhost/toolhost/internal/testkit"
)

// A module's image is kept in the cache folder: a second runtime over the
// same folder uses the entry instead of running a template (an entry
// changed on purpose is what the calls then see), and an entry that is
// damaged is ignored and written again.
func TestImageCache(t *testing.T) {
	wasm := testkit.WAT(t, "init_state")
	dir := t.TempDir()
	ctx := context.Background()
	var stats CacheStats // of the last load's runtime
	compute := func(what string) []byte {
		t.Helper()
		r := newTestRuntime(t, Config{CacheDir: dir})
		m, err := r.Load(ctx, wasm)
		stats = r.CacheStats()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if m.image == nil {
			t.Fatalf("%s: the module is not imaged: %v", what, m.imageErr)
		}
		res, err := m.Call(ctx, "compute", nil, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return res.Output
	}
	want := append([]byte("initialised"), make([]byte, 5)...)
	want = binary.LittleEndian.AppendUint64(want, 42)
	if got := compute("the template"); !bytes.Equal(got, want) {
		t.Fatalf("the template's image: %q, want %q", got, want)
	}
	if stats.ImageHits != 0 || stats.ImageMisses != 1 {
		t.Errorf("the template's load: CacheStats = %+v, want one image miss", stats)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, imageCacheDir, "*.img"))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v, want one", entries)
	}
	raw, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeCachedImage(raw)
	if err != nil {
		t.Fatalf("the entry written does not decode: %v", err)
	}

	if len(c.imaged) == 0 || bytes.Equal(c.imaged, wasm) {
		t.Fatalf("the entry holds no imaged module (%d bytes): a warm load would instrument it again", len(c.imaged))
	}
	// An entry without the imaged module (the loader instruments it
	// again) still serves its image.
	bare := *c
	bare.imaged = nil
	copy(bare.contents, "without-imaged!!")
	if err := os.WriteFile(entries[0], encodeCachedImage(&bare), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := compute("an entry without the imaged module"); !bytes.HasPrefix(got, []byte("without-imaged!!")) {
		t.Fatalf("a load over an entry without the imaged module saw %q", got)
	}

	copy(c.contents, "from-the-cache!!")
	if err := os.WriteFile(entries[0], encodeCachedImage(c), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := compute("the cache"); !bytes.HasPrefix(got, []byte("from-the-cache!!")) {
		t.Fatalf("a second load saw %q: it did not use the cached image", got)
	}
	if stats.ImageHits != 1 || stats.ImageMisses != 0 {
		t.Errorf("a load from the cache: CacheStats = %+v, want one image hit", stats)
	}

	damaged := encodeCachedImage(c)
	damaged[len(damaged)/2] ^= 0xff
	if err := os.WriteFile(entries[0], damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := compute("a damaged entry"); !bytes.Equal(got, want) {
		t.Fatalf("a load over a damaged entry saw %q, want the template's %q", got, want)
	}
	raw, err = os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeCachedImage(raw); err != nil {
		t.Errorf("the damaged entry was not written again: %v", err)
	}
}

// A cache hit marks the entry used: its modification time moves to now,
// which is what the cache folder's size bound evicts by.
func TestImageCacheHitTouches(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, imageCacheDir, "entry.img")
	c := &cachedImage{image: instrument.Image{MemoryPages: 1, Globals: map[uint32]uint64{3: 7}}, contents: make([]byte, 1<<16)}
	writeCachedImage(path, c)
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	got, ok := readCachedImage(path)
	if !ok || got.image.Globals[3] != 7 {
		t.Fatalf("readCachedImage = %+v, %v; want the entry written", got, ok)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().After(old.Add(time.Hour)) {
		t.Errorf("a hit left the entry's mtime at %v", fi.ModTime())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, ok := readCachedImage(path); ok {
		t.Error("readCachedImage found an entry that vanished")
	}
}

// TestLoadCache: a warm load of an imaged module skips instrumenting it —
// the load entry written by the first load gives its instrument.Info and
// its image entry — and behaves as the cold one did, with the same output
// and fuel; a load entry that does not match its checksum, or whose
// image entry is gone, is a miss, and the load instruments the module and
// writes both again.
func TestLoadCache(t *testing.T) {
	if buildID() == "" {
		t.Skip("this test binary has no Go build ID to key load entries by")
	}
	wasm := testkit.WAT(t, "init_state")
	dir := t.TempDir()
	ctx := context.Background()
	type outcome struct {
		output []byte
		fuel   int64
		stats  CacheStats
	}
	load := func(what string) outcome {
		t.Helper()
		r := newTestRuntime(t, Config{CacheDir: dir})
		m, err := r.Load(ctx, wasm)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer m.Close(ctx)
		if m.image == nil {
			t.Fatalf("%s: the module is not imaged: %v", what, m.imageErr)
		}
		res, err := m.Call(ctx, "compute", nil, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return outcome{res.Output, res.FuelUsed, r.CacheStats()}
	}
	cold := load("the first load")
	if st := cold.stats; st.LoadHits != 0 || st.LoadMisses != 1 || st.ImageMisses != 1 {
		t.Fatalf("the first load: CacheStats = %+v, want a load and an image miss", st)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, loadCacheDir, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("load entries %v, want one", entries)
	}
	warm := load("a warm load")
	if st := warm.stats; st.LoadHits != 1 || st.LoadMisses != 0 || st.ImageHits != 1 {
		t.Fatalf("a warm load: CacheStats = %+v, want a load and an image hit", st)
	}
	if !bytes.Equal(warm.output, cold.output) || warm.fuel != cold.fuel {
		t.Fatalf("a warm load gave %q with fuel %d, the cold one %q with fuel %d", warm.output, warm.fuel, cold.output, cold.fuel)
	}

	raw, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Replace(raw, []byte(`"Start":`), []byte(`"start":`), 1)
	if bytes.Equal(damaged, raw) {
		t.Fatalf("the entry has no Start member to damage: %s", raw)
	}
	if err := os.WriteFile(entries[0], damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	again := load("a damaged load entry")
	if st := again.stats; st.LoadHits != 0 || st.LoadMisses != 1 || !bytes.Equal(again.output, cold.output) {
		t.Fatalf("a damaged load entry: CacheStats = %+v, output %q", st, again.output)
	}
	if now, err := os.ReadFile(entries[0]); err != nil || !bytes.Equal(now, raw) {
		t.Fatalf("the damaged entry was not written again: %v", err)
	}

	images, _ := filepath.Glob(filepath.Join(dir, imageCacheDir, "*.img"))
	for _, p := range images {
		os.Remove(p)
	}
	gone := load("a load entry without its image")
	if st := gone.stats; st.LoadHits != 0 || st.LoadMisses != 1 || st.ImageMisses != 1 || !bytes.Equal(gone.output, cold.output) {
		t.Fatalf("a load entry without its image: CacheStats = %+v, output %q", st, gone.output)
	}
	if st := load("after it").stats; st.LoadHits != 1 {
		t.Fatalf("the load after a miss: CacheStats = %+v, want a load hit", st)
	}
}

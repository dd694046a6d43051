package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/internal/testmodule"
)

// A module's image is kept in the cache folder: a second runtime over the
// same folder uses the entry instead of running a template (an entry
// changed on purpose is what the calls then see), and an entry that is
// damaged is ignored and written again.
func TestImageCache(t *testing.T) {
	wasm := testmodule.WAT(t, "init_state")
	dir := t.TempDir()
	ctx := context.Background()
	compute := func(what string) []byte {
		t.Helper()
		m, err := newTestRuntime(t, Config{CacheDir: dir}).Load(ctx, wasm)
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

	copy(c.contents, "from-the-cache!!")
	if err := os.WriteFile(entries[0], encodeCachedImage(c), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := compute("the cache"); !bytes.HasPrefix(got, []byte("from-the-cache!!")) {
		t.Fatalf("a second load saw %q: it did not use the cached image", got)
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

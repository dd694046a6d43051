package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// The image cache keeps what a module's initialiser left — its globals,
// its memory size and contents — in Config.CacheDir, beside wazero's
// compiled code, so that a warm start compiles (from the cache) only the
// imaged module and runs no template: the template's interpreter compile
// and its interpreted initialiser cost a Go guest 0.2–0.5 s per load.
//
// An entry is keyed by the instrumented module's bytes (which carry the
// instrumentation and the limits it was rewritten under) and
// imageCacheVersion, which changes whenever what a template observes
// does: the host functions' behaviour during initialisation, the image
// fuel, the image format. A template is deterministic (its clocks and
// random source are the per-call fakes), so a cached image is the one the
// template would capture. An entry that cannot be read, or whose checksum
// does not match, is ignored and written again.
//
// A hit sets the entry's modification and access times to now, so that a
// size bound over the cache folder (toolhost's --cache-max-bytes) evicts
// the least recently used images first. An entry may vanish at any time
// (another process sharing the folder evicted it): a read that finds none
// runs the template and writes it again.

// imageCacheVersion names the format and the template's behaviour (3:
// issue 15's kernel — log_* frees its block, an initialiser that reads
// the configuration, a variable or the log level is not imaged).
const imageCacheVersion = "toolhost-image-3"

// imageCacheDir is the cache's folder under Config.CacheDir.
const imageCacheDir = "images"

// cachedImage is one entry: the instrument.Image, the imaged module it
// makes of the instrumented one (so that a warm load compiles it without
// instrumenting the module a second time: half of a warm load's CPU
// otherwise, docs/performance.md) and the memory contents.
type cachedImage struct {
	image    instrument.Image
	imaged   []byte
	contents []byte
}

// imageCachePath returns the entry's file for the instrumented module
// rewritten, or "" without a cache folder.
func (r *Runtime) imageCachePath(rewritten []byte) string {
	if r.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(r.cfg.CacheDir, imageCacheDir, imageCacheKey(rewritten)+".img")
}

// imageCacheKey names the entry of the instrumented module rewritten: the
// hex SHA-256 of imageCacheVersion and its bytes.
func imageCacheKey(rewritten []byte) string {
	h := sha256.New()
	h.Write([]byte(imageCacheVersion))
	h.Write(rewritten)
	return hex.EncodeToString(h.Sum(nil))
}

// readCachedImage returns the entry at path, or false when there is none
// usable.
func readCachedImage(path string) (*cachedImage, bool) {
	if path == "" {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	c, err := decodeCachedImage(b)
	if err != nil {
		os.Remove(path) //nolint:errcheck // best effort: the entry is ignored either way and written again by the template's load
		return nil, false
	}
	now := time.Now()
	os.Chtimes(path, now, now) //nolint:errcheck // the entry was used; an error only ages it
	return c, true
}

// writeCachedImage writes c to path, atomically: a reader sees the whole
// entry or none. Errors are ignored: the cache only saves time.
func writeCachedImage(path string, c *cachedImage) {
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".img-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(encodeCachedImage(c))
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort: the cache only saves time
	}
}

// The entry's format: the version, then little-endian memory pages, the
// number of globals, each global's index and value, the imaged module's
// length and bytes, the contents' length and the contents, then the
// SHA-256 of everything before it.
func encodeCachedImage(c *cachedImage) []byte {
	var b bytes.Buffer
	b.WriteString(imageCacheVersion)
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, c.image.MemoryPages))
	indices := slices.Sorted(func(yield func(uint32) bool) {
		for i := range c.image.Globals {
			if !yield(i) {
				return
			}
		}
	})
	b.Write(le.AppendUint32(nil, uint32(len(indices))))
	for _, i := range indices {
		b.Write(le.AppendUint32(nil, i))
		b.Write(le.AppendUint64(nil, c.image.Globals[i]))
	}
	b.Write(le.AppendUint64(nil, uint64(len(c.imaged))))
	b.Write(c.imaged)
	b.Write(le.AppendUint64(nil, uint64(len(c.contents))))
	b.Write(c.contents)
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

var errBadImage = errors.New("not a cached image")

func decodeCachedImage(b []byte) (*cachedImage, error) {
	if len(b) < len(imageCacheVersion)+sha256.Size || string(b[:len(imageCacheVersion)]) != imageCacheVersion {
		return nil, errBadImage
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if want := sha256.Sum256(body); !bytes.Equal(want[:], sum) {
		return nil, fmt.Errorf("%w: checksum", errBadImage)
	}
	p := body[len(imageCacheVersion):]
	le := binary.LittleEndian
	take := func(n int) ([]byte, bool) {
		if len(p) < n {
			return nil, false
		}
		v := p[:n]
		p = p[n:]
		return v, true
	}
	v, ok := take(8)
	if !ok {
		return nil, errBadImage
	}
	c := &cachedImage{image: instrument.Image{MemoryPages: le.Uint32(v), Globals: map[uint32]uint64{}}}
	n := le.Uint32(v[4:])
	for range n {
		g, ok := take(12)
		if !ok {
			return nil, errBadImage
		}
		c.image.Globals[le.Uint32(g)] = le.Uint64(g[4:])
	}
	if v, ok = take(8); !ok || le.Uint64(v) > uint64(len(p)) {
		return nil, errBadImage
	}
	if c.imaged, _ = take(int(le.Uint64(v))); len(c.imaged) == 0 {
		c.imaged = nil // compileImage instruments it again
	}
	v, ok = take(8)
	if !ok || le.Uint64(v) != uint64(len(p)) || uint64(len(p)) != uint64(c.image.MemoryPages)<<16 {
		return nil, errBadImage
	}
	// Its own copy: the image lives as long as the module, and a slice of
	// b would keep the imaged module's bytes, which only the compile
	// needs, alive with it.
	c.contents = slices.Clone(p)
	return c, nil
}

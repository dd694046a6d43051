package host

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolhost/toolhost/host/internal/instrument"
)

// The load cache lets a warm load skip instrumenting the module.
//
// The image cache (imagecache.go) is keyed by the instrumented module, so
// a warm load used to instrument the module only to find its entry — about
// a quarter of a warm start's CPU (docs/performance.md, "Tiered start"). A
// load entry, written beside it after a load that was imaged, maps the
// module's own bytes to what instrumenting them gave: the instrument.Info
// and the key of the image entry. Its key is the SHA-256 of
// loadCacheVersion, this binary's Go build ID, the instrumentation options
// and the module's bytes, so an entry is only ever read by the build that
// wrote it, under the same limits, for the same bytes: what it says is
// what instrumenting them again would say. Without a build ID (a binary
// linked with an empty -buildid, or not ELF) there is no load cache and
// every load instruments, as before.
//
// A load entry is small (a few KB of JSON, then a newline and the JSON's
// hex SHA-256; one that does not match is removed). It is only a shortcut to the
// image entry: when that is gone (evicted by the cache folder's bound), the
// load instruments the module and writes both again.

// loadCacheVersion names the load entry's format.
const loadCacheVersion = "toolhost-load-1"

// loadCacheDir is the load entries' folder under Config.CacheDir.
const loadCacheDir = "loads"

// loadEntry is what instrumenting a module gave, for a warm load.
type loadEntry struct {
	Info instrument.Info `json:"info"`
	// Image is the image entry's key: the hex SHA-256 of its name
	// (imageCacheKey of the instrumented module).
	Image string `json:"image"`
}

// buildID is this binary's Go build ID, read once from its ELF note; ""
// when there is none to read.
var buildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	// The note's header (16 bytes: name size, descriptor size, type,
	// "Go\x00\x00") and an ID of any substance.
	if err != nil || len(b) <= 16+8 {
		return ""
	}
	return string(b[16:])
})

// loadCachePath is the load entry's file for the module wasm loaded with
// opts, or "" without a cache folder or a build ID.
func (r *Runtime) loadCachePath(wasm []byte, opts instrument.Options) string {
	id := buildID()
	if r.cfg.CacheDir == "" || id == "" {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{loadCacheVersion, id, fmt.Sprintf("%+v", opts)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(wasm)
	return filepath.Join(r.cfg.CacheDir, loadCacheDir, hex.EncodeToString(h.Sum(nil))+".json")
}

// readLoadEntry returns the entry at path and the image entry it names,
// or false when either is missing or unusable.
func (r *Runtime) readLoadEntry(path string) (*loadEntry, *cachedImage, bool) {
	if path == "" {
		return nil, nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false
	}
	// JSON, a newline and the hex SHA-256 of the JSON.
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		os.Remove(path) //nolint:errcheck // best effort: a bad entry is ignored either way
		return nil, nil, false
	}
	sum := sha256.Sum256(b[:i])
	var e loadEntry
	if string(b[i+1:]) != hex.EncodeToString(sum[:]) || json.Unmarshal(b[:i], &e) != nil || len(e.Image) != 2*sha256.Size {
		os.Remove(path) //nolint:errcheck // best effort: a bad entry is ignored either way
		return nil, nil, false
	}
	if _, err := hex.DecodeString(e.Image); err != nil {
		os.Remove(path) //nolint:errcheck // best effort: a bad entry is ignored either way
		return nil, nil, false
	}
	c, ok := readCachedImage(filepath.Join(r.cfg.CacheDir, imageCacheDir, e.Image+".img"))
	if !ok {
		return nil, nil, false
	}
	now := time.Now()
	os.Chtimes(path, now, now) //nolint:errcheck // used; an error only ages it
	return &e, c, true
}

// writeLoadEntry writes e to path, atomically. Errors are ignored: the
// cache only saves time.
func writeLoadEntry(path string, e loadEntry) {
	if path == "" {
		return
	}
	b, err := json.Marshal(e)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".load-*")
	if err != nil {
		return
	}
	sum := sha256.Sum256(b)
	_, werr := tmp.Write(append(append(b, '\n'), hex.EncodeToString(sum[:])...))
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort: the cache only saves time
	}
}

// Package cachedir bounds the size of Toolhost's cache folder: wazero's
// compiled code (DIR/wazero-VERSION-ARCH-OS/, one file per compiled
// module, named by a hash wazero does not expose), the host's images
// (DIR/images/*.img) and load entries (DIR/loads/*.json). When the folder's entries exceed the bound, the least
// recently used are removed until they fit.
//
// "Used" is the later of a file's modification and access times. The
// image cache sets both on a hit; a [Bound] watching the folder (Linux:
// inotify) sets them when a process opens an entry, which is how wazero
// reads a compiled module from the cache, so that compiled code is aged
// by its last load too. Where no watcher runs, the access time stands in
// for it as far as the file system keeps it (relatime: once a day).
//
// Prune is safe with several processes sharing the folder: a file that
// vanishes under it is skipped, a temporary file (an entry being written:
// wazero's NAME.*.tmp, the image cache's .img-*) is never evicted, and
// an entry removed while another process reads it stays readable to that
// reader (POSIX unlink); a process that looks for it later compiles again.
//
// The host's tier markers (DIR/tiers) are not counted; when compiled code
// is evicted, the markers written before it (within a minute) are removed
// too, since a marker left without its code would make the module's next
// load compile at once instead of starting in the interpreter.
package cachedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StaleTemp is the age past which a temporary file is taken for the
// leftover of a process that died writing it, and removed.
const StaleTemp = time.Hour

// imagesDir is the host's image cache under the folder (host/imagecache.go),
// loadsDir its load entries (host/loadcache.go).
const (
	imagesDir = "images"
	loadsDir  = "loads"
)

// tiersDir holds the host's markers of which modules' code is compiled
// into the cache (host/tier.go): empty files, not counted.
const tiersDir = "tiers"

// markerSlack is how much later than its code a marker may have been
// written.
const markerSlack = time.Minute

// wazeroPrefix starts the name of wazero's folders under the folder, one
// per wazero version and platform (wazero.NewCompilationCacheWithDir).
const wazeroPrefix = "wazero-"

// Stats is what one Prune found and did.
type Stats struct {
	// Files and Bytes are the entries counted (temporary files included)
	// and their size, before eviction.
	Files int
	Bytes int64
	// Evicted and EvictedBytes are the entries removed to fit the bound,
	// Stale the temporary files older than StaleTemp removed.
	Evicted      int
	EvictedBytes int64
	Stale        int
	// Markers is the number of tier markers removed with evicted code.
	Markers int
}

// entry is one file of the folder.
type entry struct {
	path string
	size int64
	used time.Time
	temp bool
}

// isEntryDir reports whether name, a folder directly under the cache
// folder, holds entries the bound covers.
func isEntryDir(name string) bool {
	return name == imagesDir || name == loadsDir || strings.HasPrefix(name, wazeroPrefix)
}

// isTemp reports whether name is a file still being written (or left by
// a writer that died): wazero's KEY.RANDOM.tmp, the image cache's .img-*.
func isTemp(name string) bool {
	return strings.HasSuffix(name, ".tmp") || strings.HasPrefix(name, ".")
}

// scan lists the entries of dir's entry folders. A folder or file that
// vanishes meanwhile is skipped.
func scan(dir string) ([]entry, error) {
	top, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, d := range top {
		if !d.IsDir() || !isEntryDir(d.Name()) {
			continue
		}
		sub := filepath.Join(dir, d.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue // removed since the listing
			}
			out = append(out, entry{
				path: filepath.Join(sub, f.Name()),
				size: info.Size(),
				used: lastUse(info),
				temp: isTemp(f.Name()),
			})
		}
	}
	return out, nil
}

// Prune removes the least recently used entries of the cache folder dir
// until they take at most maxBytes, and the temporary files older than
// StaleTemp; maxBytes ≤ 0 bounds nothing (stale temporary files are still
// removed). A missing folder is an empty one. Files removed meanwhile by
// another process are no error. It is safe to call concurrently, from
// several processes.
func Prune(dir string, maxBytes int64) (Stats, error) {
	return prune(dir, maxBytes, time.Now())
}

func prune(dir string, maxBytes int64, now time.Time) (Stats, error) {
	var st Stats
	if dir == "" {
		return st, nil
	}
	entries, err := scan(dir)
	if err != nil {
		return st, err
	}
	var live []entry
	for _, e := range entries {
		st.Files++
		st.Bytes += e.size
		if !e.temp {
			live = append(live, e)
		}
	}
	total := st.Bytes
	for _, e := range entries {
		if e.temp && now.Sub(e.used) > StaleTemp {
			total -= e.size
			if remove(e.path) {
				st.Stale++
			}
		}
	}
	if maxBytes <= 0 || total <= maxBytes {
		return st, nil
	}
	// Oldest first; the path breaks ties so that two processes agree.
	slices.SortFunc(live, func(a, b entry) int {
		if c := a.used.Compare(b.used); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	var lastCode time.Time // the last use of the newest compiled code evicted
	for _, e := range live {
		if total <= maxBytes {
			break
		}
		total -= e.size // gone either way: evicted here or by another process
		if remove(e.path) {
			st.Evicted++
			st.EvictedBytes += e.size
		}
		if strings.HasPrefix(filepath.Base(filepath.Dir(e.path)), wazeroPrefix) && e.used.After(lastCode) {
			lastCode = e.used
		}
	}
	if !lastCode.IsZero() {
		st.Markers = removeMarkers(filepath.Join(dir, tiersDir), lastCode.Add(markerSlack))
	}
	return st, nil
}

// removeMarkers removes the tier markers written before cutoff and
// returns how many it removed. A marker says that a module's compiled
// code is in the cache, so that its next load compiles it at once (a
// read of the cache) instead of serving it from the interpreter first;
// wazero's file names cannot be mapped to the markers' (nor to modules),
// so when compiled code is evicted every marker that may be its own goes
// with it: one whose code is still cached only costs that module's next
// load a moment in the interpreter (host/tier.go), while one left behind
// would cost a blocking optimising compile.
func removeMarkers(dir string, cutoff time.Time) int {
	files, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, f := range files {
		if !f.Type().IsRegular() {
			continue
		}
		info, err := f.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if remove(filepath.Join(dir, f.Name())) {
			n++
		}
	}
	return n
}

// remove removes path and reports whether this call removed it.
func remove(path string) bool {
	return os.Remove(path) == nil
}

// Touch marks the entry at path used now. A missing file is no error.
func Touch(path string) {
	now := time.Now()
	// Any other failure leaves the entry's older time: it is then among
	// the next to go, and compiled again when wanted.
	os.Chtimes(path, now, now) //nolint:errcheck // see above
}

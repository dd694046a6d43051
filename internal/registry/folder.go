package registry

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"toolhost/internal/wasmtool"
)

// stamp is what stat says of a module file and its sidecar manifest.
type stamp struct {
	size, mtime             int64 // the module; mtime in Unix nanoseconds
	sidecar                 bool
	sidecarSize, sidecarMod int64
}

// newest is the later of the two modification times.
func (s stamp) newest() time.Time {
	t := s.mtime
	if s.sidecar {
		t = max(t, s.sidecarMod)
	}
	return time.Unix(0, t)
}

// observation is the last stat of a file and since when it has not changed.
type observation struct {
	stamp stamp
	since time.Time
}

// stableAt is when the file counts as settled: Settle after its newest
// modification time, or Settle after it was first seen with its current
// stamp, whichever comes first. The second rule covers modification times
// in the future (clock skew, copies that keep times).
func (o *observation) stableAt(settle time.Duration) time.Time {
	a, b := o.newest().Add(settle), o.since.Add(settle)
	if a.Before(b) {
		return a
	}
	return b
}

func (o *observation) newest() time.Time { return o.stamp.newest() }

// racyMargin covers file systems with coarse modification times (FAT's is
// two seconds): content read less than this after its modification time
// might be rewritten within the same time tick, with the same size, and so
// is hashed again on the next scan.
const racyMargin = 2 * time.Second

// entry is one settled module file as the registry loaded it: its stamp,
// the SHA-256 of its content (module and sidecar), and its package. An
// entry is immutable once published; an unchanged file keeps its entry,
// and so its loaded Tool, across generations.
type entry struct {
	stamp    stamp
	sum      [sha256.Size]byte
	verified time.Time // when content with sum was last read
	mod      *module   // nil when the package failed as a whole
	pkg      *pkg
	// retry is set on a read failure: the file is read again on every
	// scan, since fixing it (permissions) may not change its stamp.
	retry bool
}

// fresh reports whether st is the entry's stamp and cannot hide a
// rewrite: the content was read at least racyMargin after its newest
// modification time.
func (e *entry) fresh(st stamp) bool {
	return !e.retry && e.stamp == st && st.newest().Before(e.verified.Add(-racyMargin))
}

// scan compares the tools folder with the entries, reads and loads the
// settled files that are new or changed, and records the result in the
// entries (marking them dirty) without publishing. It returns the earliest
// time a file still being written will have settled, zero when none is.
// When ctx ends, nothing is recorded. r.mu is held.
func (r *Registry) scan(ctx context.Context, retryFailed bool) (time.Time, error) {
	if r.cfg.Dir == "" {
		return time.Time{}, nil
	}
	names, err := r.list()
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	var pending time.Time
	wait := func(t time.Time) {
		if pending.IsZero() || t.Before(pending) {
			pending = t
		}
	}
	next := make(map[string]*entry, len(names))
	seen := make(map[string]*observation, len(names))
	var jobs []*loadJob
	for _, name := range names {
		old := r.entries[name]
		st, err := statModule(filepath.Join(r.cfg.Dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			r.log.Warn("registry: cannot stat a module; keeping its previous version", "file", name, "error", err)
			if old != nil {
				next[name] = old
			}
			continue
		}
		obs := r.seen[name]
		if obs == nil || obs.stamp != st {
			obs = &observation{stamp: st, since: now}
		}
		seen[name] = obs
		switch {
		case old != nil && old.fresh(st) && !(retryFailed && old.mod == nil):
			next[name] = old
		case now.Before(obs.stableAt(r.cfg.Settle)):
			// Being written: read it once it has settled; meanwhile the
			// previous version, if any, stays.
			wait(obs.stableAt(r.cfg.Settle))
			if old != nil {
				next[name] = old
			}
		default:
			jobs = append(jobs, &loadJob{name: name, stamp: st, old: old, retry: retryFailed})
		}
	}
	r.load(ctx, jobs)
	if err := ctx.Err(); err != nil {
		for _, j := range jobs {
			if j.entry != nil && j.entry.mod != nil && (j.old == nil || j.entry.mod != j.old.mod) {
				j.entry.mod.retire(false)
			}
		}
		return time.Time{}, fmt.Errorf("scanning the tools folder: %w", err)
	}
	for _, j := range jobs {
		switch {
		case j.unsettled != nil:
			// Changed while being read: wait for it again.
			obs := &observation{stamp: *j.unsettled, since: now}
			seen[j.name] = obs
			wait(obs.stableAt(r.cfg.Settle))
			if j.old != nil {
				next[j.name] = j.old
			}
		default:
			next[j.name] = j.entry
		}
	}

	// Anything added, replaced or removed makes a new generation; the
	// modules it drops are retired once it is published.
	kept := map[*module]bool{}
	for _, e := range next {
		if e.mod != nil {
			kept[e.mod] = true
		}
	}
	for name, old := range r.entries {
		if e := next[name]; e == nil || e.pkg != old.pkg {
			r.dirty = true
			if e == nil {
				r.log.Info("registry: module removed", "file", name)
			}
		}
		if old.mod != nil && !kept[old.mod] {
			r.retiring = append(r.retiring, old.mod)
		}
	}
	for name := range next {
		if r.entries[name] == nil {
			r.dirty = true
		}
	}
	r.entries, r.seen = next, seen
	return pending, nil
}

// list returns the module file names of the tools folder, sorted: regular
// files (or links to them) named *.wasm, not starting with a dot.
func (r *Registry) list() ([]string, error) {
	des, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("reading the tools folder: %w", err)
	}
	var names []string
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".wasm") || de.IsDir() {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// sidecarPath is the manifest beside a module: NAME.wasm → NAME.tool.json.
func sidecarPath(path string) string {
	return strings.TrimSuffix(path, ".wasm") + wasmtool.SidecarSuffix
}

// statModule stats a module and its sidecar, following links. A module
// that is not a regular file does not exist.
func statModule(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return stamp{}, fs.ErrNotExist
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	switch si, err := os.Stat(sidecarPath(path)); {
	case err == nil:
		st.sidecar, st.sidecarSize, st.sidecarMod = true, si.Size(), si.ModTime().UnixNano()
	case !errors.Is(err, fs.ErrNotExist):
		return stamp{}, err
	}
	return st, nil
}

// loadJob is one settled file to read and, unless its content is the
// loaded one, to load.
type loadJob struct {
	name  string
	stamp stamp
	old   *entry // the file's current entry, if any
	retry bool   // load again even when old failed with the same content

	// The outcome: the file's new entry (old itself when nothing
	// changed), or the stamp it had changed to while being read.
	entry     *entry
	unsettled *stamp
}

// load runs the jobs, at most GOMAXPROCS at a time.
func (r *Registry) load(ctx context.Context, jobs []*loadJob) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.loadOne(ctx, j)
		})
	}
	wg.Wait()
}

// loadOne reads a settled file and loads it unless its content hashes to
// the loaded one. The stamp is taken again after reading: a file that
// changed meanwhile is not loaded.
func (r *Registry) loadOne(ctx context.Context, j *loadJob) {
	source := fileSource(j.name)
	path := filepath.Join(r.cfg.Dir, j.name)
	read := time.Now()
	wasm, sidecar, err := readModule(path, j.stamp.sidecar)
	if err == nil {
		var st stamp
		if st, err = statModule(path); err == nil && st != j.stamp {
			j.unsettled = &st
			return
		}
	}
	if err != nil {
		r.log.Warn("registry: cannot read a module", "file", source, "path", path, "error", err)
		j.entry = r.failedEntry(j, &pkg{source: source, failed: moduleFailure(source, err)})
		j.entry.retry = true
		return
	}
	sum := contentSum(wasm, sidecar)
	if j.old != nil && j.old.sum == sum && !j.old.retry && !(j.retry && j.old.mod == nil) {
		// Same content (touched, or copied again): keep the loaded Tool.
		// The entry keeps its package, so no new generation is made.
		e := *j.old
		e.stamp, e.verified = j.stamp, read
		j.entry = &e
		return
	}
	tool, err := r.cfg.Loader.Load(ctx, wasm, sidecar)
	if ctx.Err() != nil {
		if tool != nil {
			tool.Close(context.Background())
		}
		return
	}
	if err != nil {
		r.log.Warn("registry: module refused", "file", source, "path", path, "error", err)
		j.entry = r.failedEntry(j, &pkg{source: source, failed: moduleFailure(source, err)})
		j.entry.sum, j.entry.verified = sum, read
		return
	}
	m := &module{tool: tool, file: source, log: r.log, closed: r.moduleClosed}
	r.moduleOpened()
	r.log.Info("registry: module loaded", "file", source, "path", path,
		"implementation_version", tool.ImplementationVersion(), "sha256", fmt.Sprintf("%x", sum))
	j.entry = &entry{stamp: j.stamp, sum: sum, verified: read, mod: m, pkg: modulePkg(source, m, r.log)}
}

// failedEntry is the entry of a package failed as a whole. When the file
// already failed the same way, its package is kept, so that a failing file
// that is touched or rewritten identically makes no new generation.
func (r *Registry) failedEntry(j *loadJob, p *pkg) *entry {
	e := &entry{stamp: j.stamp, verified: time.Now(), pkg: p}
	if j.old != nil && j.old.mod == nil && *j.old.pkg.failed == *p.failed {
		e.pkg = j.old.pkg
	}
	return e
}

// readModule reads a module and, when stat saw one, its sidecar.
func readModule(path string, hasSidecar bool) (wasm, sidecar []byte, err error) {
	if wasm, err = os.ReadFile(path); err != nil {
		return nil, nil, err
	}
	if !hasSidecar {
		return wasm, nil, nil
	}
	if sidecar, err = os.ReadFile(sidecarPath(path)); err != nil {
		return nil, nil, err
	}
	return wasm, sidecar, nil
}

// contentSum is the SHA-256 of a module and its sidecar, length-prefixed
// so that no two pairs hash alike.
func contentSum(wasm, sidecar []byte) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(wasm)))
	h.Write(n[:])
	h.Write(wasm)
	if sidecar != nil {
		binary.BigEndian.PutUint64(n[:], uint64(len(sidecar)))
		h.Write(n[:])
		h.Write(sidecar)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[string])
	return keys
}

// eventDelay coalesces a burst of watcher events into one scan.
const eventDelay = 100 * time.Millisecond

// watch is the live folder: it rescans shortly after the watcher reports a
// change, when a file being written will have settled, and every Interval
// in case an event was missed. Scans only stat files that have not
// changed, so they are cheap. It returns when ctx ends.
func (r *Registry) watch(ctx context.Context) {
	defer close(r.done)
	var events <-chan fsnotify.Event
	var errs <-chan error
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(r.cfg.Dir); err != nil {
			w.Close()
		}
	}
	if err != nil {
		r.log.Warn("registry: cannot watch the tools folder; rescanning periodically only",
			"dir", r.cfg.Dir, "interval", r.cfg.Interval, "error", err)
	} else {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}

	ticker := time.NewTicker(r.cfg.Interval)
	defer ticker.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	var armed time.Time // when timer fires; zero when it is stopped
	arm := func(at time.Time) {
		if !armed.IsZero() && !at.Before(armed) {
			return
		}
		timer.Reset(time.Until(at))
		armed = at
	}
	var failing string // the last scan error logged, so that it is logged once
	rescan := func() {
		pending, err := r.rescan(ctx)
		if err != nil {
			if ctx.Err() == nil && err.Error() != failing {
				failing = err.Error()
				r.log.Warn("registry: rescanning the tools folder; keeping the current snapshot", "error", err)
			}
			return
		}
		if failing != "" {
			failing = ""
			r.log.Info("registry: the tools folder can be read again")
		}
		if !pending.IsZero() {
			arm(pending)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if watched(ev.Name) {
				// Coalesce a burst of events into one scan; a file just
				// written is then waited for until it settles.
				arm(time.Now().Add(min(eventDelay, r.cfg.Settle)))
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow loses events: rescan now.
			r.log.Warn("registry: watching the tools folder", "error", err)
			rescan()
		case <-timer.C:
			armed = time.Time{}
			rescan()
		case <-ticker.C:
			rescan()
		}
	}
}

// watched reports whether an event on path can change the folder's
// packages: a module or a sidecar manifest, not a hidden file.
func watched(path string) bool {
	name := filepath.Base(path)
	return !strings.HasPrefix(name, ".") &&
		(strings.HasSuffix(name, ".wasm") || strings.HasSuffix(name, wasmtool.SidecarSuffix))
}

// rescan is one scan of the live folder, published when anything changed.
func (r *Registry) rescan(ctx context.Context) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return time.Time{}, ErrClosed
	}
	pending, err := r.scan(ctx, false)
	if err != nil {
		return time.Time{}, err
	}
	r.publish()
	return pending, nil
}

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
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// stamp is what stat says of a module file and its sidecar manifest.
type stamp struct {
	size, mtime             int64 // the module; mtime in Unix nanoseconds
	irregular               bool  // not a regular file (a FIFO, a device)
	sidecar                 bool
	sidecarSize, sidecarMod int64
	sidecarIrregular        bool
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

// scan compares the tools folder with the entries, starts a load for each
// settled file that is new or changed (unless that load is already
// running), and records in the entries (marking them dirty) what needs no
// load: kept, removed, and refused-unread files. It does not publish and
// does not wait: a file being loaded keeps its previous entry, if any,
// until its load ends (see finish). It returns the earliest time a file
// still being written will have settled (zero when none is) and the loads
// running for the folder's files. r.mu is held.
func (r *Registry) scan(retryFailed bool) (time.Time, []*loadJob, error) {
	if r.cfg.Dir == "" {
		return time.Time{}, nil, nil
	}
	names, err := r.list()
	if err != nil {
		return time.Time{}, nil, err
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
	var running []*loadJob
	for _, name := range names {
		old := r.entries[name]
		path := filepath.Join(r.cfg.Dir, name)
		st, err := statModule(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			// A link loop, a permission: the previous version stays; a new
			// file is listed as unreadable. Warned once until it changes.
			r.warnOnce(name, "registry: cannot stat a module", "file", fileSource(name), "path", path, "error", err)
			if old != nil {
				next[name] = old
			} else {
				next[name] = r.failedEntry(nil, stamp{}, &pkg{source: fileSource(name), failed: moduleFailure(fileSource(name), err)}, true)
			}
			continue
		}
		obs := r.seen[name]
		if obs == nil || obs.stamp != st {
			obs = &observation{stamp: st, since: now}
		}
		seen[name] = obs
		// A failed load asked to be tried again is not kept, fresh or not.
		failedToRetry := retryFailed && old != nil && old.mod == nil
		switch refusal := r.unreadable(st); {
		case old != nil && old.fresh(st) && !failedToRetry:
			next[name] = old
		case refusal != nil:
			// Refused from its stat alone: never opened, never read.
			r.warnOnce(name, "registry: module refused unread", "file", fileSource(name), "path", path, "error", refusal)
			next[name] = r.failedEntry(old, st, &pkg{source: fileSource(name), failed: moduleFailure(fileSource(name), refusal)}, false)
		case now.Before(obs.stableAt(r.cfg.Settle)) && !r.moved.settled(name, obs, r.cfg.Settle, min(eventDelay, r.cfg.Settle), now):
			// Being written: read it once it has settled; meanwhile the
			// previous version, if any, stays.
			wait(obs.stableAt(r.cfg.Settle))
			if old != nil {
				next[name] = old
			}
		default:
			j := r.loading[name]
			if j == nil || j.stamp != st || (retryFailed && !j.retry) {
				if j != nil {
					j.supersede() // its outcome is discarded
				}
				j = &loadJob{name: name, stamp: st, old: old, retry: retryFailed, done: make(chan struct{})}
				j.ctx, j.cancel = context.WithCancel(r.loadCtx)
				r.loading[name] = j
				r.jobs.Add(1)
				go r.runJob(j)
			}
			running = append(running, j)
			if old != nil {
				next[name] = old
			}
		}
	}
	r.moved.keep(seen)
	for name, j := range r.loading {
		if _, ok := seen[name]; !ok {
			j.supersede() // removed, or no longer settled
			delete(r.loading, name)
		}
	}
	for name := range r.warned {
		if _, ok := next[name]; !ok {
			delete(r.warned, name)
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
	return pending, running, nil
}

// warnOnce logs a warning about a file unless the same warning was the
// last one logged for it: a file that keeps failing the same way (a link
// loop, a FIFO) is reported once, not at every scan. r.mu is held.
func (r *Registry) warnOnce(name, msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	if r.warned[name] == key {
		return
	}
	r.warned[name] = key
	r.log.Warn(msg, args...)
}

// list returns the module file names of the tools folder, sorted: entries
// named *.wasm, not starting with a dot, that are not folders.
func (r *Registry) list() ([]string, error) {
	des, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("reading the tools folder: %w", err)
	}
	var names []string
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ModuleSuffix) || de.IsDir() {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// statModule stats a module and its sidecar, following links. A folder
// does not exist; any other file that is not regular (a FIFO, a device)
// is stamped irregular, to be refused without being opened. A sidecar
// whose name is too long to exist (beside a module name of 246 bytes or
// more) is absent.
func statModule(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	if fi.IsDir() {
		return stamp{}, fs.ErrNotExist
	}
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), irregular: !fi.Mode().IsRegular()}
	switch si, err := os.Stat(SidecarPath(path)); {
	case err == nil:
		st.sidecar, st.sidecarSize, st.sidecarMod = true, si.Size(), si.ModTime().UnixNano()
		st.sidecarIrregular = !si.Mode().IsRegular()
	case !noSuchFile(err):
		return stamp{}, err
	}
	return st, nil
}

// unreadable is the loader's refusal of a file from its stamp alone: not
// a regular file, or over its size limit. The read checks both again on
// the opened descriptor, since the file may change between the stat and
// the open.
func (r *Registry) unreadable(st stamp) error {
	var sidecar *FileStat
	if st.sidecar {
		sidecar = &FileStat{Regular: !st.sidecarIrregular, Size: st.sidecarSize}
	}
	return r.cfg.Loader.Unreadable(FileStat{Regular: !st.irregular, Size: st.size}, sidecar)
}

// loadJob is the load of one settled file: read it and, unless its content
// is the loaded one, load it. It runs on its own goroutine (runJob); its
// outcome is recorded by finish.
type loadJob struct {
	name  string
	stamp stamp
	old   *entry // the file's entry when the load started, if any
	retry bool   // load again even when old failed with the same content

	done chan struct{} // closed once the outcome is recorded or discarded

	// ctx ends when the load is superseded or the registry closes, so
	// that its work stops (or is abandoned) instead of running on to its
	// deadlines for an outcome nobody wants.
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by r.mu.
	stale     bool // superseded, removed, or the registry closed: discard the outcome
	unsettled bool // the file changed while it was read
}

// supersede marks the job stale and ends its context. r.mu is held.
func (j *loadJob) supersede() {
	j.stale = true
	j.cancel()
}

// loaded is what a load job produced, before it is recorded.
type loaded struct {
	ended     bool         // the registry closed: nothing to record
	unsettled *stamp       // the file changed while it was read
	readErr   error        // the file could not be read
	same      bool         // the content is old's
	tool      LoadedModule // loaded; closed when discarded
	loadErr   error        // refused at load
	claimed   []string     // refused at load: the codes its sidecar declares
	sum       [sha256.Size]byte
	read      time.Time
}

// runJob runs a load job and records its outcome. The job is listed in
// r.progress (Registry.Loading) from its start until it returns and no
// work it abandoned holds a loader slot.
func (r *Registry) runJob(j *loadJob) {
	defer r.jobs.Done()
	defer j.cancel()
	obs, end := r.progress.begin(j.name)
	out := r.loadOne(j.ctx, obs, j)
	// Listed until its outcome is recorded (and published, unless a
	// discovery waiting for it publishes it).
	r.finish(j, out)
	end()
}

// loadOne reads a settled file and loads it unless its content hashes to
// the loaded one, within the registry's bound on loads holding file bytes.
// The stamp is taken again after reading: a file that changed meanwhile is
// not loaded. ctx is the job's; obs follows its progress. It runs without
// r.mu.
func (r *Registry) loadOne(ctx context.Context, obs *LoadObserver, j *loadJob) loaded {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return loaded{ended: true}
	}
	defer func() { <-r.slots }()
	path := filepath.Join(r.cfg.Dir, j.name)
	r.log.Debug("registry: loading a module", "file", fileSource(j.name), "path", path)
	read := time.Now()
	files, err := r.cfg.Loader.ReadModule(ctx, path, SidecarPath(path), obs)
	if ctx.Err() != nil {
		return loaded{ended: true}
	}
	if err == nil {
		var st stamp
		if st, err = statModule(path); err == nil && st != j.stamp {
			return loaded{unsettled: &st}
		}
	}
	if err != nil {
		return loaded{readErr: err}
	}
	sum := contentSum(files.Module, files.Sidecar)
	failedToRetry := j.retry && j.old != nil && j.old.mod == nil
	if j.old != nil && j.old.sum == sum && !j.old.retry && !failedToRetry {
		return loaded{same: true, sum: sum, read: read}
	}
	tool, err := r.cfg.Loader.LoadModule(ctx, files, obs)
	if ctx.Err() != nil {
		if tool != nil {
			r.closeDiscarded(j.name, tool)
		}
		return loaded{ended: true}
	}
	out := loaded{tool: tool, loadErr: err, sum: sum, read: read}
	if err != nil {
		out.claimed = declaredCodes(files.Sidecar)
	}
	return out
}

// closeDiscarded closes the module of a load whose outcome no one takes
// (the registry closed, the file changed, the load's context ended); a
// failure is logged.
func (r *Registry) closeDiscarded(name string, tool LoadedModule) {
	if err := tool.Close(context.Background()); err != nil {
		r.log.Warn("registry: closing a discarded module", "file", fileSource(name), "error", err)
	}
}

// finish records a load job's outcome as the file's entry, and publishes
// it unless a synchronous discovery is waiting (it publishes once, for
// all). A stale job's outcome is discarded.
func (r *Registry) finish(j *loadJob, out loaded) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer close(j.done)
	if j.stale || r.closed || out.ended {
		if out.tool != nil {
			r.closeDiscarded(j.name, out.tool)
		}
		if !j.stale && r.loading[j.name] == j {
			delete(r.loading, j.name)
		}
		if !j.stale {
			r.startDone(j.name)
			r.checkStarted()
		}
		return
	}
	delete(r.loading, j.name)
	source := fileSource(j.name)
	path := filepath.Join(r.cfg.Dir, j.name)
	var e *entry
	switch {
	case out.unsettled != nil:
		// Changed while being read: wait for it to settle again.
		j.unsettled = true
		r.seen[j.name] = &observation{stamp: *out.unsettled, since: time.Now()}
		select {
		case r.kick <- struct{}{}:
		default:
		}
		return
	case out.readErr != nil:
		r.warnOnce(j.name, "registry: cannot read a module", "file", source, "path", path, "error", out.readErr)
		// Read again at every scan: fixing it (permissions) may not change
		// its stamp.
		e = r.failedEntry(j.old, j.stamp, &pkg{source: source, failed: moduleFailure(source, out.readErr)}, true)
	case out.same:
		// Same content (touched, or copied again): keep the loaded Tool.
		// The entry keeps its package, so no new generation is made.
		c := *j.old
		c.stamp, c.verified = j.stamp, out.read
		e = &c
	case out.loadErr != nil:
		r.log.Warn("registry: module refused", "file", source, "path", path, "error", out.loadErr)
		e = r.failedEntry(j.old, j.stamp, failedPkg(source, moduleFailure(source, out.loadErr), out.claimed), false)
		e.sum, e.verified = out.sum, out.read
	default:
		m := &module{tool: out.tool, file: source, log: r.log, closed: r.moduleClosed}
		r.moduleOpened()
		delete(r.warned, j.name)
		r.log.Info("registry: module loaded", "file", source, "path", path,
			"implementation_version", out.tool.ImplementationVersion(), "sha256", fmt.Sprintf("%x", out.sum))
		e = &entry{stamp: j.stamp, sum: out.sum, verified: out.read, mod: m, pkg: modulePkg(source, m, r.log)}
		r.startPromotion(m)
	}
	old := r.entries[j.name]
	r.entries[j.name] = e
	if old == nil || old.pkg != e.pkg {
		r.dirty = true
	}
	if old != nil && old.mod != nil && old.mod != e.mod {
		r.retiring = append(r.retiring, old.mod)
	}
	r.startDone(j.name)
	if r.waiters == 0 {
		r.publish()
	}
}

// failedEntry is the entry of a package failed as a whole. When the file
// already failed the same way, its package is kept, so that a failing file
// that is touched or rewritten identically makes no new generation. With
// retry, the file is read again at every scan.
func (r *Registry) failedEntry(old *entry, st stamp, p *pkg, retry bool) *entry {
	e := &entry{stamp: st, verified: time.Now(), pkg: p, retry: retry}
	if old != nil && old.mod == nil && *old.pkg.failed == *p.failed {
		e.pkg = old.pkg
	}
	return e
}

// awaitLoads waits until every job is done, until ctx ends (its error), or
// until the time until, when set, has come. It reports whether a job
// found its file changed while reading it.
func (r *Registry) awaitLoads(ctx context.Context, jobs []*loadJob, until time.Time) (unsettled bool, err error) {
	var timeout <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		timeout = t.C
	}
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-ctx.Done():
			return false, fmt.Errorf("waiting for modules to load: %w", ctx.Err())
		case <-timeout:
			return false, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range jobs {
		unsettled = unsettled || j.unsettled
	}
	return unsettled, nil
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
func (r *Registry) watch(ctx context.Context, w *fsnotify.Watcher) {
	defer close(r.done)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		defer w.Close() //nolint:errcheck // a watcher done with: nothing to lose
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
		pending, err := r.rescan(ctx, r.cfg.BatchWait)
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
				// written is then waited for until it settles, one moved
				// in is not (movedin.go).
				r.moved.event(ev)
				arm(time.Now().Add(min(eventDelay, r.cfg.Settle)))
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow loses events: rescan now, and let every file
			// settle by the settle rule.
			r.log.Warn("registry: watching the tools folder", "error", err)
			r.moved.forget()
			rescan()
		case <-r.kick:
			// A load found its file changing: look again once it settles.
			arm(time.Now().Add(r.cfg.Settle))
		case <-timer.C:
			armed = time.Time{}
			rescan()
		case <-ticker.C:
			rescan()
		}
	}
}

// newWatcher watches the tools folder, or returns nil (logged) when it
// cannot: the folder is then rescanned periodically only. It is made
// before Open returns, so that a file dropped right after is an event.
func (r *Registry) newWatcher() *fsnotify.Watcher {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(r.cfg.Dir); err != nil {
			w.Close() //nolint:errcheck // a watcher given up (logged below): nothing to lose
		}
	}
	if err != nil {
		r.log.Warn("registry: cannot watch the tools folder; rescanning periodically only",
			"dir", r.cfg.Dir, "interval", r.cfg.Interval, "error", err)
		return nil
	}
	return w
}

// watched reports whether an event on path can change the folder's
// packages: a module or a sidecar manifest, not a hidden file.
func watched(path string) bool {
	name := filepath.Base(path)
	return !strings.HasPrefix(name, ".") &&
		(strings.HasSuffix(name, ModuleSuffix) || strings.HasSuffix(name, SidecarSuffix))
}

// rescan is one scan of the live folder: it waits for the loads it
// started up to wait (without bound when wait is negative), publishes
// what is ready when anything changed, and leaves the loads still running
// to publish when they end.
func (r *Registry) rescan(ctx context.Context, wait time.Duration) (time.Time, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return time.Time{}, ErrClosed
	}
	pending, running, err := r.scan(false)
	if err != nil {
		r.mu.Unlock()
		return time.Time{}, err
	}
	r.waiters++
	r.mu.Unlock()
	var until time.Time
	if wait >= 0 {
		until = time.Now().Add(wait)
	}
	_, err = r.awaitLoads(ctx, running, until)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiters--
	if err != nil {
		return time.Time{}, err
	}
	r.publish()
	return pending, nil
}

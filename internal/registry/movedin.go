package registry

import (
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Files moved in.
//
// The settle rule waits until a file has not changed for the settle time
// (a second by default), because a file being written in place cannot be
// told from a finished one by its stat. A file renamed into the folder —
// the way docs/registry.md asks modules to be installed — is finished the
// moment it appears, and the watcher can tell: the rename is one Create
// event for its name, with no Write after it, while a file written in
// place has its Writes (an in-place copy, a truncation, an append). So a
// module whose name the watcher saw created and not written since, and
// whose sidecar (if any) settled or was moved in the same way, counts as
// settled once the watcher's event delay has passed. Anything else — a
// Write, a lost event (the watcher's error), a poll-only folder — falls
// back to the settle rule, and a file that turns out to be changing while
// it is read is waited for again as before (loadOne's stamp check).

// movedIn records, for the live folder, the names created by a watcher
// event and not written since. It is safe for concurrent use.
type movedIn struct {
	mu    sync.Mutex
	names map[string]time.Time // name → when its Create was seen
}

// event records a watcher event on path.
func (m *movedIn) event(ev fsnotify.Event) {
	name := filepath.Base(ev.Name)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case ev.Has(fsnotify.Write), ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		delete(m.names, name)
	case ev.Has(fsnotify.Create):
		if m.names == nil {
			m.names = map[string]time.Time{}
		}
		m.names[name] = time.Now()
	}
}

// forget drops every record: events may have been lost.
func (m *movedIn) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.names = nil
}

// settled reports whether the module name, and its sidecar when st has one,
// were moved in at least delay before now and not written since; a
// sidecar may instead have settled by the settle rule (obs).
func (m *movedIn) settled(name string, obs *observation, settle, delay time.Duration, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.names[name]
	if !ok || now.Sub(at) < delay {
		return false
	}
	if !obs.stamp.sidecar {
		return true
	}
	sc, ok := m.names[filepath.Base(SidecarPath(name))]
	if ok {
		return now.Sub(sc) >= delay
	}
	return now.After(time.Unix(0, obs.stamp.sidecarMod).Add(settle))
}

// keep drops the records of names no longer in the folder.
func (m *movedIn) keep(present map[string]*observation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.names {
		module := strings.TrimSuffix(name, SidecarSuffix) + ModuleSuffix
		if present[name] == nil && present[module] == nil {
			delete(m.names, name)
		}
	}
}

package cachedir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher is an inotify instance over the cache folder (for new entry
// folders) and each of its entry folders (for opens and writes).
type watcher struct {
	f      *os.File
	fd     int
	root   string
	opened func(string)
	wrote  func()

	mu   sync.Mutex
	dirs map[int32]string // watch descriptor → entry folder; the root's is rootWD
	done chan struct{}
}

// watch calls opened with the path of an entry a process opens (wazero
// reading compiled code, the host reading an image) and wrote after an
// entry is written (renamed into place or closed after writing).
// Temporary files are ignored. It watches folders that appear later too.
func watch(root string, opened func(string), wrote func()) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	// A non-blocking descriptor in an os.File is read through the
	// runtime's poller, so that Close ends a Read in progress.
	w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, root: root,
		opened: opened, wrote: wrote, dirs: map[int32]string{}, done: make(chan struct{})}
	if _, err := unix.InotifyAddWatch(fd, root, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR); err != nil {
		w.f.Close() //nolint:errcheck // an inotify descriptor given up: nothing to lose
		return nil, err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		w.f.Close() //nolint:errcheck // an inotify descriptor given up: nothing to lose
		return nil, err
	}
	for _, d := range entries {
		if d.IsDir() && isEntryDir(d.Name()) {
			w.add(filepath.Join(root, d.Name()))
		}
	}
	go w.read()
	return w, nil
}

// add watches the entry folder dir.
func (w *watcher) add(dir string) {
	wd, err := unix.InotifyAddWatch(w.fd, dir, unix.IN_OPEN|unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		return // gone already
	}
	w.mu.Lock()
	w.dirs[int32(wd)] = dir
	w.mu.Unlock()
}

func (w *watcher) read() {
	defer close(w.done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.handle(ev.Wd, ev.Mask, string(bytes.TrimRight(nameBytes, "\x00")))
		}
	}
}

func (w *watcher) handle(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.wrote() // events were lost: prune to be sure
		return
	}
	w.mu.Lock()
	dir, isEntry := w.dirs[wd]
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
	}
	w.mu.Unlock()
	switch {
	case name == "":
		// An event on a watched folder itself (opened for listing).
	case !isEntry:
		// The root: a new folder, watched when it holds entries.
		if mask&unix.IN_ISDIR != 0 && isEntryDir(name) {
			w.add(filepath.Join(w.root, name))
		}
	case mask&unix.IN_ISDIR != 0 || isTemp(name):
	case mask&unix.IN_OPEN != 0:
		w.opened(filepath.Join(dir, name))
	case mask&(unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO) != 0:
		w.wrote()
	}
}

// Close stops the watcher and waits for its goroutine. It is safe to call
// more than once.
func (w *watcher) Close() error {
	err := w.f.Close()
	<-w.done
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

//go:build unix

package wasmtool

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openRegular opens path for readFile: with O_NONBLOCK, so that a FIFO
// swapped in after a stat does not block open, then fstat on the open
// descriptor, so that the checked file is the one read. Anything that is
// not a regular file, or is over limit, is refused before a byte is read.
// It returns the open file, its size and modification time.
func openRegular(path string, limit int64, tooLarge LoadReason) (*os.File, int64, time.Time, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, time.Time{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	kept := false
	defer func() {
		if !kept {
			unix.Close(fd) //nolint:errcheck // a read-only descriptor refused: nothing to lose
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, time.Time{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, 0, time.Time{}, &LoadError{Reason: NotRegular, Err: fmt.Errorf("%s is not a regular file (mode %#o)", path, st.Mode&unix.S_IFMT)}
	}
	if st.Size > limit {
		return nil, 0, time.Time{}, &LoadError{Reason: tooLarge, Err: fmt.Errorf("%s: %d bytes is over the %d-byte limit", path, st.Size, limit)}
	}
	// A regular file's reads never block; clearing O_NONBLOCK keeps file
	// systems that honour it for regular files (some FUSE ones) from
	// answering EAGAIN, and os.NewFile from treating the file as pollable.
	if err := unix.SetNonblock(fd, false); err != nil {
		return nil, 0, time.Time{}, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	kept = true
	return os.NewFile(uintptr(fd), path), st.Size, time.Unix(st.Mtim.Unix()), nil
}

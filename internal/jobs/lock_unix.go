//go:build unix

package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive, non-blocking flock on dir/.lock and returns
// its release. The kernel releases it when the process dies, however it
// dies: that is what makes recovery at Open safe, since no other live
// process can be running the jobs Open finds marked running.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the jobs lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close() //nolint:errcheck // an empty lock file, not locked: nothing to lose
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	// Closing the file releases the lock; the file holds nothing.
	return func() { f.Close() }, nil //nolint:errcheck // see above
}

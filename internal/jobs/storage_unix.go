//go:build unix

package jobs

import (
	"golang.org/x/sys/unix"
)

// noSpaceErrnos are the errors of a write that found no room: the file
// system is full, or the user's quota is.
var noSpaceErrnos = []error{unix.ENOSPC, unix.EDQUOT}

// freeBytes is the space of dir's file system available to the process.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

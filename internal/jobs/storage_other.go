//go:build !unix

package jobs

import (
	"errors"
	"syscall"
)

// noSpaceErrnos are the errors of a write that found no room.
var noSpaceErrnos = []error{syscall.ENOSPC}

// freeBytes cannot measure free space on this platform: only failed writes
// make a folder count as full.
func freeBytes(dir string) (int64, error) {
	return 0, errors.New("jobs: free space is not measured on this platform")
}

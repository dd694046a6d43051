//go:build !unix

package wasmtool

import (
	"fmt"
	"os"
	"time"
)

// openRegular opens path for readFile and refuses, from the open file's
// stat, anything that is not a regular file or is over limit. Without
// O_NONBLOCK here, a FIFO swapped in between a stat and the open can block
// it; the loader is meant for unix hosts.
func openRegular(path string, limit int64, tooLarge LoadReason) (*os.File, int64, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, time.Time{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, time.Time{}, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, time.Time{}, &LoadError{Reason: NotRegular, Err: fmt.Errorf("%s is not a regular file (mode %v)", path, fi.Mode().Type())}
	}
	if fi.Size() > limit {
		f.Close()
		return nil, 0, time.Time{}, &LoadError{Reason: tooLarge, Err: fmt.Errorf("%s: %d bytes is over the %d-byte limit", path, fi.Size(), limit)}
	}
	return f, fi.Size(), fi.ModTime(), nil
}

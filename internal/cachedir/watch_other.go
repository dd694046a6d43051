//go:build !linux

package cachedir

import "io"

// watch is not available here: the Bound polls.
func watch(string, func(string), func()) (io.Closer, error) { return nil, errUnsupported }

//go:build !linux

package cachedir

import (
	"io/fs"
	"time"
)

// lastUse is info's modification time: the access time is not read here.
func lastUse(info fs.FileInfo) time.Time { return info.ModTime() }

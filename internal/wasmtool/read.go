package wasmtool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// The size limits of the files a module is loaded from. A larger file is
// refused from its size as the kernel reports it, before a byte is read.
const (
	// MaxModuleBytes is the largest module file read: host's limit.
	MaxModuleBytes = host.MaxModuleBytes
	// MaxSidecarBytes is the largest sidecar manifest read: the largest
	// declaration tooldef decodes.
	MaxSidecarBytes = tooldef.MaxDeclarationBytes
)

// SidecarPath is the manifest beside a module: NAME.wasm → NAME.tool.json.
func SidecarPath(path string) string {
	return strings.TrimSuffix(path, ".wasm") + SidecarSuffix
}

// File is one file read whole: its bytes and what fstat said of the open
// descriptor before reading.
type File struct {
	Data    []byte
	Size    int64
	ModTime time.Time
}

// Files are a module file and its sidecar manifest, read by [Loader.ReadFiles].
type Files struct {
	Module  File
	Sidecar *File // nil when there is none
}

// readFiles reads the module at path and its sidecar manifest at sidecar
// ([SidecarPath] of path, unless the caller names another) when one
// exists, each with readFile under its own size limit. A sidecar whose
// name is too long for the file system (a module name of 246 bytes or
// more) cannot exist and counts as absent.
func readFiles(path, sidecar string) (*Files, error) {
	m, err := readFile(path, MaxModuleBytes, ModuleTooLarge)
	if err != nil {
		return nil, err
	}
	fs := &Files{Module: *m}
	side, err := readFile(sidecar, MaxSidecarBytes, SidecarTooLarge)
	switch {
	case err == nil:
		fs.Sidecar = side
	case !NoSuchFile(err):
		return nil, err
	}
	return fs, nil
}

// NoSuchFile reports whether err says a file does not exist, including a
// name too long to exist (ENAMETOOLONG): a sidecar beside a module whose
// name is near the file system's limit.
func NoSuchFile(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG)
}

// readFile reads the regular file at path, following links, refusing
// before reading a byte anything that is not a regular file (a FIFO, a
// device, a socket, a folder: [NotRegular]) and a file whose size is over
// limit (tooLarge). It opens the file with O_NONBLOCK, so that a FIFO
// swapped in after a stat does not block open, and takes the size from
// the open descriptor, so that the checked file is the read one. It reads
// at most limit+1 bytes: a file that grows while it is read is refused
// too. Refusals are a *[LoadError]; other errors (a missing file,
// permissions) are returned as the os package reports them.
func readFile(path string, limit int64, tooLarge LoadReason) (*File, error) {
	f, size, modTime, err := openRegular(path, limit, tooLarge)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &LoadError{Reason: tooLarge, Err: fmt.Errorf("%s grew over the %d-byte limit while it was read", path, limit)}
	}
	return &File{Data: data, Size: size, ModTime: modTime}, nil
}

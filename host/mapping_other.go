//go:build !linux

package host

import (
	"errors"
	"sync/atomic"
)

// Without memfd, a pooled instance's memory is a plain buffer that a reset
// copies the image back into (see mapping_linux.go).

type imageFile struct{}

// noPagemapScan mirrors mapping_linux.go's flag; without a mapping it is
// never consulted.
var noPagemapScan atomic.Bool

var errNoMapping = errors.New("memory images are not mapped on this system")

func newImageFile([]byte) (*imageFile, error)     { return nil, errNoMapping }
func (*imageFile) mapPrivate(int) ([]byte, error) { return nil, errNoMapping }
func resetMapping(_, _ []byte, _ *[]byte) error   { return errNoMapping }
func unmap([]byte) error                          { return errNoMapping }
func (*imageFile) close() error                   { return nil }

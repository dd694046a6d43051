package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A memory image on Linux is also a memfd: a pooled instance's linear
// memory is a private (copy-on-write) mapping of it. The kernel then
// tracks what the guest wrote: a page it wrote is a private copy, every
// other page is still the image's, shared. A reset reads the mapping's
// entries in /proc/self/pagemap and copies the image back into the private
// pages only (they stay private and writable, so the next call's writes to
// them do not fault), which costs the pages calls wrote, not the size of
// the image. Where pagemap cannot be read, the reset drops the private
// pages with madvise(MADV_DONTNEED) instead, and the next call faults them
// in again.

// imageFile is the memfd holding an image's bytes, sealed against change.
type imageFile struct{ fd int }

// newImageFile writes b to a new sealed memfd.
func newImageFile(b []byte) (*imageFile, error) {
	fd, err := unix.MemfdCreate("toolhost-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("creating the image's memfd: %w", err)
	}
	f := &imageFile{fd: fd}
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("writing the image's memfd: %w", err), f.close())
		}
		off += n
	}
	// Sealed, the file cannot be written, grown or shrunk by anyone: a
	// mapping cannot then fault past its end (SIGBUS) or see other bytes.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return nil, errors.Join(fmt.Errorf("sealing the image's memfd: %w", err), f.close())
	}
	return f, nil
}

// mapPrivate maps the first n bytes of the file copy-on-write.
func (f *imageFile) mapPrivate(n int) ([]byte, error) {
	b, err := unix.Mmap(f.fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mapping the image: %w", err)
	}
	return b, nil
}

// resetMapping sets a mapping made by mapPrivate of image back to the
// image. scratch holds a pagemap entry per page between calls.
func resetMapping(b, image []byte, scratch *[]byte) error {
	if err := copyPrivatePages(b, image, scratch); err == nil {
		return nil
	}
	return unix.Madvise(b, unix.MADV_DONTNEED)
}

// pagemap is /proc/self/pagemap, opened on first use.
var pagemap = sync.OnceValues(func() (*os.File, error) { return os.Open("/proc/self/pagemap") })

// The pagemap entry bits read (Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63
	pmSwapped = 1 << 62
	pmFile    = 1 << 61 // a file page or shared anonymous: not a private copy
)

// copyPrivatePages copies image into the pages of b that are private
// copies (present and not the file's, or swapped out), in runs. It asks
// the kernel for the runs with the PAGEMAP_SCAN ioctl (Linux 6.7) where it
// has it, and reads an entry per page otherwise.
func copyPrivatePages(b, image []byte, scratch *[]byte) error {
	f, err := pagemap()
	if err != nil {
		return err
	}
	if !noPagemapScan.Load() {
		err := scanPrivatePages(f, b, func(lo, hi int) { copy(b[lo:hi], image[lo:hi]) })
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.ENOTTY) && !errors.Is(err, unix.EINVAL) {
			return err
		}
		noPagemapScan.Store(true) // an older kernel: entries from now on
	}
	page := os.Getpagesize()
	pages := (len(b) + page - 1) / page
	if cap(*scratch) < 8*pages {
		*scratch = make([]byte, 8*pages)
	}
	entries := (*scratch)[:8*pages]
	off := int64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))/uintptr(page)) * 8
	if n, err := f.ReadAt(entries, off); err != nil || n != len(entries) {
		return fmt.Errorf("reading pagemap: %d of %d bytes: %w", n, len(entries), err)
	}
	run := -1 // first page of the current run of private pages
	for p := 0; p <= pages; p++ {
		private := false
		if p < pages {
			e := binary.LittleEndian.Uint64(entries[8*p:])
			private = e&pmSwapped != 0 || e&pmPresent != 0 && e&pmFile == 0
		}
		switch {
		case private && run < 0:
			run = p
		case !private && run >= 0:
			lo, hi := run*page, min(p*page, len(b))
			copy(b[lo:hi], image[lo:hi])
			run = -1
		}
	}
	return nil
}

// unmap releases a mapping made by mapPrivate.
func unmap(b []byte) error { return unix.Munmap(b) }

func (f *imageFile) close() error { return unix.Close(f.fd) }

// noPagemapScan is set once PAGEMAP_SCAN turned out to be missing.
var noPagemapScan atomic.Bool

// PAGEMAP_SCAN (include/uapi/linux/fs.h): _IOWR('f', 16, struct
// pm_scan_arg), and the page categories it matches on.
const (
	pagemapScan     = 0xc0606610
	pageIsFile      = 1 << 2
	pageIsPresent   = 1 << 3
	pageIsSwapped   = 1 << 4
	scanRegionsHeld = 64
)

// pmScanArg is struct pm_scan_arg.
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages       uint64
	categoryInverted, categoryMask, categoryAnyofMask, returnMask uint64
}

// pageRegion is struct page_region.
type pageRegion struct{ start, end, categories uint64 }

// scanPrivatePages calls fn with the byte range, within b, of each run of
// b's pages that is not the file's: present and not a file page, or
// swapped out.
func scanPrivatePages(f *os.File, b []byte, fn func(lo, hi int)) error {
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	var regions [scanRegionsHeld]pageRegion
	arg := pmScanArg{
		size:  uint64(unsafe.Sizeof(pmScanArg{})),
		start: base, end: base + uint64(len(b)),
		vec: uint64(uintptr(unsafe.Pointer(&regions[0]))), vecLen: scanRegionsHeld,
		// not a file page, and present or swapped
		categoryInverted: pageIsFile, categoryMask: pageIsFile,
		categoryAnyofMask: pageIsPresent | pageIsSwapped,
		returnMask:        pageIsPresent | pageIsSwapped,
	}
	for arg.start < arg.end {
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		runtime.KeepAlive(&regions)
		if errno != 0 {
			return errno
		}
		for _, r := range regions[:n] {
			fn(int(r.start-base), int(r.end-base))
		}
		if arg.walkEnd <= arg.start {
			return fmt.Errorf("PAGEMAP_SCAN made no progress at %#x", arg.start)
		}
		arg.start = arg.walkEnd
	}
	return nil
}

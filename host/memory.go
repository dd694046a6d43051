package host

import "github.com/tetratelabs/wazero/experimental"

// linearMemory backs one instance's linear memory and enforces the call's
// memory budget: linear memory plus what the host holds for the guest
// (callState.hostBytes) stay within Limits.MemoryBytes. A refused growth
// makes memory.grow return -1 and is recorded, so that the trap that
// usually follows is reported as memory_limit.
//
// A fresh instance's memory starts as a copy of the module's image, if it
// has one. A pooled instance's starts as a private mapping of the image
// (or a copy where there is no mapping) and is set back to it after each
// call by reset; s is then the state of the call the instance serves.
type linearMemory struct {
	s       *callState
	image   *memoryImage // when set, the memory starts as the image
	pooled  bool         // the instance is pooled: map the image, and reset
	buf     []byte
	mapped  bool   // buf is a private mapping of image
	scratch []byte // for reset (resetMapping)
	grown   bool   // grew past the image: reset cannot shrink it back
}

var _ experimental.LinearMemory = (*linearMemory)(nil)

// noMapping makes pooled memories copies reset by copying the image back,
// as where the system has no memfd; for the benchmarks that compare the
// two.
var noMapping = false

// Reallocate grows the memory to size bytes, keeping its contents.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size+m.s.hostBytes() > m.s.limits.MemoryBytes {
		// Capacity the blocks reserved but do not use goes first.
		if !m.s.blocks.shrink() || size+m.s.hostBytes() > m.s.limits.MemoryBytes {
			m.s.memoryRefused = true
			return nil
		}
	}
	switch {
	case m.buf == nil && m.image != nil && m.pooled && size == uint64(len(m.image.bytes)) && size > 0 && !noMapping:
		if b, err := m.image.mapping(); err == nil {
			m.buf, m.mapped = b, true
			break
		}
		m.buf = m.image.buffer(size)
	case m.buf == nil && m.image != nil:
		m.buf = m.image.buffer(size)
	case size <= uint64(cap(m.buf)):
		old := len(m.buf)
		m.buf = m.buf[:size]
		clear(m.buf[old:]) // a pooled buffer is not zero past its length
	default:
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.s.limits.MemoryBytes))
		copy(grown, m.buf)
		m.dropMapping()
		m.buf = grown
	}
	if m.image != nil && size > uint64(len(m.image.bytes)) {
		m.grown = true
	}
	m.s.notePeak()
	return m.buf
}

// reset sets the memory back to the image after a call, or reports false
// when it cannot: the memory grew, or has no image to go back to.
func (m *linearMemory) reset() bool {
	if m.grown || m.image == nil || len(m.buf) != len(m.image.bytes) {
		return false
	}
	if m.mapped {
		return resetMapping(m.buf, m.image.bytes, &m.scratch) == nil
	}
	copy(m.buf, m.image.bytes)
	return true
}

// dropMapping unmaps buf when it is a mapping.
func (m *linearMemory) dropMapping() {
	if m.mapped {
		unmap(m.buf) //nolint:errcheck // munmap of a whole mapping fails only on a bad address, and wazero's Grow and Free return no error
		m.mapped = false
	}
}

// Free drops the buffer: a mapping is unmapped, a copy of an image goes
// back to the image's pool.
func (m *linearMemory) Free() {
	switch {
	case m.mapped:
		m.dropMapping()
	case m.image != nil && m.buf != nil && !m.pooled:
		m.image.release(m.buf)
	}
	m.buf = nil
}

// allocator gives each instance its linearMemory.
type allocator struct {
	s      *callState
	image  *memoryImage
	pooled bool
	// made receives the memory, for the instance to keep.
	made **linearMemory
}

func (a allocator) Allocate(cap, max uint64) experimental.LinearMemory {
	m := &linearMemory{s: a.s, image: a.image, pooled: a.pooled}
	a.s.memory = m
	if a.made != nil {
		*a.made = m
	}
	return m
}

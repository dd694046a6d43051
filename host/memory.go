package host

import "github.com/tetratelabs/wazero/experimental"

// linearMemory backs one instance's linear memory and enforces the call's
// memory budget: linear memory plus what the host holds for the guest
// (callState.hostBytes) stay within Limits.MemoryBytes. A refused growth
// makes memory.grow return -1 and is recorded, so that the trap that
// usually follows is reported as memory_limit.
type linearMemory struct {
	s     *callState
	image *memoryImage // when set, the memory starts as a copy of it
	buf   []byte
}

var _ experimental.LinearMemory = (*linearMemory)(nil)

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
	case m.buf == nil && m.image != nil:
		m.buf = m.image.buffer(size)
	case size <= uint64(cap(m.buf)):
		old := len(m.buf)
		m.buf = m.buf[:size]
		clear(m.buf[old:]) // a pooled buffer is not zero past its length
	default:
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.s.limits.MemoryBytes))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.s.notePeak()
	return m.buf
}

// Free drops the buffer, returning it to the image's pool if it came from
// one.
func (m *linearMemory) Free() {
	if m.image != nil && m.buf != nil {
		m.image.release(m.buf)
	}
	m.buf = nil
}

// allocator gives each instance of a call its linearMemory.
type allocator struct {
	s     *callState
	image *memoryImage
}

func (a allocator) Allocate(cap, max uint64) experimental.LinearMemory {
	m := &linearMemory{s: a.s, image: a.image}
	a.s.memory = m
	return m
}

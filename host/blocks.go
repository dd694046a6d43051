package host

// blockStore is the Extism kernel's memory: blocks of bytes addressed by
// i64 offsets, outside the guest's linear memory. It is one arena that only
// grows until reset (an instance lives for one call, so freed blocks are
// not reused); offset o addresses arena[o-blockBase], so 0 means "no
// block" and a guest may address bytes inside a block as base+i.
//
// What it costs the memory limit (size) is the arena's capacity, which
// reset keeps for the blocks that follow, plus blockOverhead for each block
// allocated since the last reset, for the map that records their lengths.
type blockStore struct {
	arena   []byte
	lengths map[uint64]uint64 // live blocks: base offset → length
	blocks  uint64            // blocks allocated since the last reset
}

const blockBase = 1

// blockOverhead is what one block's entry in the lengths map is taken to
// cost (a map does not shrink when blocks are freed).
const blockOverhead = 64

// alloc returns the offset of a new zeroed block of n bytes, or false when
// the store would then cost more than limit bytes.
func (b *blockStore) alloc(n, limit uint64) (uint64, bool) {
	used, held := uint64(len(b.arena)), uint64(cap(b.arena))
	if n > limit {
		return 0, false
	}
	need := used + n
	if max(need, held)+b.overhead()+blockOverhead > limit {
		return 0, false
	}
	if need > held {
		// Grow by doubling, but never past what the limit allows.
		room := limit - b.overhead() - blockOverhead
		grown := make([]byte, used, min(max(need, 2*held), room))
		copy(grown, b.arena)
		b.arena = grown
	}
	if b.lengths == nil {
		b.lengths = make(map[uint64]uint64)
	}
	off := used + blockBase
	b.arena = b.arena[:used+n]
	clear(b.arena[used:]) // a reset arena is not zero past its length
	b.lengths[off] = n
	b.blocks++
	return off, true
}

// free forgets a block; its bytes stay in the arena until the call ends.
func (b *blockStore) free(off uint64) { delete(b.lengths, off) }

// reset forgets every block and keeps the arena's capacity for the next.
func (b *blockStore) reset() {
	b.arena = b.arena[:0]
	b.lengths = nil
	b.blocks = 0
}

// shrink lets go of the arena's capacity past its length, so that the
// memory it reserved can go to linear memory instead. It reports whether
// there was any.
func (b *blockStore) shrink() bool {
	if cap(b.arena) == len(b.arena) {
		return false
	}
	if len(b.arena) == 0 {
		b.arena = nil
	} else {
		b.arena = append([]byte(nil), b.arena...)
	}
	return true
}

// length returns the length of the live block based at off, or 0.
func (b *blockStore) length(off uint64) uint64 { return b.lengths[off] }

// used is the bytes the blocks take in the arena (what Extism's
// memory_bytes reports).
func (b *blockStore) used() uint64 { return uint64(len(b.arena)) }

// size is what the store costs the memory limit.
func (b *blockStore) size() uint64 { return uint64(cap(b.arena)) + b.overhead() }

func (b *blockStore) overhead() uint64 { return b.blocks * blockOverhead }

// slice returns n bytes at offset off, or false when they are outside the
// arena.
func (b *blockStore) slice(off, n uint64) ([]byte, bool) {
	if off < blockBase {
		return nil, false
	}
	i := off - blockBase
	if i > uint64(len(b.arena)) || n > uint64(len(b.arena))-i {
		return nil, false
	}
	return b.arena[i : i+n], true
}

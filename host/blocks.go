package host

// blockStore is the Extism kernel's memory: blocks of bytes addressed by
// i64 offsets, outside the guest's linear memory. It is one arena that only
// grows (an instance lives for one call, so freed blocks are not reused);
// offset o addresses arena[o-blockBase], so 0 means "no block" and a
// guest may address bytes inside a block as base+i.
type blockStore struct {
	arena   []byte
	lengths map[uint64]uint64 // live blocks: base offset → length
}

const blockBase = 1

// alloc returns the offset of a new zeroed block of n bytes.
func (b *blockStore) alloc(n uint64) uint64 {
	if b.lengths == nil {
		b.lengths = make(map[uint64]uint64)
	}
	off := uint64(len(b.arena)) + blockBase
	b.arena = append(b.arena, make([]byte, n)...)
	b.lengths[off] = n
	return off
}

// free forgets a block; its bytes stay in the arena until the call ends.
func (b *blockStore) free(off uint64) { delete(b.lengths, off) }

// length returns the length of the live block based at off, or 0.
func (b *blockStore) length(off uint64) uint64 { return b.lengths[off] }

// size is the arena's size in bytes: what the blocks cost the memory budget.
func (b *blockStore) size() uint64 { return uint64(len(b.arena)) }

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

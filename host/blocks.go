package host

import "slices"

// blockStore is the Extism kernel's memory: blocks of bytes addressed by
// i64 offsets, outside the guest's linear memory. It is one arena; offset
// o addresses arena[o-blockBase], so 0 means "no block" and a guest may
// address bytes inside a block as base+i.
//
// Freed space is reused, as the Extism kernel reuses it: a freed block at
// the arena's end shortens the arena (and so does the free span before
// it), any other goes to a free list of spans sorted by offset, merged
// with the spans beside it; alloc takes the first span that fits
// (first-fit) before growing the arena. The free list holds at most
// maxFreeSpans spans: a block freed when it is full and touching none of
// them stays unused until reset. alloc and free report the spans they
// looked at or moved, which the caller charges as host work.
//
// What it costs the memory limit (size) is the arena's capacity, which
// reset keeps for the blocks that follow, plus blockOverhead for each of
// the most blocks live at once since the last reset (the map that records
// their lengths does not shrink) and freeSpanBytes for each span the free
// list can hold.
type blockStore struct {
	arena   []byte
	lengths map[uint64]uint64 // live blocks: base offset → length
	spans   []span            // free spans inside the arena, by offset, none adjacent
	live    uint64            // blocks live now
	most    uint64            // the most blocks live at once since the last reset
}

// span is free space in the arena: n bytes at arena index i.
type span struct{ i, n uint64 }

const blockBase = 1

// blockOverhead is what one block's entry in the lengths map is taken to
// cost; freeSpanBytes what one entry of the free list costs.
const (
	blockOverhead = 64
	freeSpanBytes = 16
)

// maxFreeSpans bounds the free list, and so the work of one alloc or free.
const maxFreeSpans = 1024

// alloc returns the offset of a new zeroed block of n bytes, or false when
// the store would then cost more than limit bytes. work is the free spans
// it looked at.
func (b *blockStore) alloc(n, limit uint64) (off uint64, work uint64, ok bool) {
	if n > limit {
		return 0, 0, false
	}
	most := max(b.most, b.live+1)
	overhead := most*blockOverhead + uint64(cap(b.spans))*freeSpanBytes
	// First fit in the free list.
	if n > 0 {
		for k := range b.spans {
			work++
			sp := &b.spans[k]
			if sp.n < n {
				continue
			}
			if uint64(cap(b.arena))+overhead > limit {
				return 0, work, false
			}
			i := sp.i
			if sp.n == n {
				b.spans = slices.Delete(b.spans, k, k+1)
				work += uint64(len(b.spans) - k)
			} else {
				sp.i, sp.n = sp.i+n, sp.n-n
			}
			clear(b.arena[i : i+n])
			return b.record(i, n, most), work, true
		}
	}
	used, held := uint64(len(b.arena)), uint64(cap(b.arena))
	need := used + n
	if max(need, held)+overhead > limit {
		return 0, work, false
	}
	if need > held {
		// Grow by doubling, but never past what the limit allows.
		room := limit - overhead
		grown := make([]byte, used, min(max(need, 2*held), room))
		copy(grown, b.arena)
		b.arena = grown
	}
	b.arena = b.arena[:need]
	clear(b.arena[used:]) // a reset arena is not zero past its length
	return b.record(used, n, most), work, true
}

// record makes the n bytes at arena index i a live block.
func (b *blockStore) record(i, n, most uint64) uint64 {
	if b.lengths == nil {
		b.lengths = make(map[uint64]uint64)
	}
	off := i + blockBase
	if _, ok := b.lengths[off]; !ok {
		b.live++
	}
	b.lengths[off] = n
	b.most = most
	return off
}

// free releases the live block based at off for reuse; an offset that is
// no live block's is ignored (a second free of the same block too). work
// is the free spans it moved.
func (b *blockStore) free(off uint64) (work uint64) {
	n, ok := b.lengths[off]
	if !ok {
		return 0
	}
	delete(b.lengths, off)
	b.live--
	if n == 0 {
		return 0
	}
	i := off - blockBase
	k, _ := slices.BinarySearchFunc(b.spans, i, func(sp span, i uint64) int { return cmpU64(sp.i, i) })
	// Merge with the span before it and the one after it.
	if k > 0 && b.spans[k-1].i+b.spans[k-1].n == i {
		k--
		i, n = b.spans[k].i, b.spans[k].n+n
		b.spans = slices.Delete(b.spans, k, k+1)
		work += uint64(len(b.spans) - k)
	}
	if k < len(b.spans) && i+n == b.spans[k].i {
		n += b.spans[k].n
		b.spans = slices.Delete(b.spans, k, k+1)
		work += uint64(len(b.spans) - k)
	}
	switch {
	case i+n == uint64(len(b.arena)):
		b.arena = b.arena[:i] // the end of the arena: it shortens
	case len(b.spans) < maxFreeSpans:
		b.spans = slices.Insert(b.spans, k, span{i, n})
		work += uint64(len(b.spans) - k)
	}
	return work
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reset forgets every block and keeps the arena's capacity for the next.
func (b *blockStore) reset() {
	b.arena = b.arena[:0]
	b.lengths = nil
	b.spans = nil
	b.live, b.most = 0, 0
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

// length returns the length of the live block based at off, or 0 (a freed
// block's is 0).
func (b *blockStore) length(off uint64) uint64 { return b.lengths[off] }

// used is the bytes the arena spans, free spans inside it included (what
// Extism's memory_bytes reports).
func (b *blockStore) used() uint64 { return uint64(len(b.arena)) }

// size is what the store costs the memory limit.
func (b *blockStore) size() uint64 { return uint64(cap(b.arena)) + b.overhead() }

func (b *blockStore) overhead() uint64 {
	return b.most*blockOverhead + uint64(cap(b.spans))*freeSpanBytes
}

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

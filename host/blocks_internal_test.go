package host

import "testing"

// The block store reuses freed space first-fit, merges adjacent free
// spans, shortens the arena when its last block is freed, and keeps size
// honest: the arena's capacity plus the bookkeeping of the most blocks
// live at once.
func TestBlockStoreReuse(t *testing.T) {
	var b blockStore
	const limit = 1 << 20
	alloc := func(n uint64) uint64 {
		t.Helper()
		off, _, ok := b.alloc(n, limit)
		if !ok {
			t.Fatalf("alloc(%d) refused", n)
		}
		return off
	}
	a, c, d := alloc(100), alloc(200), alloc(300)
	if a != 1 || c != 101 || d != 301 {
		t.Fatalf("offsets %d %d %d", a, c, d)
	}
	b.free(c)
	if b.length(c) != 0 || len(b.spans) != 1 {
		t.Fatalf("after free: length %d, spans %v", b.length(c), b.spans)
	}
	if e := alloc(50); e != c { // first fit
		t.Fatalf("alloc(50) = %d, want %d", e, c)
	}
	b.free(c)
	b.free(a) // merges with the span after it
	if len(b.spans) != 1 || b.spans[0] != (span{0, 300}) {
		t.Fatalf("spans %v, want one of 300 bytes at 0", b.spans)
	}
	if e := alloc(300); e != a {
		t.Fatalf("alloc(300) = %d, want %d", e, a)
	}
	b.free(a)
	b.free(d) // the last block: the arena shortens over the span too
	if b.used() != 0 || len(b.spans) != 0 || b.live != 0 {
		t.Fatalf("used %d, spans %v, live %d", b.used(), b.spans, b.live)
	}
	b.free(d) // a second free is ignored
	if want := uint64(cap(b.arena)) + 3*blockOverhead + uint64(cap(b.spans))*freeSpanBytes; b.size() != want {
		t.Fatalf("size %d, want %d", b.size(), want)
	}
	// A freed block's bytes come back zeroed.
	x := alloc(8)
	s, _ := b.slice(x, 8)
	s[3] = 9
	b.free(x)
	x = alloc(8)
	if s, _ := b.slice(x, 8); s[3] != 0 {
		t.Fatal("a reused block is not zeroed")
	}
}

// The free list is bounded: past maxFreeSpans, a freed block that touches
// no span is not reused, and nothing breaks.
func TestBlockStoreFreeListBound(t *testing.T) {
	var b blockStore
	var offs []uint64
	for range 2*maxFreeSpans + 2 {
		off, _, ok := b.alloc(1, 1<<30)
		if !ok {
			t.Fatal("refused")
		}
		offs = append(offs, off)
	}
	for i := 0; i < len(offs)-1; i += 2 {
		b.free(offs[i])
	}
	if len(b.spans) != maxFreeSpans {
		t.Fatalf("%d spans, want %d", len(b.spans), maxFreeSpans)
	}
	off, work, _ := b.alloc(1, 1<<30)
	if off != offs[0] || work != 1+maxFreeSpans-1 {
		t.Fatalf("alloc = %d (work %d), want %d", off, work, offs[0])
	}
}

// The segment graph of a function body: straight-line code charged as
// one, the edges between segments, and the folding of light segments into
// the metering points that charge them.

package instrument

// segment is straight-line code, charged as one. It starts at the
// function's entry, a loop's header, the start of an if's arm, after a
// br_if or after the end of a block or if, and ends at a branch, an if, an
// else or an end. It is charged at its metering point or, when it has
// none, by each segment that always continues into it (see next).
type segment struct {
	// cost is the weight of the segment's instructions; once folded (see
	// meter.fold), the fuel its metering point charges.
	cost int64
	next int32 // the segment it always continues into and pays for, or -1
	up   int32 // meter.last: a later segment of its chain of nexts, or -1
	link int32 // the next in a frame's entries list, or -1
	seen int32 // meter.foldLoop: marks a loop's back edges
	kind byte  // the injection kind of its metering point, or 0 for none
	// check reports that the segment (or one it pays for) leaves the
	// function, calls an import or through a table, or grows a memory or
	// table: its charge tests the count.
	check bool
	// heavy reports an instruction of weight above 1: a call, a grow, a
	// bulk operation. Only a light segment may be charged after it runs.
	heavy bool
	// paid reports a loop header paid for by the segments that enter it.
	paid bool
	done bool // meter.fold
}

// post records an if whose condition's segment src, light and with a
// metering point of its own, is charged at the start of the two arms
// instead: at the first segments of the then-arm, a, and of the else-arm,
// b (an else is added when the if has none).
type post struct{ src, a, b int32 }

// meterAt starts a segment with a metering point of the given kind at
// offset at, and returns it.
func (mt *meter) meterAt(at int, kind byte) int32 {
	s := mt.newSegment()
	mt.segs[s].kind = kind
	mt.inj = append(mt.inj, injection{at: at, kind: kind, seg: s})
	return s
}

func (mt *meter) newSegment() int32 {
	mt.segs = append(mt.segs, segment{next: -1, up: -1, link: -1})
	return int32(len(mt.segs) - 1)
}

// enter records that segment s always continues after the end of frame f.
func (mt *meter) enter(f *frame, s int32) {
	mt.segs[s].link = f.entries
	f.entries = s
}

// exit records that segment s leaves the function at offset at: its charge
// tests the count, which is stored to the global first (local mode).
func (mt *meter) exit(s int32, at int) {
	mt.segs[s].check = true
	mt.inj = append(mt.inj, injection{at: at, kind: injFlush})
}

// call records that segment s calls a function at offset at, the call's
// immediates ending at end. out reports a call that may leave the module:
// to an import, or call_indirect. Its charge then tests the count; a
// defined function tests it on entry.
func (mt *meter) call(s int32, at, end int, out bool) {
	mt.segs[s].check = mt.segs[s].check || out
	mt.inj = append(mt.inj, injection{at: at, kind: injFlush}, injection{at: end, kind: injReload})
}

// join returns the segment that runs after the end of frame f (popped), cur
// being the segment that falls through to the end, or -1.
func (mt *meter) join(f *frame, cur int32, at int) int32 {
	switch {
	case f.kind == opLoop:
		// Branches to a loop go to its header: only falling through
		// reaches its end.
		mt.foldLoop(f)
		return cur
	case f.joined || f.kind == opIf && f.live && f.post < 0:
		// Reached conditionally: by br_if, br_table, or past an if
		// without an else.
		return mt.meterAt(at, injCharge)
	case f.entries < 0:
		return cur // falls through, or unreachable
	case cur < 0 && mt.segs[f.entries].link < 0:
		return f.entries // one way in: that segment goes on
	}
	j := mt.newSegment()
	if cur >= 0 {
		mt.setNext(cur, j)
	}
	for e := f.entries; e >= 0; e = mt.segs[e].link {
		mt.setNext(e, j)
	}
	return j
}

// foldLoop makes the segments that enter loop f (ended) pay for its
// header when they all always go there: the one that falls into the loop
// and those that end in a br to it; those charges then test the count. It
// does not when a br_if or br_table goes to the header, or when the header
// always goes on, segment after segment, to a br back to itself: such a
// loop has no other metering point.
func (mt *meter) foldLoop(f *frame) {
	if !f.live || f.joined {
		return
	}
	mt.gen++
	for e := f.entries; e >= 0; e = mt.segs[e].link {
		mt.segs[e].seen = mt.gen
	}
	if mt.segs[mt.last(f.head)].seen == mt.gen {
		return
	}
	mt.segs[f.head].paid = true
	if f.pre >= 0 {
		mt.setNext(f.pre, f.head)
	}
	for e := f.entries; e >= 0; e = mt.segs[e].link {
		mt.setNext(e, f.head)
	}
}

// setNext makes segment s, the last of its chain, continue into segment n.
func (mt *meter) setNext(s, n int32) {
	mt.segs[s].next = n
	mt.segs[s].up = n
}

// last returns the last segment of the chain of nexts from segment s. The
// chains form a forest that grows only at its roots; up pointers, halved
// on the way, keep the walks short.
func (mt *meter) last(s int32) int32 {
	for {
		u := mt.segs[s].up
		if u < 0 {
			return s
		}
		if uu := mt.segs[u].up; uu >= 0 {
			mt.segs[s].up = uu
		}
		s = u
	}
}

// fold sets each segment's cost to the fuel its metering point charges:
// its own cost plus that of the segments it always continues into and pays
// for (their need for a check too); then a light segment that ends in an if
// passes that on to the if's arms (see post).
func (mt *meter) fold() {
	for i := range mt.segs {
		st := mt.stack[:0]
		for s := int32(i); s >= 0 && !mt.segs[s].done; s = mt.segs[s].next {
			mt.segs[s].done = true
			st = append(st, s)
		}
		for j := len(st) - 1; j >= 0; j-- {
			s := &mt.segs[st[j]]
			if s.next >= 0 {
				n := &mt.segs[s.next]
				s.cost += n.cost
				s.check = s.check || n.check
			}
		}
		mt.stack = st
	}
	for _, p := range mt.posts {
		c := mt.segs[p.src].cost
		mt.segs[p.src].cost = 0
		mt.segs[p.a].cost += c
		mt.segs[p.b].cost += c
	}
}

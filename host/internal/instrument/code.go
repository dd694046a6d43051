package instrument

import "math"

// Cost model: every instruction costs costDefault, except those below. See
// the package documentation for where the costs are charged.
const (
	costDefault = 1
	// costCall is the cost of call and call_indirect; the callee's own
	// instructions are charged at its entry.
	costCall = 5
	// costMemoryGrow is the cost of memory.grow. It is not proportional to
	// the pages requested: a failing grow must stay cheap, and the pages a
	// module can grow to are bounded by its maximum.
	costMemoryGrow = 1000
	// costTableGrow is the cost of table.grow; tables are capped too.
	costTableGrow = 100
	// costBulk is the fixed part of the cost of memory.copy, memory.fill,
	// memory.init, table.copy, table.fill and table.init. Their length
	// operand adds one unit per 1<<bulkMemoryShift bytes (memory) or per
	// 1<<bulkTableShift elements (tables), charged just before the operation
	// runs.
	costBulk        = 10
	bulkMemoryShift = 6
	bulkTableShift  = 3
	// costStructure is the cost of block, loop, else and end, which mark
	// structure and execute no work.
	costStructure = 0
)

// Opcodes the rewriter emits or treats specially.
const (
	opUnreachable  = 0x00
	opBlock        = 0x02
	opLoop         = 0x03
	opIf           = 0x04
	opElse         = 0x05
	opEnd          = 0x0b
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opLocalTee     = 0x22
	opGlobalGet    = 0x23
	opGlobalSet    = 0x24
	opCall         = 0x10
	opDrop         = 0x1a
	opSelect       = 0x1b
	opI32Const     = 0x41
	opI64Const     = 0x42
	opI64LtS       = 0x53
	opI64GeS       = 0x59
	opMemoryGrow   = 0x40
	opI64Sub       = 0x7d
	opI64ShrU      = 0x88
	opI64ExtendI32 = 0xad // i64.extend_i32_u
	blockEmpty     = 0x40
)

// frame is an open block, loop or if, or the function body.
type frame struct {
	kind byte // opBlock, opLoop, opIf, opElse, or 0 for the function body
	// live reports that reachable code entered the frame.
	live bool
	// joined reports that reachable code may reach the frame's label other
	// than by always getting there: by br_if or br_table, or past an if
	// without an else. For a block or an if the code after the end then
	// starts a segment with its own metering point; for a loop, so does the
	// header.
	joined bool
	// entries heads the list, linked through segment.link, of the segments
	// that always go to the frame's label: for a block or an if, those
	// ending in a br to it, an if's then-arm when it falls through and the
	// else added for a post; for a loop, those ending in a br to its
	// header. When nothing else reaches the label (not joined) each of them
	// pays for the segment there, which then has no metering point.
	entries int32
	head    int32 // a loop: its header's segment; an if: the then-arm's first
	pre     int32 // a loop: the segment that falls into it, or -1
	post    int32 // an if: its index in meter.posts, or -1
	scope   int   // the loop whose size the frame's instructions count to (modeAuto)
	// open is the dominator depth of the code before the frame (see
	// meter.newBlock); minPred the least of the branches to a block's or an
	// if's label and of its end; arms which arms of an if reach its end
	// (armThen, armElse).
	open, minPred int64
	arms          uint8
	// preds counts the ways into the frame's label: branches to it (each
	// br_table label counted) and its end, or for the function, its
	// returns; each is a predecessor of one block for the compiler.
	preds uint64
}

// The arms of an if, in frame.arms.
const (
	armThen = 1 << iota
	armElse
)

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

// injection is a metering sequence inserted before the instruction at
// offset at.
type injection struct {
	at    int
	kind  byte
	seg   int32 // injEntry, injCharge, injLoop: the segment charged
	shift uint8 // injDynamic
}

// Injection kinds.
const (
	injEntry   = iota // load the count (local mode), charge the entry segment and test
	injCharge         // charge the segment that starts here
	injLoop           // charge a loop header's segment (unless paid) and test
	injElse           // add an else arm to an if and charge it
	injDynamic        // charge a bulk operation's length
	injFlush          // before a call or an exit: global = $fuel (local mode)
	injReload         // after a call: $fuel = global (local mode)
)

// Metering modes. Both charge the same costs at the same points; they
// differ in where the running count lives inside a function.
//
// In global mode every charge is a read-modify-write of the global. Short,
// and the global holds every charge made, but in a tight loop the store and
// the next charge's load form a dependency chain through memory.
//
// In local mode the function keeps the count in a local, $fuel: loaded on
// entry and after every call, stored back before every call and every exit
// (and before a fuel trap), so a loop's charges stay in registers. After a
// trap other than fuel exhaustion the global then holds the count as of the
// last call or entry: still deterministic. In large
// functions the extra loop-carried value costs the compiler registers, so
// local mode is used only for functions with a small loop (modeAuto).
const (
	modeAuto = iota
	modeGlobal
	modeLocal
)

// localModeMaxLoopCost is the loop size at or under which modeAuto keeps
// the fuel in a local: the weight of the instructions directly in the loop
// (not in nested loops). See the package's benchmarks.
const localModeMaxLoopCost = 256

// meter instruments function bodies. It is reused across the functions of
// one module to keep its slices.
type meter struct {
	m      *module
	fuel   uint32 // index of the fuel global
	floor  uint32 // index of the floor global, which tests compare against
	yield  uint32 // index of the yield function, which a test calls below the floor
	mode   int
	frames []frame
	segs   []segment
	posts  []post
	stack  []int32 // meter.fold
	gen    int32   // for segment.seen
	loops  []int64 // per loop, its size; loops[0] is the code outside loops
	inj    []injection
	// fnTargets and moduleTargets count br_table labels, each br_table's
	// default included: in the current function and in all so far.
	fnTargets, moduleTargets uint64
	// depth is the dominator depth of the block being read (see
	// newBlock); fnDepths and moduleDepths add up the depths of the blocks
	// of the current function and of all so far.
	depth                  int64
	fnDepths, moduleDepths uint64
	// fnLabelBranches is the most ways into one label of the function.
	fnLabelBranches uint64
}

// body appends the instrumented version of the function body b (the bytes
// after its size) to dst. fn is the function's index in the function space.
func (mt *meter) body(dst []byte, b rawSection, fn uint32) ([]byte, error) {
	m := mt.m
	r := newReader(m.wasm, b.start, b.end)
	numParams := m.numParams[m.funcTypes[fn-m.importedFuncs]]

	// Locals.
	groups, err := r.count(2)
	if err != nil {
		return nil, err
	}
	groupsStart := r.pos
	numLocals := uint64(numParams)
	for i := 0; i < groups; i++ {
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		if _, err := readValType(r); err != nil {
			return nil, err
		}
		numLocals += uint64(n)
		if numLocals > maxLocals {
			return nil, &LimitError{Limit: LimitLocals, Value: numLocals, Max: maxLocals}
		}
	}
	codeStart := r.pos

	// Instructions. cur is the segment being read, -1 in unreachable code,
	// whose instructions are not charged.
	mt.frames = append(mt.frames[:0], frame{kind: 0, live: true, entries: -1, head: -1, pre: -1, post: -1})
	mt.loops = append(mt.loops[:0], 0)
	mt.segs = mt.segs[:0]
	mt.posts = mt.posts[:0]
	mt.inj = mt.inj[:0]
	mt.fnTargets = 0
	mt.depth, mt.fnDepths, mt.fnLabelBranches = 0, 0, 0
	cur := mt.meterAt(codeStart, injEntry)
	if err := mt.test(); err != nil {
		return nil, err
	}
	dynamic := false
	for len(mt.frames) > 0 {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return nil, r.errorf(ErrMalformed, "function body ends before its final end")
		}
		top := &mt.frames[len(mt.frames)-1]
		scope := top.scope
		cost := int64(costDefault)
		dynShift := -1
		grow := false
		var fill uint32 // the 0xfc sub-opcode
		next := cur     // the segment after this instruction
		switch {
		case op == opUnreachable:
			next = -1
		case op == 0x01, op == 0x1a, op == 0x1b, op == 0xd1,
			op >= 0x45 && op <= 0xc4:
			// nop, drop, select, ref.is_null, numeric: no immediates.
		case op == opBlock, op == opIf, op == opLoop:
			if err := mt.blockType(r); err != nil {
				return nil, err
			}
			if len(mt.frames) >= maxNesting {
				return nil, &LimitError{Limit: LimitBlockNesting, Value: uint64(len(mt.frames)) + 1, Max: maxNesting}
			}
			f := frame{kind: op, live: cur >= 0, entries: -1, head: -1, pre: -1, post: -1, scope: scope,
				open: mt.depth, minPred: math.MaxInt64}
			switch {
			case op == opBlock:
				cost = costStructure
			case op == opLoop:
				cost = costStructure
				f.scope = len(mt.loops)
				mt.loops = append(mt.loops, 0)
				if f.live {
					f.pre = cur
					f.head = mt.meterAt(r.pos, injLoop)
					next = f.head
					err = mt.enterBlock(mt.depth + 1) // the header
				}
			case f.live:
				// The then-arm and the else-arm (or the block an if
				// without else goes through) follow the condition.
				if err = mt.newBlock(mt.depth + 1); err == nil {
					err = mt.enterBlock(mt.depth + 1)
				}
				f.head = mt.meterAt(r.pos, injCharge) // the then-arm
				next = f.head
				if c := mt.segs[cur]; c.kind == injCharge && !c.heavy && !c.check {
					f.post = int32(len(mt.posts))
					mt.posts = append(mt.posts, post{src: cur, a: f.head, b: -1})
				}
			}
			if err == nil && f.live && op != opBlock {
				err = mt.test()
			}
			if err != nil {
				return nil, err
			}
			mt.frames = append(mt.frames, f)
		case op == opElse:
			if top.kind != opIf {
				r.pos = at
				return nil, r.errorf(ErrMalformed, "else without if")
			}
			cost = costStructure
			if cur >= 0 {
				if err := mt.pred(top, mt.depth); err != nil {
					return nil, err
				}
			}
			top.kind = opElse
			if cur >= 0 {
				mt.enter(top, cur)
			}
			next = -1
			if top.live {
				next = mt.meterAt(r.pos, injCharge)
				mt.depth = top.open + 1 // the else-arm's block, counted at the if
				if err := mt.test(); err != nil {
					return nil, err
				}
			}
			if top.post >= 0 {
				mt.posts[top.post].b = next
			}
		case op == opEnd:
			cost = costStructure
			f := *top
			mt.frames = mt.frames[:len(mt.frames)-1]
			if cur >= 0 && f.kind != opLoop { // a loop's end is not its label
				if err := mt.pred(&f, mt.depth); err != nil {
					return nil, err
				}
			}
			if f.kind == opIf && f.post >= 0 {
				// The else added for the post always goes on past the end.
				e := mt.meterAt(at, injElse)
				mt.posts[f.post].b = e
				mt.enter(&f, e)
				// Its block and its charge's test.
				if err := mt.predArm(&f, armElse, f.open+2); err != nil {
					return nil, err
				}
				if err := mt.countTest(f.open + 1); err != nil {
					return nil, err
				}
			} else if f.kind == opIf && f.live {
				// The else-arm's block.
				if err := mt.predArm(&f, armElse, f.open+1); err != nil {
					return nil, err
				}
			}
			if len(mt.frames) > 0 {
				injs := len(mt.inj)
				next = mt.join(&f, cur, r.pos)
				if err := mt.endBlock(&f, cur >= 0); err != nil {
					return nil, err
				}
				if len(mt.inj) > injs && next >= 0 {
					if err := mt.test(); err != nil {
						return nil, err
					}
				}
			} else if cur >= 0 {
				mt.exit(cur, at)
			}
		case op == 0x0f: // return
			if cur >= 0 {
				mt.exit(cur, at)
				err = mt.pred(&mt.frames[0], mt.depth)
			}
			next = -1
		case op == 0x0c, op == 0x0d: // br, br_if
			var t int
			if t, err = mt.label(r); err != nil || cur < 0 {
				break
			}
			switch f := &mt.frames[t]; {
			case t == 0:
				mt.exit(cur, at)
			case op == 0x0c:
				mt.enter(f, cur)
			default:
				f.joined = true
			}
			err = mt.pred(&mt.frames[t], mt.depth)
			if op == 0x0c {
				next = -1
			} else if err == nil {
				next = mt.meterAt(r.pos, injCharge)
				if err = mt.enterBlock(mt.depth + 1); err == nil {
					err = mt.test()
				}
			}
		case op == 0x0e: // br_table
			var n int
			if n, err = r.count(1); err != nil {
				return nil, err
			}
			if err := mt.countTargets(uint64(n) + 1); err != nil {
				return nil, err
			}
			exits := false
			for i := 0; i <= n && err == nil; i++ {
				var t int
				switch t, err = mt.label(r); {
				case err != nil || cur < 0:
				case t == 0:
					exits = true
				default:
					mt.frames[t].joined = true
				}
				if err == nil && cur >= 0 {
					// Each label has its trampoline block.
					if err = mt.pred(&mt.frames[t], mt.depth+1); err == nil {
						err = mt.newBlock(mt.depth + 1)
					}
				}
			}
			if exits {
				mt.exit(cur, at)
			}
			next = -1
		case op == 0x10: // call
			cost = costCall
			var x uint32
			if x, err = r.u32(); err == nil && x >= m.numFuncs() {
				err = r.errorf(ErrMalformed, "function index %d out of range", x)
			}
			if err == nil && cur >= 0 {
				mt.call(cur, at, r.pos, x < m.importedFuncs)
			}
		case op == 0x11: // call_indirect
			cost = costCall
			if err = mt.index(r, uint32(len(m.numParams)), "type"); err == nil {
				err = mt.index(r, m.numTables(), "table")
			}
			if err == nil && cur >= 0 {
				mt.call(cur, at, r.pos, true)
			}
		case op == 0x12, op == 0x13:
			return nil, mt.unsupported(r, at, op, "tail calls")
		case op == 0x14, op == 0x15, op == 0xd3, op == 0xd4, op == 0xd5, op == 0xd6:
			return nil, mt.unsupported(r, at, op, "typed function references")
		case op >= 0x06 && op <= 0x0a, op == 0x18, op == 0x19, op == 0x1f:
			return nil, mt.unsupported(r, at, op, "exception handling")
		case op == 0x1c: // select t*
			var n int
			if n, err = r.count(1); err != nil {
				return nil, err
			}
			if n != 1 {
				return nil, r.errorf(ErrMalformed, "typed select with %d types", n)
			}
			_, err = readValType(r)
		case op >= 0x20 && op <= 0x22: // local.get, local.set, local.tee
			var x uint32
			if x, err = r.u32(); err == nil && uint64(x) >= numLocals {
				err = r.errorf(ErrMalformed, "local index %d out of range", x)
			}
		case op == 0x23, op == 0x24: // global.get, global.set
			// The fuel global is not yet in m.numGlobals: the guest cannot
			// name it.
			err = mt.index(r, m.numGlobals(), "global")
		case op == 0x25, op == 0x26: // table.get, table.set
			err = mt.index(r, m.numTables(), "table")
		case op >= 0x28 && op <= 0x3e: // loads and stores
			err = mt.memarg(r)
		case op == 0x3f, op == 0x40: // memory.size, memory.grow
			if op == 0x40 {
				cost, grow = costMemoryGrow, true
			}
			err = m.memIndex(r)
		case op == 0x41:
			_, err = r.sleb(32)
		case op == 0x42:
			_, err = r.sleb(64)
		case op == 0x43:
			err = r.skip(4)
		case op == 0x44:
			err = r.skip(8)
		case op == 0xd0: // ref.null
			_, err = readRefType(r)
		case op == 0xd2: // ref.func
			err = mt.index(r, m.numFuncs(), "function")
		case op == 0xfc:
			var sub uint32
			if sub, err = r.u32(); err != nil {
				return nil, err
			}
			fill = sub
			switch sub {
			case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncation
			case 8: // memory.init
				cost, dynShift = costBulk, bulkMemoryShift
				if err = mt.dataIndex(r); err == nil {
					err = m.memIndex(r)
				}
			case 9: // data.drop
				err = mt.dataIndex(r)
			case 13: // elem.drop
				err = mt.index(r, m.numElems, "element segment")
			case 10: // memory.copy
				cost, dynShift = costBulk, bulkMemoryShift
				if err = m.memIndex(r); err == nil {
					err = m.memIndex(r)
				}
			case 11: // memory.fill
				cost, dynShift = costBulk, bulkMemoryShift
				err = m.memIndex(r)
			case 12: // table.init
				cost, dynShift = costBulk, bulkTableShift
				if err = mt.index(r, m.numElems, "element segment"); err == nil {
					err = mt.index(r, m.numTables(), "table")
				}
			case 14: // table.copy
				cost, dynShift = costBulk, bulkTableShift
				if err = mt.index(r, m.numTables(), "table"); err == nil {
					err = mt.index(r, m.numTables(), "table")
				}
			case 15: // table.grow
				cost, grow = costTableGrow, true
				err = mt.index(r, m.numTables(), "table")
			case 16: // table.size
				err = mt.index(r, m.numTables(), "table")
			case 17: // table.fill
				cost, dynShift = costBulk, bulkTableShift
				err = mt.index(r, m.numTables(), "table")
			default:
				r.pos = at
				return nil, r.errorf(ErrMalformed, "unknown opcode 0xfc %d", sub)
			}
		case op == 0xfd:
			return nil, mt.unsupported(r, at, op, "SIMD")
		case op == 0xfe:
			return nil, mt.unsupported(r, at, op, "threads")
		case op == 0xfb:
			return nil, mt.unsupported(r, at, op, "garbage collection")
		default:
			r.pos = at
			return nil, r.errorf(ErrMalformed, "unknown opcode %#x", op)
		}
		if err != nil {
			return nil, err
		}
		mt.loops[scope] += cost
		if cur >= 0 {
			mt.segs[cur].cost += cost
			mt.segs[cur].heavy = mt.segs[cur].heavy || cost > costDefault
			mt.segs[cur].check = mt.segs[cur].check || grow
			if dynShift >= 0 {
				dynamic = true
				mt.inj = append(mt.inj, injection{at: at, kind: injDynamic, shift: uint8(dynShift)})
				if err := mt.test(); err != nil {
					return nil, err
				}
				if op == 0xfc && (fill == 11 || fill == 17) {
					// The fill's loop: its entry, the loop, and the block
					// after it, which the entry may skip to.
					d := mt.depth
					if err := mt.newBlock(d + 2); err != nil {
						return nil, err
					}
					if err := mt.newBlock(d + 1); err != nil {
						return nil, err
					}
					if err := mt.enterBlock(d + 1); err != nil {
						return nil, err
					}
				}
			}
		}
		cur = next
	}
	if r.remaining() != 0 {
		return nil, r.errorf(ErrMalformed, "%d bytes after the function's final end", r.remaining())
	}
	mt.fold()

	local := mt.mode == modeLocal
	if mt.mode == modeAuto {
		for _, c := range mt.loops[1:] {
			local = local || c <= localModeMaxLoopCost
		}
	}

	// Emit: the locals with the metering locals appended, then the code
	// with the metering sequences spliced in.
	fuel := uint32(numLocals) // $fuel in local mode, a scratch in global mode
	len32 := fuel + 1
	extra := 1
	if dynamic {
		extra = 2
	}
	dst = appendULEB(dst, uint64(groups+extra))
	dst = append(dst, m.wasm[groupsStart:codeStart]...)
	dst = append(dst, 1, typeI64)
	if dynamic {
		dst = append(dst, 1, typeI32)
	}
	prev := codeStart
	for _, in := range mt.inj {
		dst = append(dst, m.wasm[prev:in.at]...)
		prev = in.at
		switch {
		case in.kind == injEntry || in.kind == injCharge || in.kind == injLoop:
			if in.kind == injEntry && local {
				dst = mt.appendReload(dst, fuel)
			}
			s := &mt.segs[in.seg]
			cost := s.cost
			if s.paid {
				cost = 0
			}
			dst = mt.appendCharge(dst, cost, s.check || in.kind != injCharge, fuel, local)
		case in.kind == injElse:
			if s := &mt.segs[in.seg]; s.cost != 0 {
				dst = append(dst, opElse)
				dst = mt.appendCharge(dst, s.cost, s.check, fuel, local)
			}
		case in.kind == injDynamic:
			dst = mt.appendDynamicCharge(dst, in.shift, fuel, len32, local)
		case in.kind == injFlush && local:
			dst = mt.appendFlush(dst, fuel)
		case in.kind == injReload && local:
			dst = mt.appendReload(dst, fuel)
		}
	}
	dst = append(dst, m.wasm[prev:b.end]...)
	return dst, nil
}

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

func (mt *meter) unsupported(r *reader, at int, op byte, what string) error {
	r.pos = at
	return r.errorf(ErrUnsupported, "opcode %#x (%s)", op, what)
}

func (mt *meter) index(r *reader, limit uint32, what string) error {
	x, err := r.u32()
	if err != nil {
		return err
	}
	if x >= limit {
		return r.errorf(ErrMalformed, "%s index %d out of range", what, x)
	}
	return nil
}

// label reads a branch's label and returns the index in mt.frames of the
// frame it names: 0 for the function body, whose label leaves the function.
func (mt *meter) label(r *reader) (int, error) {
	x, err := r.u32()
	if err != nil {
		return 0, err
	}
	if x >= uint32(len(mt.frames)) {
		return 0, r.errorf(ErrMalformed, "label %d out of range", x)
	}
	return len(mt.frames) - 1 - int(x), nil
}

// dataIndex reads a data segment index, which needs the data count section.
func (mt *meter) dataIndex(r *reader) error {
	if !mt.m.hasDataCnt {
		return r.errorf(ErrMalformed, "data segment instruction without a data count section")
	}
	return mt.index(r, mt.m.dataCount, "data segment")
}

// memIndex reads a memory index (a reserved zero byte before multi-memory).
func (m *module) memIndex(r *reader) error {
	x, err := r.u32()
	if err != nil {
		return err
	}
	if x != 0 {
		return r.errorf(ErrUnsupported, "memory index %d (multiple memories)", x)
	}
	if m.numMems() == 0 {
		return r.errorf(ErrMalformed, "memory instruction without a memory")
	}
	return nil
}

func (mt *meter) memarg(r *reader) error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align >= 64 {
		return r.errorf(ErrUnsupported, "memory argument with a memory index (multiple memories)")
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if mt.m.numMems() == 0 {
		return r.errorf(ErrMalformed, "memory instruction without a memory")
	}
	return nil
}

func (mt *meter) blockType(r *reader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b == blockEmpty {
		return nil
	}
	if b >= 0x40 && b < 0x80 {
		r.pos--
		_, err := readValType(r)
		return err
	}
	r.pos--
	x, err := r.sleb(33)
	if err != nil {
		return err
	}
	if x < 0 || x >= int64(len(mt.m.numParams)) {
		return r.errorf(ErrMalformed, "block type index %d out of range", x)
	}
	return nil
}

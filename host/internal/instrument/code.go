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
	// stateOps collects the instructions met that change tables or
	// segments (Info.StateOps).
	stateOps stateOpSet
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
			if op == 0x26 {
				mt.stateOps |= opTableSet
			}
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
				mt.stateOps |= opDataDrop
				err = mt.dataIndex(r)
			case 13: // elem.drop
				mt.stateOps |= opElemDrop
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
				mt.stateOps |= opTableInit
				cost, dynShift = costBulk, bulkTableShift
				if err = mt.index(r, m.numElems, "element segment"); err == nil {
					err = mt.index(r, m.numTables(), "table")
				}
			case 14: // table.copy
				mt.stateOps |= opTableCopy
				cost, dynShift = costBulk, bulkTableShift
				if err = mt.index(r, m.numTables(), "table"); err == nil {
					err = mt.index(r, m.numTables(), "table")
				}
			case 15: // table.grow
				mt.stateOps |= opTableGrow
				cost, grow = costTableGrow, true
				err = mt.index(r, m.numTables(), "table")
			case 16: // table.size
				err = mt.index(r, m.numTables(), "table")
			case 17: // table.fill
				mt.stateOps |= opTableFill
				cost, dynShift = costBulk, bulkTableShift
				err = mt.index(r, m.numTables(), "table")
			default:
				r.pos = at
				return nil, r.errorf(ErrMalformed, "unknown opcode 0xfc %d", sub)
			}
		case op == 0xfd: // SIMD
			err = mt.simd(r, at)
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

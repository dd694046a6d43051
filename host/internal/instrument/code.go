package instrument

// Cost model: every instruction costs costDefault, except those below.
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
	opI64Const     = 0x42
	opI64LtS       = 0x53
	opI64Sub       = 0x7d
	opI64ShrU      = 0x88
	opI64ExtendI32 = 0xad // i64.extend_i32_u
	blockEmpty     = 0x40
)

type frame struct {
	kind  byte // opBlock, opLoop, opIf, opElse, or 0 for the function body
	scope int  // index of the metering scope the frame's instructions belong to
}

// injection is a metering sequence inserted before the instruction at
// offset at.
type injection struct {
	at    int
	kind  byte
	scope int   // injCharge, injEntry: the scope whose cost is charged
	shift uint8 // injDynamic
}

// Injection kinds.
const (
	injEntry   = iota // charge the function's scope
	injCharge         // charge a loop's scope
	injDynamic        // charge a bulk operation's length
	injFlush          // before a call or an exit: global = $fuel (local mode)
	injReload         // after a call: $fuel = global (local mode)
)

// Metering modes. Both charge the same costs at the same points; they
// differ in where the running count lives inside a function.
//
// In global mode every charge is a read-modify-write of the global. Short
// and exact at every instruction, but in a tight loop the store and the
// next iteration's load form a dependency chain through memory.
//
// In local mode the function keeps the count in a local, $fuel: loaded on
// entry and after every call, stored back before every call and every exit
// (and before a fuel trap), so a loop's charge stays in registers. After a
// trap other than fuel exhaustion the global then holds the count as of the
// last call or entry: still deterministic, and still ≥ 0. In large
// functions the extra loop-carried value costs the compiler registers, so
// local mode is used only for functions with a small loop (modeAuto).
const (
	modeAuto = iota
	modeGlobal
	modeLocal
)

// localModeMaxLoopCost is the loop cost at or under which modeAuto keeps
// the fuel in a local. Measured on wazero 1.12 (amd64, BenchmarkMeteredLoop):
// a Go loop costing 56 per iteration runs 30% slower metered in global mode,
// 17% in local mode; SHA-256 (loop costs in the thousands) 2% slower in
// global mode, 7% in local mode.
const localModeMaxLoopCost = 256

// meter instruments function bodies. It is reused across the functions of
// one module to keep its slices.
type meter struct {
	m      *module
	fuel   uint32 // index of the fuel global
	mode   int
	frames []frame
	costs  []int64 // per scope
	inj    []injection
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
			return nil, r.errorf(ErrLimits, "more than %d locals", maxLocals)
		}
	}
	codeStart := r.pos

	// Instructions.
	mt.frames = append(mt.frames[:0], frame{kind: 0, scope: 0})
	mt.costs = append(mt.costs[:0], 0)
	mt.inj = append(mt.inj[:0], injection{at: codeStart, kind: injEntry, scope: 0})
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
		switch {
		case op == 0x00, op == 0x01, op == 0x1a, op == 0x1b, op == 0xd1,
			op >= 0x45 && op <= 0xc4:
			// unreachable, nop, drop, select, ref.is_null, numeric: no
			// immediates.
		case op == opBlock, op == opIf, op == opLoop:
			if err := mt.blockType(r); err != nil {
				return nil, err
			}
			if len(mt.frames) >= maxNesting {
				return nil, r.errorf(ErrLimits, "blocks nested deeper than %d", maxNesting)
			}
			f := frame{kind: op, scope: scope}
			if op == opLoop {
				f.scope = len(mt.costs)
				mt.costs = append(mt.costs, 0)
				mt.inj = append(mt.inj, injection{at: r.pos, kind: injCharge, scope: f.scope})
			}
			mt.frames = append(mt.frames, f)
		case op == opElse:
			if top.kind != opIf {
				r.pos = at
				return nil, r.errorf(ErrMalformed, "else without if")
			}
			top.kind = opElse
		case op == opEnd:
			mt.frames = mt.frames[:len(mt.frames)-1]
			if len(mt.frames) == 0 {
				mt.inj = append(mt.inj, injection{at: at, kind: injFlush})
			}
		case op == 0x0f: // return
			mt.inj = append(mt.inj, injection{at: at, kind: injFlush})
		case op == 0x0c, op == 0x0d: // br, br_if
			var exits bool
			if exits, err = mt.label(r); exits {
				mt.inj = append(mt.inj, injection{at: at, kind: injFlush})
			}
		case op == 0x0e: // br_table
			var n int
			if n, err = r.count(1); err != nil {
				return nil, err
			}
			exits := false
			for i := 0; i <= n && err == nil; i++ {
				var e bool
				e, err = mt.label(r)
				exits = exits || e
			}
			if exits {
				mt.inj = append(mt.inj, injection{at: at, kind: injFlush})
			}
		case op == 0x10: // call
			cost = costCall
			if err = mt.index(r, m.numFuncs(), "function"); err == nil {
				mt.inj = append(mt.inj, injection{at: at, kind: injFlush}, injection{at: r.pos, kind: injReload})
			}
		case op == 0x11: // call_indirect
			cost = costCall
			if err = mt.index(r, uint32(len(m.numParams)), "type"); err == nil {
				err = mt.index(r, m.numTables(), "table")
			}
			if err == nil {
				mt.inj = append(mt.inj, injection{at: at, kind: injFlush}, injection{at: r.pos, kind: injReload})
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
				cost = costMemoryGrow
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
				cost = costTableGrow
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
		mt.costs[scope] += cost
		if dynShift >= 0 {
			dynamic = true
			mt.inj = append(mt.inj, injection{at: at, kind: injDynamic, shift: uint8(dynShift)})
		}
	}
	if r.remaining() != 0 {
		return nil, r.errorf(ErrMalformed, "%d bytes after the function's final end", r.remaining())
	}

	local := mt.mode == modeLocal
	if mt.mode == modeAuto {
		for _, c := range mt.costs[1:] {
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
		case in.kind == injEntry && local:
			dst = mt.appendReload(dst, fuel)
			dst = mt.appendCharge(dst, mt.costs[in.scope], fuel, true)
		case in.kind == injEntry || in.kind == injCharge:
			dst = mt.appendCharge(dst, mt.costs[in.scope], fuel, local)
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

// appendReload appends: $fuel = global.
func (mt *meter) appendReload(dst []byte, fuel uint32) []byte {
	dst = append(dst, opGlobalGet)
	dst = appendULEB(dst, uint64(mt.fuel))
	dst = append(dst, opLocalSet)
	return appendULEB(dst, uint64(fuel))
}

// appendFlush appends: global = $fuel.
func (mt *meter) appendFlush(dst []byte, fuel uint32) []byte {
	dst = append(dst, opLocalGet)
	dst = appendULEB(dst, uint64(fuel))
	dst = append(dst, opGlobalSet)
	return appendULEB(dst, uint64(mt.fuel))
}

// appendLoad appends the running count: local.get $fuel or global.get.
func (mt *meter) appendLoad(dst []byte, fuel uint32, local bool) []byte {
	if local {
		dst = append(dst, opLocalGet)
		return appendULEB(dst, uint64(fuel))
	}
	dst = append(dst, opGlobalGet)
	return appendULEB(dst, uint64(mt.fuel))
}

// appendCharge appends: count -= cost; if count < 0 { unreachable }. In
// global mode that is
//
//	global.get; i64.const cost; i64.sub; local.tee $t; global.set
//	local.get $t; i64.const 0; i64.lt_s; if; unreachable; end
//
// and in local mode
//
//	local.get $fuel; i64.const cost; i64.sub; local.tee $fuel
//	i64.const 0; i64.lt_s; if; local.get $fuel; global.set; unreachable; end
func (mt *meter) appendCharge(dst []byte, cost int64, fuel uint32, local bool) []byte {
	dst = mt.appendLoad(dst, fuel, local)
	dst = append(dst, opI64Const)
	dst = appendSLEB(dst, cost)
	dst = append(dst, opI64Sub)
	return mt.appendCheck(dst, fuel, local)
}

// appendDynamicCharge appends, before a bulk operation whose i32 length is
// on top of the stack: count -= uint64(length) >> shift; if count < 0 {
// unreachable }. The length stays on the stack.
func (mt *meter) appendDynamicCharge(dst []byte, shift uint8, fuel, len32 uint32, local bool) []byte {
	dst = append(dst, opLocalTee)
	dst = appendULEB(dst, uint64(len32))
	dst = mt.appendLoad(dst, fuel, local)
	dst = append(dst, opLocalGet)
	dst = appendULEB(dst, uint64(len32))
	dst = append(dst, opI64ExtendI32, opI64Const, shift, opI64ShrU, opI64Sub)
	return mt.appendCheck(dst, fuel, local)
}

// appendCheck appends, with the new count on the stack, its store and the
// check: if count < 0 { unreachable }, the global holding the count.
func (mt *meter) appendCheck(dst []byte, fuel uint32, local bool) []byte {
	dst = append(dst, opLocalTee)
	dst = appendULEB(dst, uint64(fuel))
	if local {
		dst = append(dst, opI64Const, 0, opI64LtS, opIf, blockEmpty)
		dst = mt.appendFlush(dst, fuel)
		return append(dst, opUnreachable, opEnd)
	}
	dst = append(dst, opGlobalSet)
	dst = appendULEB(dst, uint64(mt.fuel))
	dst = append(dst, opLocalGet)
	dst = appendULEB(dst, uint64(fuel))
	return append(dst, opI64Const, 0, opI64LtS, opIf, blockEmpty, opUnreachable, opEnd)
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

// label reads a branch's label and reports whether it leaves the function.
func (mt *meter) label(r *reader) (exits bool, err error) {
	x, err := r.u32()
	if err != nil {
		return false, err
	}
	if x >= uint32(len(mt.frames)) {
		return false, r.errorf(ErrMalformed, "label %d out of range", x)
	}
	return x == uint32(len(mt.frames))-1, nil
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

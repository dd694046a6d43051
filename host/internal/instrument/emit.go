package instrument

// The code the meter appends to a function body: fuel charges and checks,
// in local or global mode, and the yield function.

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

// appendCharge appends a segment's charge: count -= cost, and when check
// is set, if count < floor { yield }. Unchecked, that is
//
//	global.get; i64.const cost; i64.sub; global.set
//	local.get $fuel; i64.const cost; i64.sub; local.set $fuel
//
// in global and local mode; checked,
//
//	global.get; i64.const cost; i64.sub; local.tee $t; global.set
//	local.get $t; global.get $floor; i64.lt_s; if; call $yield; end
//
//	local.get $fuel; i64.const cost; i64.sub; local.tee $fuel
//	global.get $floor; i64.lt_s; if; local.get $fuel; global.set; call $yield; end
//
// A check of cost 0 only tests the count; a charge of 0 without a check is
// left out.
func (mt *meter) appendCharge(dst []byte, cost int64, check bool, fuel uint32, local bool) []byte {
	switch {
	case cost == 0 && !check:
		return dst
	case cost == 0:
		dst = mt.appendLoad(dst, fuel, local)
		dst = mt.appendBelowFloor(dst)
		if local {
			dst = mt.appendFlush(dst, fuel)
		}
		return mt.appendYield(dst)
	}
	dst = mt.appendLoad(dst, fuel, local)
	dst = append(dst, opI64Const)
	dst = appendSLEB(dst, cost)
	dst = append(dst, opI64Sub)
	switch {
	case check:
		return mt.appendCheck(dst, fuel, local)
	case local:
		dst = append(dst, opLocalSet)
		return appendULEB(dst, uint64(fuel))
	}
	dst = append(dst, opGlobalSet)
	return appendULEB(dst, uint64(mt.fuel))
}

// appendDynamicCharge appends, before a bulk operation whose i32 length is
// on top of the stack: count -= uint64(length) >> shift; if count < floor {
// yield }. The length stays on the stack.
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
// check: if count < floor { yield }, the global holding the count.
func (mt *meter) appendCheck(dst []byte, fuel uint32, local bool) []byte {
	dst = append(dst, opLocalTee)
	dst = appendULEB(dst, uint64(fuel))
	if local {
		dst = mt.appendBelowFloor(dst)
		dst = mt.appendFlush(dst, fuel)
		return mt.appendYield(dst)
	}
	dst = append(dst, opGlobalSet)
	dst = appendULEB(dst, uint64(mt.fuel))
	dst = append(dst, opLocalGet)
	dst = appendULEB(dst, uint64(fuel))
	dst = mt.appendBelowFloor(dst)
	return mt.appendYield(dst)
}

// appendBelowFloor appends, with the count on the stack, the test that
// opens the yield's block: global.get $floor; i64.lt_s; if.
func (mt *meter) appendBelowFloor(dst []byte) []byte {
	dst = append(dst, opGlobalGet)
	dst = appendULEB(dst, uint64(mt.floor))
	return append(dst, opI64LtS, opIf, blockEmpty)
}

// appendYield appends the body of the test's block, the count in the fuel
// global: call $yield; end.
func (mt *meter) appendYield(dst []byte) []byte {
	dst = append(dst, opCall)
	dst = appendULEB(dst, uint64(mt.yield))
	return append(dst, opEnd)
}

// appendYieldBody appends the body of the yield function, locals included
// (none): what a test runs when the count is below the floor.
//
//	i32.const 0; memory.grow 0; drop
//	global.get $fuel; i64.const 0; i64.lt_s; if; unreachable; end
//	global.get $fuel; i64.const slice; i64.sub; i64.const 0
//	global.get $fuel; i64.const slice; i64.ge_s; select; global.set $floor
//	end
//
// Growing memory by nothing does nothing but leave the compiled code for
// the engine's own (Go) code and come back: the one place a Go runtime
// can stop the goroutine, for a garbage collection among others. The host
// interrupts a guest in a listener on this function, before its body runs
// (see [YieldFuel]).
func appendYieldBody(dst []byte, fuel, floor uint32) []byte {
	dst = append(dst, 0) // no locals
	dst = append(dst, opI32Const, 0, opMemoryGrow, 0, opDrop)
	dst = append(dst, opGlobalGet)
	dst = appendULEB(dst, uint64(fuel))
	dst = append(dst, opI64Const, 0, opI64LtS, opIf, blockEmpty, opUnreachable, opEnd)
	dst = append(dst, opGlobalGet)
	dst = appendULEB(dst, uint64(fuel))
	dst = append(dst, opI64Const)
	dst = appendSLEB(dst, YieldFuel)
	dst = append(dst, opI64Sub, opI64Const, 0, opGlobalGet)
	dst = appendULEB(dst, uint64(fuel))
	dst = append(dst, opI64Const)
	dst = appendSLEB(dst, YieldFuel)
	dst = append(dst, opI64GeS, opSelect, opGlobalSet)
	dst = appendULEB(dst, uint64(floor))
	return append(dst, opEnd)
}

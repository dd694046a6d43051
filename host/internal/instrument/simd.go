// The instructions of the fixed-width SIMD proposal (WebAssembly 2.0): the
// 0xfd prefix, a sub-opcode, and the immediates its shape gives.

package instrument

// The immediate shapes of the SIMD instructions.
const (
	simdUnknown = iota // not an instruction of the final proposal
	simdPlain          // no immediate: arithmetic, comparisons, conversions, splats
	simdMem            // a memory argument: v128.load*, v128.store, v128.load*_zero
	simdMemLane        // a memory argument and a lane: v128.load*_lane, v128.store*_lane
	simdLane           // a lane: extract_lane and replace_lane
	simdConst          // 16 bytes: v128.const
	simdShuffle        // 16 lanes of two vectors: i8x16.shuffle
)

// SIMD sub-opcodes the meter reads specially.
const (
	simdV128Const = 0x0c
	// simdRelaxedFirst and simdRelaxedLast bound the relaxed SIMD
	// proposal's instructions, which are refused: their results may
	// differ between machines.
	simdRelaxedFirst = 0x100
	simdRelaxedLast  = 0x113
)

// simdShape returns the immediate shape of the SIMD instruction sub and,
// for the shapes with lanes, the number of lanes its lane immediates name.
func simdShape(sub uint32) (shape int, lanes byte) {
	switch {
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // loads, v128.store, load32_zero, load64_zero
		return simdMem, 0
	case sub == simdV128Const:
		return simdConst, 0
	case sub == 0x0d:
		return simdShuffle, 32
	case sub >= 0x15 && sub <= 0x22: // extract_lane, replace_lane
		switch {
		case sub <= 0x17:
			return simdLane, 16
		case sub <= 0x1a:
			return simdLane, 8
		case sub <= 0x1c, sub == 0x1f, sub == 0x20:
			return simdLane, 4
		}
		return simdLane, 2
	case sub >= 0x54 && sub <= 0x5b: // load*_lane, store*_lane: 8, 16, 32, 64 bits
		return simdMemLane, 16 >> ((sub - 0x54) & 3)
	case sub > 0xff:
		return simdUnknown, 0
	}
	switch sub {
	case 0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee:
		// Left unused by the final proposal (opcodes of earlier drafts).
		return simdUnknown, 0
	}
	return simdPlain, 0
}

// simdOpcode reads the sub-opcode of the SIMD instruction whose 0xfd
// prefix is at offset at, and refuses one not in its shortest encoding.
// wazero (v1.12) reads the sub-opcode as one byte, not as the LEB128
// number it is: it reads a sub-opcode of 0x80 or more, encoded in its two
// bytes, as that byte and a nop (0x01), which is the same code. An
// over-long encoding (0x8c 0x00 for v128.const) it reads as another
// instruction, whose immediates differ, then an unreachable, and would then
// run as code what the meter read as immediates: unmetered.
func simdOpcode(r *reader, at int) (uint32, error) {
	start := r.pos
	sub, err := r.u32()
	if err != nil {
		return 0, err
	}
	if n := r.pos - start; n > len(appendULEB(nil, uint64(sub))) {
		r.pos = at
		return 0, r.errorf(ErrUnsupported, "opcode 0xfd %d in an over-long encoding of %d bytes (wazero reads one)", sub, n)
	}
	return sub, nil
}

// simd reads the sub-opcode and immediates of the SIMD instruction whose
// 0xfd prefix is at offset at. Its weight is that of any instruction; its
// memory argument is read as a load's or store's is.
func (mt *meter) simd(r *reader, at int) error {
	sub, err := simdOpcode(r, at)
	if err != nil {
		return err
	}
	shape, lanes := simdShape(sub)
	switch shape {
	case simdPlain:
		return nil
	case simdMem:
		return mt.memarg(r)
	case simdMemLane:
		if err := mt.memarg(r); err != nil {
			return err
		}
		return lane(r, sub, lanes)
	case simdLane:
		return lane(r, sub, lanes)
	case simdConst:
		return r.skip(16)
	case simdShuffle:
		for range 16 {
			if err := lane(r, sub, lanes); err != nil {
				return err
			}
		}
		return nil
	}
	r.pos = at
	if sub >= simdRelaxedFirst && sub <= simdRelaxedLast {
		return r.errorf(ErrUnsupported, "opcode 0xfd %d (relaxed SIMD)", sub)
	}
	return r.errorf(ErrMalformed, "unknown opcode 0xfd %d", sub)
}

// lane reads the lane index of SIMD instruction sub, a byte below lanes.
func lane(r *reader, sub uint32, lanes byte) error {
	at := r.pos
	x, err := r.byte()
	if err != nil {
		return err
	}
	if x >= lanes {
		r.pos = at
		return r.errorf(ErrMalformed, "lane index %d out of range for opcode 0xfd %d", x, sub)
	}
	return nil
}

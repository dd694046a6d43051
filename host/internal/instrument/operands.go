// The immediate operands of instructions as the meter reads them: indices
// bounded by the module's spaces, labels, memory arguments and block types.

package instrument

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

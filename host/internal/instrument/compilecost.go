package instrument

import "math"

// The counts that bound what wazero's compiler does with a function,
// kept by the meter as it reads the body: br_table labels, the ways into
// a label, and the depths of basic blocks in the dominator tree. Each is
// refused with a *LimitError once over its limit (docs/host.md, "Module
// limits").

// countTargets counts the n labels of a br_table, before they are read,
// and refuses the function or the module once over its limit.
func (mt *meter) countTargets(n uint64) error {
	mt.fnTargets += n
	mt.moduleTargets += n
	opts := &mt.m.opts
	if mt.fnTargets > uint64(opts.MaxFunctionBrTableTargets) {
		return &LimitError{Limit: LimitBrTableTargets, Value: mt.fnTargets, Max: uint64(opts.MaxFunctionBrTableTargets)}
	}
	if mt.moduleTargets > opts.MaxBrTableTargets {
		return &LimitError{Limit: LimitBrTableTargets, Value: mt.moduleTargets, Max: opts.MaxBrTableTargets, Where: "module"}
	}
	return nil
}

// Dominator depth. wazero's optimising compiler (v1.12) walks, for every
// basic block and for every edge, up the function's dominator tree: to the
// entry, or to the innermost loop header (passBuildLoopNestingForest,
// subPassLoopDetection, calculateDominators), so its time grows with the
// number of blocks times their depth in the tree. Straight code gets one
// level deeper at every conditional construct, one after another (an if,
// a br_if, a loop, a metering test), and back up only across the arms of
// an if or the labels of a br_table. The meter follows the depth of the
// code it reads, in the CFG wazero builds of the instrumented function:
// exactly where a block has one way in, and as an upper bound where ways
// in join (the least of theirs plus one, or the condition's plus one when
// both arms of an if reach its end), counting every metering point as a
// test, which only some are.

// newBlock records a basic block at dominator depth d, refusing the
// function or the module once their blocks' depths add up to more than
// their limit.
func (mt *meter) newBlock(d int64) error {
	mt.fnDepths += uint64(d)
	mt.moduleDepths += uint64(d)
	opts := &mt.m.opts
	if mt.fnDepths > opts.MaxFunctionDominatorDepths {
		return &LimitError{Limit: LimitDominatorDepths, Value: mt.fnDepths, Max: opts.MaxFunctionDominatorDepths}
	}
	if mt.moduleDepths > opts.MaxDominatorDepths {
		return &LimitError{Limit: LimitDominatorDepths, Value: mt.moduleDepths, Max: opts.MaxDominatorDepths, Where: "module"}
	}
	return nil
}

// enterBlock records a basic block at depth d and continues in it.
func (mt *meter) enterBlock(d int64) error {
	mt.depth = d
	return mt.newBlock(d)
}

// test records a metering test (if count < floor { yield }) where the code
// is: its then-arm and else-arm one level deeper, and the code after it.
func (mt *meter) test() error {
	if err := mt.countTest(mt.depth); err != nil {
		return err
	}
	return mt.enterBlock(mt.depth + 1)
}

// countTest records the then-arm and else-arm of a test at depth d.
func (mt *meter) countTest(d int64) error {
	if err := mt.newBlock(d + 1); err != nil {
		return err
	}
	return mt.newBlock(d + 1)
}

// pred records a way into frame f's label from a block at depth d, in the
// arm of an if it is in, and refuses the function once over its limit of
// ways into one label. Loops are entered at their header, whose depth the
// ways back in do not change; the function's label is its return.
func (mt *meter) pred(f *frame, d int64) error {
	switch f.kind {
	case opIf:
		return mt.predArm(f, armThen, d)
	case opElse:
		return mt.predArm(f, armElse, d)
	}
	return mt.predArm(f, 0, d)
}

// predArm is pred, in the given arms.
func (mt *meter) predArm(f *frame, arm uint8, d int64) error {
	f.preds++
	mt.fnLabelBranches = max(mt.fnLabelBranches, f.preds)
	if max := uint64(mt.m.opts.MaxLabelBranches); f.preds > max {
		return &LimitError{Limit: LimitLabelBranches, Value: f.preds, Max: max}
	}
	if f.kind != opLoop && f.kind != 0 {
		f.arms |= arm
		f.minPred = min(f.minPred, d)
	}
	return nil
}

// endBlock continues after the end of frame f (popped) in the block there,
// if any way reaches it; live reports that the code before the end did.
func (mt *meter) endBlock(f *frame, live bool) error {
	switch {
	case f.kind == opLoop:
		if !live {
			return nil
		}
		return mt.enterBlock(mt.depth + 1)
	case f.minPred == math.MaxInt64:
		return nil // unreachable
	case f.arms == armThen|armElse:
		return mt.enterBlock(f.open + 1)
	}
	return mt.enterBlock(f.minPred + 1)
}

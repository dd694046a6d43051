package instrument

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The tests here check the cost model against an independent count: a
// generator writes random structured functions twice, plain and with every
// instruction of weight w preceded by a counter update (global.get $cnt;
// i64.const w; i64.add; global.set $cnt), so the counter ends at the
// weight of the instructions that ran. The fuel a rewritten plain module
// uses must be exactly that, in every mode; a budget one short must trap
// with the count below zero, and an exact budget must not.

// Weights of the generated instructions (see code.go).
const (
	wInstr = costDefault
	wCall  = costCall
	wGrow  = costMemoryGrow
)

// progGen writes the body of f(x i32) -> i32 from the bytes of src.
type progGen struct {
	src     []byte
	pos     int
	plain   []byte
	counted []byte
	labels  []byte // enclosing labels, innermost last: 'b'lock, 'i'f, 'l'oop, 'g'uard
	loopVar []uint32
	loops   int // open loops
	stmts   int // statements left
}

const (
	genMaxDepth = 6
	genMaxLoops = 3
	genLocalX   = 0 // the parameter
	genCounter  = 1 // the first loop counter; genMaxLoops of them
	genCntIndex = 0 // the counter global in the counted module
	genV128     = 4 // a v128 local, after the loop counters
)

func (g *progGen) rnd(n int) int {
	if g.pos >= len(g.src) {
		return 0
	}
	b := g.src[g.pos]
	g.pos++
	return int(b) % n
}

// op appends one instruction of weight w.
func (g *progGen) op(w int64, b ...byte) {
	g.plain = append(g.plain, b...)
	if w > 0 {
		g.counted = append(g.counted, opGlobalGet, genCntIndex, opI64Const)
		g.counted = appendSLEB(g.counted, w)
		g.counted = append(g.counted, 0x7c, opGlobalSet, genCntIndex) // i64.add
	}
	g.counted = append(g.counted, b...)
}

func (g *progGen) i32Const(v int32)  { g.op(wInstr, cat([]byte{0x41}, appendSLEB(nil, int64(v)))...) }
func (g *progGen) localGet(x uint32) { g.op(wInstr, cat([]byte{opLocalGet}, uleb(uint64(x)))...) }
func (g *progGen) localSet(x uint32) { g.op(wInstr, cat([]byte{opLocalSet}, uleb(uint64(x)))...) }
func (g *progGen) localTee(x uint32) { g.op(wInstr, cat([]byte{opLocalTee}, uleb(uint64(x)))...) }
func (g *progGen) open(op, label byte) {
	w := int64(costStructure) // block, loop
	if op == opIf {
		w = wInstr
	}
	g.op(w, op, blockEmpty)
	g.labels = append(g.labels, label)
}
func (g *progGen) end() {
	g.op(costStructure, opEnd)
	g.labels = g.labels[:len(g.labels)-1]
}

// depthOf returns the relative depth of the label at index i of g.labels.
func (g *progGen) depthOf(i int) uint64 { return uint64(len(g.labels) - 1 - i) }

// cond pushes an i32 that depends on x.
func (g *progGen) cond() {
	g.localGet(genLocalX)
	g.i32Const(int32(1) << g.rnd(6))
	g.op(wInstr, 0x71) // i32.and
}

// target picks an enclosing label that is not a loop, or -1 for the
// function's.
func (g *progGen) target() int {
	var ok []int
	for i, l := range g.labels {
		if l != 'l' {
			ok = append(ok, i)
		}
	}
	if n := g.rnd(len(ok) + 1); n < len(ok) {
		return ok[n]
	}
	return -1
}

// loopTarget picks an enclosing loop: its index in g.labels and its
// counter, or -1.
func (g *progGen) loopTarget() (int, uint32) {
	var idx []int
	for i, l := range g.labels {
		if l == 'l' {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1, 0
	}
	k := g.rnd(len(idx))
	return idx[k], g.loopVar[k]
}

// backEdge decrements the loop's counter and branches back while it is
// positive: with a br_if, or with a br behind a guard block.
func (g *progGen) backEdge(i int, c uint32) {
	dec := func() {
		g.localGet(c)
		g.i32Const(1)
		g.op(wInstr, 0x6b) // i32.sub
		g.localTee(c)
		g.i32Const(0)
	}
	if g.rnd(2) == 0 {
		dec()
		g.op(wInstr, 0x4a) // i32.gt_s
		g.op(wInstr, cat([]byte{0x0d}, uleb(g.depthOf(i)))...)
		return
	}
	g.open(opBlock, 'g')
	dec()
	g.op(wInstr, 0x4c) // i32.le_s
	g.op(wInstr, 0x0d, 0)
	g.op(wInstr, cat([]byte{0x0c}, uleb(g.depthOf(i)))...)
	g.end()
}

// branch appends a br or br_if (cond set) to label index i, -1 for the
// function's label, which takes x.
func (g *progGen) branch(op byte, i int) {
	if i < 0 {
		g.localGet(genLocalX)
		if op == 0x0d {
			g.cond()
		}
		g.op(wInstr, cat([]byte{op}, uleb(uint64(len(g.labels))))...)
		if op == 0x0d {
			g.op(wInstr, 0x1a) // drop
		}
		return
	}
	if op == 0x0d {
		g.cond()
	}
	g.op(wInstr, cat([]byte{op}, uleb(g.depthOf(i)))...)
}

func (g *progGen) block() {
	n := 1 + g.rnd(4)
	for i := 0; i < n && g.stmts > 0; i++ {
		g.stmt()
	}
}

func (g *progGen) stmt() {
	g.stmts--
	deep := len(g.labels) >= genMaxDepth
	switch k := g.rnd(20); {
	case k <= 1: // x = x + c
		g.localGet(genLocalX)
		g.i32Const(int32(g.rnd(100)))
		g.op(wInstr, 0x6a) // i32.add
		g.localSet(genLocalX)
	case k == 2: // x = x*3 ^ c
		g.localGet(genLocalX)
		g.i32Const(3)
		g.op(wInstr, 0x6c) // i32.mul
		g.i32Const(int32(g.rnd(256)))
		g.op(wInstr, 0x73) // i32.xor
		g.localSet(genLocalX)
	case k == 3 && g.rnd(2) == 0:
		g.op(wInstr, 0x01) // nop
	case k == 3:
		g.simd()
	case k == 4 && !deep:
		g.open(opBlock, 'b')
		g.block()
		g.end()
	case k == 5 && !deep, k == 6 && !deep:
		g.cond()
		g.open(opIf, 'i')
		g.block()
		if k == 6 {
			g.op(costStructure, opElse)
			g.block()
		}
		g.end()
	case k == 7 && !deep && g.loops < genMaxLoops:
		c := uint32(genCounter + g.loops)
		g.i32Const(int32(1 + g.rnd(3)))
		g.localSet(c)
		g.open(opLoop, 'l')
		g.loopVar = append(g.loopVar, c)
		g.loops++
		g.block()
		if g.rnd(2) == 0 {
			g.backEdge(len(g.labels)-1, c)
		}
		g.loops--
		g.loopVar = g.loopVar[:len(g.loopVar)-1]
		g.end()
	case k == 8:
		g.branch(0x0c, g.target())
	case k == 9:
		g.branch(0x0d, g.target())
	case k == 10: // br_table over non-loop labels
		var ts []uint64
		for n := 1 + g.rnd(3); n > 0; n-- {
			if i := g.target(); i >= 0 {
				ts = append(ts, g.depthOf(i))
			}
		}
		if len(ts) == 0 {
			return
		}
		g.cond()
		b := cat([]byte{0x0e}, uleb(uint64(len(ts)-1)))
		for _, t := range ts {
			b = append(b, uleb(t)...)
		}
		g.op(wInstr, b...)
	case k == 11, k == 12:
		if i, c := g.loopTarget(); i >= 0 {
			g.backEdge(i, c)
		}
	case k == 13: // call $g
		g.op(wCall, 0x10, 2)
	case k == 14: // call the imported add and drop its result
		g.op(wInstr, 0x42, 2)
		g.op(wInstr, 0x42, 3)
		g.op(wCall, 0x10, 0)
		g.op(wInstr, 0x1a)
	case k == 15: // memory.size grown by 0
		g.i32Const(0)
		g.op(wGrow, 0x40, 0)
		g.op(wInstr, 0x1a)
	case k == 16:
		g.localGet(genLocalX)
		g.op(wInstr, 0x0f) // return
		g.deadEnd()
	case k == 17: // call_indirect slot 0 ($g)
		g.i32Const(0)
		g.op(wCall, 0x11, 2, 0)
	case k == 18: // memory.fill of x&1023 bytes at 0
		g.i32Const(0)
		g.i32Const(int32(g.rnd(256)))
		g.localGet(genLocalX)
		g.i32Const(1023)
		g.op(wInstr, 0x71) // i32.and
		// The counted module adds the length part: (x&1023) >> 6.
		g.counted = append(g.counted, opLocalGet, genLocalX, 0x41)
		g.counted = appendSLEB(g.counted, 1023)
		g.counted = append(g.counted, 0x71, opI64ExtendI32, opI64Const, bulkMemoryShift, opI64ShrU,
			opGlobalGet, genCntIndex, 0x7c, opGlobalSet, genCntIndex)
		g.op(costBulk, 0xfc, 11, 0)
	case k == 19:
		if i := g.target(); i >= 0 {
			g.branch(0x0c, i)
			g.deadEnd()
		}
	}
}

// simd adds c to x through the SIMD instructions of every immediate
// shape: x = lane 1 of splat(x) + c, stored and loaded back into lane 2.
func (g *progGen) simd() {
	c := byte(g.rnd(100))
	g.i32Const(0)
	g.localGet(genLocalX)
	g.op(wInstr, 0xfd, 0x11) // i32x4.splat
	g.localTee(genV128)
	g.op(wInstr, 0xfd, 0x0c, 0, 0, 0, 0, c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) // v128.const i32x4 0 c 0 0
	g.op(wInstr, 0xfd, 0xae, 0x01)                                           // i32x4.add
	g.localGet(genV128)
	g.op(wInstr, 0xfd, 0x0d, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) // i8x16.shuffle: the first
	g.op(wInstr, 0xfd, 0x0b, 4, 16)                                                // v128.store align=16 offset=16
	g.i32Const(16)
	g.localGet(genV128)
	g.op(wInstr, 0xfd, 0x56, 2, 4, 2) // v128.load32_lane align=4 offset=4 2
	g.op(wInstr, 0xfd, 0x1b, 2)       // i32x4.extract_lane 2
	g.localSet(genLocalX)
}

// deadEnd sometimes appends an unreachable, which cannot run: it follows a
// branch or a return.
func (g *progGen) deadEnd() {
	if g.rnd(2) == 0 {
		g.op(wInstr, opUnreachable)
	}
}

// genModules returns the plain and the counted module for src: an import
// env.add (i64, i64) -> i64 (function 0), f(x i32) -> i32 exported as "f"
// (1) and a small g() (2), also in slot 0 of a table, a memory, and in the
// counted module the counter global exported as "cnt".
func genModules(src []byte) (plain, counted []byte) {
	g := &progGen{src: src, stmts: 40}
	g.block()
	for g.stmts > 0 && g.pos < len(g.src) {
		g.stmt()
	}
	g.localGet(genLocalX)
	g.op(costStructure, opEnd)
	fPlain, fCounted := g.plain, g.counted

	g = &progGen{} // g: i32.const 1; drop; nop
	g.i32Const(1)
	g.op(wInstr, 0x1a)
	g.op(wInstr, 0x01)
	g.op(costStructure, opEnd)
	gPlain, gCounted := g.plain, g.counted

	locals := []byte{2, genMaxLoops, typeI32, 1, typeV128}
	build := func(f, gb []byte, counter bool) []byte {
		exports := [][]byte{cat([]byte{1, 'f', byte(KindFunction)}, uleb(1))}
		var globals []byte
		if counter {
			exports = append(exports, cat([]byte{3, 'c', 'n', 't', byte(KindGlobal)}, uleb(genCntIndex)))
			globals = section(secGlobal, vec([]byte{typeI64, 1, opI64Const, 0, opEnd}))
		}
		return wasmModule(
			section(secType, vec(
				[]byte{0x60, 2, typeI64, typeI64, 1, typeI64},
				[]byte{0x60, 1, typeI32, 1, typeI32},
				typeVoid)),
			section(secImport, vec(cat(uleb(3), []byte("env"), uleb(3), []byte("add"), []byte{byte(KindFunction), 0}))),
			section(secFunction, vec([]byte{1}, []byte{2})),
			section(secTable, vec([]byte{typeFuncref, 0, 1})),
			section(secMemory, vec([]byte{0, 1})),
			globals,
			section(secExport, vec(exports...)),
			section(secElement, vec(cat([]byte{0, 0x41, 0, opEnd}, vec(uleb(2))))),
			section(secCode, vec(bodyWithLocals(locals, f...), body(gb...))),
		)
	}
	return build(fPlain, gPlain, false), build(fCounted, gCounted, true)
}

// checkExact runs f of the modules generated from src for a few arguments.
func checkExact(t *testing.T, src []byte) {
	plain, counted := genModules(src)
	ref := instantiate(t, counted)
	for _, x := range []uint64{0, 1, 6, 0x2f, 0xffffffff} {
		g, ok := ref.mod.ExportedGlobal("cnt").(interface{ Set(uint64) })
		if !ok {
			t.Fatal("no counter")
		}
		g.Set(0)
		want, err := ref.call("f", x)
		if err != nil {
			t.Fatalf("counted module: %v", err)
		}
		weight := int64(ref.mod.ExportedGlobal("cnt").Get())
		for _, md := range modes {
			out, _, err := rewrite(plain, Options{}, md.mode)
			if err != nil {
				t.Fatalf("%s mode: %v", md.name, err)
			}
			in := instantiate(t, out)
			res, used, err := in.metered(plenty, "f", x)
			if err != nil || !reflect.DeepEqual(res, want) || used != weight {
				t.Fatalf("%s mode: f(%d) = %v, %v using %d fuel; want %v using %d (src %x)", md.name, x, res, err, used, want, weight, src)
			}
			if _, _, err := in.metered(weight, "f", x); err != nil || in.fuel() != 0 {
				t.Fatalf("%s mode: f(%d) with its exact budget %d: %v, %d left (src %x)", md.name, x, weight, err, in.fuel(), src)
			}
			if weight > 0 {
				_, _, err := in.metered(weight-1, "f", x)
				if err == nil || !strings.Contains(err.Error(), "unreachable") || in.fuel() >= 0 {
					t.Fatalf("%s mode: f(%d) with %d fuel, one short: %v, %d left (src %x)", md.name, x, weight-1, err, in.fuel(), src)
				}
			}
		}
	}
}

// TestFuelIsWeightRun checks generated functions: the fuel used is the
// weight of the instructions that ran.
func TestFuelIsWeightRun(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 150
	if testing.Short() {
		n = 20
	}
	for range n {
		src := make([]byte, 200)
		for i := 0; i < len(src); i += 8 {
			binary.LittleEndian.PutUint64(src[i:], r.Uint64())
		}
		checkExact(t, src)
	}
}

// FuzzFuelIsWeightRun is TestFuelIsWeightRun driven by the fuzzer:
//
//	go test -run '^$' -fuzz FuzzFuelIsWeightRun -fuzztime 60s ./host/internal/instrument
func FuzzFuelIsWeightRun(f *testing.F) {
	f.Add([]byte{7, 0, 5, 9, 12, 1, 6, 8, 11, 0})
	f.Add([]byte{4, 9, 7, 3, 11, 2, 10, 8, 14, 15, 16})
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 400 {
			return
		}
		checkExact(t, src)
	})
}

package instrument

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// simdEngines are the wazero engines the SIMD module runs on: the host's
// compiler and the interpreter, which implement the instructions apart.
var simdEngines = []struct {
	name   string
	config func() wazero.RuntimeConfig
}{{"compiler", wazero.NewRuntimeConfig}, {"interpreter", wazero.NewRuntimeConfigInterpreter}}

// simdModule instantiates wasm in a runtime of its own made with config.
func simdModule(t *testing.T, config wazero.RuntimeConfig, wasm []byte) *instance {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, config)
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiating: %v", err)
	}
	return &instance{t: t, ctx: ctx, rt: rt, mod: mod}
}

// TestSIMDRuns rewrites testdata/simd.wat, every SIMD immediate shape and
// v128 in every place a value type goes, in each metering mode, and runs
// it on each engine: it gives what the module gives uninstrumented, and
// uses the same fuel everywhere.
func TestSIMDRuns(t *testing.T) {
	wasm := readTestdata(t, "simd.wasm")
	calls := []struct {
		fn   string
		args []uint64
	}{{"shapes", nil}, {"loop", []uint64{0}}, {"loop", []uint64{1}}, {"loop", []uint64{37}}}
	for _, e := range simdEngines {
		t.Run(e.name, func(t *testing.T) {
			var want [][]uint64
			plain := simdModule(t, e.config(), wasm)
			for _, c := range calls {
				res, err := plain.call(c.fn, c.args...)
				if err != nil {
					t.Fatalf("uninstrumented %s%v: %v", c.fn, c.args, err)
				}
				want = append(want, res)
			}
			var fuel []int64 // per call, in the first mode
			for i, md := range modes {
				out, info, err := rewrite(wasm, Options{}, md.mode)
				if err != nil {
					t.Fatalf("%s mode: %v", md.name, err)
				}
				if g := info.Globals; len(g) != 2 || g[0].Type != ValueTypeV128 || !g[0].Mutable || g[1].Type.String() != "v128" {
					t.Errorf("%s mode: globals %+v, want two of type v128, the first mutable", md.name, g)
				}
				in := simdModule(t, e.config(), out)
				for j, c := range calls {
					res, used, err := in.metered(plenty, c.fn, c.args...)
					if err != nil || !reflect.DeepEqual(res, want[j]) {
						t.Errorf("%s mode: %s%v = %v, %v; want %v", md.name, c.fn, c.args, res, err, want[j])
					}
					if i == 0 {
						fuel = append(fuel, used)
					} else if used != fuel[j] {
						t.Errorf("%s mode: %s%v used %d fuel, %s mode %d", md.name, c.fn, c.args, used, modes[0].name, fuel[j])
					}
				}
			}
			t.Logf("fuel used by %v: %v", calls, fuel)
		})
	}
}

// TestSIMDFuel checks that SIMD instructions are charged as any other: an
// iteration of simd.wat's loop, 28 instructions of which 13 SIMD (loads and
// stores among them), uses 28 fuel more, on every call and in every mode;
// and that a budget one short of a call traps with the count below zero.
func TestSIMDFuel(t *testing.T) {
	const perIteration = 28
	wasm := readTestdata(t, "simd.wasm")
	for _, md := range modes {
		out, _, err := rewrite(wasm, Options{}, md.mode)
		if err != nil {
			t.Fatalf("%s mode: %v", md.name, err)
		}
		in := instantiate(t, out)
		_, base, err := in.metered(plenty, "loop", 0)
		if err != nil {
			t.Fatalf("%s mode: loop(0): %v", md.name, err)
		}
		for _, n := range []int64{1, 2, 10, 1000, 1} {
			_, used, err := in.metered(plenty, "loop", uint64(n))
			if err != nil {
				t.Fatalf("%s mode: loop(%d): %v", md.name, n, err)
			}
			if want := base + n*perIteration; used != want {
				t.Errorf("%s mode: loop(%d) used %d fuel, want %d + %d × %d = %d", md.name, n, used, base, n, perIteration, want)
			}
		}
		budget := base + 10*perIteration
		if _, _, err := in.metered(budget, "loop", 10); err != nil || in.fuel() != 0 {
			t.Errorf("%s mode: loop(10) with its exact budget: %v, %d left", md.name, err, in.fuel())
		}
		_, _, err = in.metered(budget-1, "loop", 10)
		if err == nil || !strings.Contains(err.Error(), "unreachable") || in.fuel() >= 0 {
			t.Errorf("%s mode: loop(10) one short: %v, %d left, want a trap below zero", md.name, err, in.fuel())
		}
	}
}

// simdFunc is oneFunc with a v128 result dropped after code.
func simdFunc(code ...byte) []byte {
	return oneFunc(append(code, opDrop, opEnd)...)
}

// v128Const is v128.const with the bytes 0..15.
var v128Const = []byte{0xfd, 0x0c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// TestSIMDDecoding checks the SIMD encodings built by hand: accepted ones
// are copied byte for byte and compile; relaxed SIMD, opcodes the final
// proposal left out, out-of-range lanes, and truncated immediates are
// refused with the opcode named.
func TestSIMDDecoding(t *testing.T) {
	tests := []struct {
		name string
		wasm []byte
		want error  // nil: accepted
		msg  string // in the error
	}{
		{name: "v128.const", wasm: simdFunc(v128Const...)},
		{name: "i8x16.shuffle", wasm: simdFunc(cat(v128Const, v128Const,
			[]byte{0xfd, 0x0d, 31, 0, 30, 1, 29, 2, 28, 3, 27, 4, 26, 5, 25, 6, 24, 7})...)},
		{name: "i64x2.replace_lane 1", wasm: simdFunc(cat(v128Const, []byte{0x42, 5, 0xfd, 0x1e, 1})...)},
		{name: "v128.store64_lane", wasm: oneFunc(cat([]byte{0x41, 0}, v128Const, []byte{0xfd, 0x5b, 3, 8, 1, opEnd})...)},
		{name: "v128.load32_zero", wasm: simdFunc(0x41, 0, 0xfd, 0x5c, 2, 0)},
		{name: "f64x2.convert_low_i32x4_u, the last opcode", wasm: simdFunc(cat(v128Const, []byte{0xfd, 0xff, 0x01})...)},
		{name: "i32x4.add, its sub-opcode over-long", wasm: simdFunc(cat(v128Const, v128Const, []byte{0xfd, 0xae, 0x81, 0x00})...),
			want: ErrUnsupported, msg: "opcode 0xfd 174 in an over-long encoding of 3 bytes"},
		{name: "v128.const, its sub-opcode over-long", wasm: simdFunc(cat([]byte{0xfd, 0x8c, 0x00}, v128Const[2:])...),
			want: ErrUnsupported, msg: "opcode 0xfd 12 in an over-long encoding of 2 bytes"},
		{name: "v128.const global, its sub-opcode over-long", wasm: wasmModule(section(secGlobal, vec(cat([]byte{typeV128, 0, 0xfd, 0x8c, 0x00}, v128Const[2:], []byte{opEnd})))),
			want: ErrUnsupported, msg: "opcode 0xfd 12 in an over-long encoding of 2 bytes"},
		{name: "v128 locals", wasm: wasmModule(
			section(secType, vec(typeVoid)),
			section(secFunction, vec([]byte{0})),
			section(secCode, vec(bodyWithLocals([]byte{1, 2, typeV128}, cat(v128Const, []byte{opLocalSet, 1, opLocalGet, 1, opDrop, opEnd})...))))},
		{name: "v128 parameter, result and block type", wasm: wasmModule(
			section(secType, vec([]byte{0x60, 1, typeV128, 1, typeV128})),
			section(secFunction, vec([]byte{0})),
			section(secCode, vec(body(opBlock, typeV128, opLocalGet, 0, opLocalGet, 0, 0xfd, 0x6e, opEnd, opEnd))))},
		{name: "v128 global", wasm: wasmModule(section(secGlobal, vec(cat([]byte{typeV128, 1}, v128Const, []byte{opEnd}))))},

		{name: "relaxed swizzle", wasm: simdFunc(cat(v128Const, v128Const, []byte{0xfd, 0x80, 0x02})...),
			want: ErrUnsupported, msg: "opcode 0xfd 256 (relaxed SIMD)"},
		{name: "relaxed dot add", wasm: simdFunc(cat(v128Const, v128Const, v128Const, []byte{0xfd, 0x93, 0x02})...),
			want: ErrUnsupported, msg: "opcode 0xfd 275 (relaxed SIMD)"},
		{name: "unused opcode", wasm: simdFunc(cat(v128Const, []byte{0xfd, 0x9a, 0x01})...),
			want: ErrMalformed, msg: "unknown opcode 0xfd 154"},
		{name: "past relaxed SIMD", wasm: simdFunc(cat(v128Const, []byte{0xfd, 0x94, 0x02})...),
			want: ErrMalformed, msg: "unknown opcode 0xfd 276"},
		{name: "lane out of range", wasm: simdFunc(cat(v128Const, []byte{0xfd, 0x1d, 2})...),
			want: ErrMalformed, msg: "lane index 2 out of range for opcode 0xfd 29"},
		{name: "shuffle lane out of range", wasm: simdFunc(cat(v128Const, v128Const,
			[]byte{0xfd, 0x0d, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 32})...),
			want: ErrMalformed, msg: "lane index 32 out of range for opcode 0xfd 13"},
		{name: "load lane out of range", wasm: simdFunc(cat([]byte{0x41, 0}, v128Const, []byte{0xfd, 0x55, 1, 0, 8})...),
			want: ErrMalformed, msg: "lane index 8 out of range for opcode 0xfd 85"},
		{name: "truncated v128.const", wasm: oneFunc(0xfd, 0x0c, 1, 2, 3, opDrop, opEnd), want: ErrMalformed},
		{name: "load without memory", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secCode, vec(body(0x41, 0, 0xfd, 0x00, 4, 0, opDrop, opEnd)))),
			want: ErrMalformed, msg: "memory instruction without a memory"},
		{name: "multi-memory memarg", wasm: simdFunc(0x41, 0, 0xfd, 0x00, 0x44, 1, 0),
			want: ErrUnsupported, msg: "multiple memories"},
		{name: "SIMD constant other than v128.const", wasm: wasmModule(section(secGlobal, vec(cat([]byte{typeV128, 0}, v128Const[:1], []byte{0x0f, 0x41, 0, opEnd})))),
			want: ErrMalformed, msg: "opcode 0xfd 15 not allowed in a constant expression"},
	}
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Rewrite(tt.wasm, Options{})
			if tt.want != nil {
				wantErr(t, err, tt.want)
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not say %q", err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cm, err := rt.CompileModule(ctx, tt.wasm); err != nil {
				t.Fatalf("wazero refuses the input: %v", err)
			} else {
				cm.Close(ctx)
			}
			cm, err := rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("wazero refuses the output: %v", err)
			}
			cm.Close(ctx)
			if code := simdCode(tt.wasm); code != nil && !strings.Contains(string(out), string(code)) {
				t.Errorf("the output does not hold the input's code %x", code)
			}
		})
	}
}

// simdCode returns the instructions of the one function of a module built
// by oneFunc (its body after the empty locals vector), or nil.
func simdCode(wasm []byte) []byte {
	m, err := decode(wasm)
	if err != nil || len(m.code) != 1 {
		return nil
	}
	b := wasm[m.code[0].start:m.code[0].end]
	if b[0] != 0 {
		return nil
	}
	return b[1:]
}

// TestSIMDImageRefused checks that a module with a v128 global is not
// imaged: Image.Globals holds 64 bits a global.
func TestSIMDImageRefused(t *testing.T) {
	wasm := wasmModule(
		section(secMemory, vec([]byte{0, 1})),
		section(secGlobal, vec(cat([]byte{typeV128, 1}, v128Const, []byte{opEnd}))))
	_, _, err := Rewrite(wasm, Options{Image: &Image{Globals: map[uint32]uint64{0: 0}, MemoryPages: 1}})
	wantErr(t, err, ErrUnsupported)
	if !strings.Contains(err.Error(), "v128") {
		t.Errorf("error %q does not name v128", err)
	}
}

// TestSIMDGlobalExported checks that a v128 global is exported by
// ExportGlobals and reads back, low half, as wazero reports it.
func TestSIMDGlobalExported(t *testing.T) {
	wasm := wasmModule(section(secGlobal, vec(cat([]byte{typeV128, 1}, v128Const, []byte{opEnd}))))
	out, info := mustRewrite(t, wasm, Options{ExportGlobals: true})
	if len(info.Globals) != 1 || info.Globals[0].Type != ValueTypeV128 {
		t.Fatalf("globals %+v", info.Globals)
	}
	in := simdModule(t, wazero.NewRuntimeConfig(), out)
	g := in.mod.ExportedGlobal(info.Globals[0].Export)
	if g == nil || g.Type() != api.ValueType(ValueTypeV128) {
		t.Fatalf("exported global %v", g)
	}
	if v := g.Get(); v != 0x0706050403020100 {
		t.Errorf("global's low half %#x, want 0x0706050403020100", v)
	}
}

// TestSIMDOverlongDesync checks the reason over-long SIMD sub-opcodes are
// refused: wazero reads the sub-opcode as one byte, so that in this
// function it reads 0xfd 0x8c 0x00, which the meter reads as v128.const and
// its 16 bytes, as i16x8.shr_s and an unreachable, and runs those 16 bytes
// as code: the end of the block a br_if left, and a loop that never ends.
// Accepted, the loop would run unmetered, without a yield to interrupt it.
func TestSIMDOverlongDesync(t *testing.T) {
	code := cat(
		[]byte{opBlock, typeV128}, v128Const, // [v]
		[]byte{opI32Const, 1, 0x0d, 0}, // br_if 0, taken: [v] after the block
		[]byte{opI32Const, 0},
		[]byte{0xfd, 0x8c, 0x00}, // the meter: v128.const; wazero: i16x8.shr_s, unreachable
		[]byte{opEnd, opDrop, opLoop, blockEmpty, 0x0c, 0, opEnd, opBlock, typeV128, opUnreachable, 1, 1, 1, 1, 1, 1},
		[]byte{opEnd, opDrop, opEnd})
	wasm := wasmModule(
		section(secType, vec(typeVoid)),
		section(secFunction, vec([]byte{0})),
		section(secCode, vec(body(code...))))
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("wazero no longer compiles the module (does it read the sub-opcode as LEB128 now?): %v", err)
	}
	cm.Close(ctx)
	_, _, err = Rewrite(wasm, Options{})
	wantErr(t, err, ErrUnsupported)
	if !strings.Contains(err.Error(), "opcode 0xfd 12 in an over-long encoding") {
		t.Errorf("error %q does not name the over-long v128.const", err)
	}
}

// simdImmediates returns immediates of the given shape: a memory argument
// of offset 6, lanes numbered lane, 16 bytes of 6. Read as instructions,
// as they are where a decoder expects none, the 6s are invalid opcodes.
func simdImmediates(shape int, lane byte) []byte {
	memarg := []byte{0, 6}
	switch shape {
	case simdMem:
		return memarg
	case simdMemLane:
		return append(memarg, lane)
	case simdLane:
		return []byte{lane}
	case simdConst:
		return bytes.Repeat([]byte{6}, 16)
	case simdShuffle:
		return append(bytes.Repeat([]byte{6}, 15), lane)
	}
	return nil
}

// TestSIMDOpcodesAgreeWithWazero checks the meter's table of SIMD
// instructions against wazero's, sub-opcode by sub-opcode, each in dead
// code (after an unreachable, where any operands will do) with the
// immediates of its shape: the meter accepts what wazero compiles and
// refuses the rest, and a lane index one past the instruction's lanes is
// refused by both.
func TestSIMDOpcodesAgreeWithWazero(t *testing.T) {
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	compiles := func(wasm []byte) error {
		cm, err := rt.CompileModule(ctx, wasm)
		if err == nil {
			cm.Close(ctx)
		}
		return err
	}
	known := 0
	for sub := uint32(0); sub <= 0xff; sub++ {
		shape, lanes := simdShape(sub)
		lane := byte(0)
		if lanes > 0 {
			lane = lanes/2 + 1 // 2 of 2 lanes is caught below
			if lanes == 2 {
				lane = 1
			}
		}
		instr := cat([]byte{0xfd}, uleb(uint64(sub)), simdImmediates(shape, lane))
		wasm := oneFunc(cat([]byte{opUnreachable}, instr, []byte{opDrop, opEnd})...)
		_, _, err := Rewrite(wasm, Options{})
		werr := compiles(wasm)
		switch {
		case shape == simdUnknown && (err == nil || werr == nil):
			t.Errorf("0xfd %d: not in the meter's table, yet Rewrite says %v and wazero %v", sub, err, werr)
		case shape != simdUnknown && (err != nil || werr != nil):
			t.Errorf("0xfd %d (%x): Rewrite says %v, wazero %v", sub, instr, err, werr)
		}
		if shape == simdUnknown {
			wantErr(t, err, ErrMalformed)
			continue
		}
		known++
		if lanes == 0 {
			continue
		}
		instr = cat([]byte{0xfd}, uleb(uint64(sub)), simdImmediates(shape, lanes))
		wasm = oneFunc(cat([]byte{opUnreachable}, instr, []byte{opDrop, opEnd})...)
		if _, _, err := Rewrite(wasm, Options{}); !errors.Is(err, ErrMalformed) || compiles(wasm) == nil {
			t.Errorf("0xfd %d with lane %d of %d: Rewrite says %v, wazero %v", sub, lanes, lanes, err, compiles(wasm))
		}
	}
	if known != 236 {
		t.Errorf("%d SIMD instructions in the meter's table, want the proposal's 236", known)
	}
}

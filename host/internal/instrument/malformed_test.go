package instrument

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestRefused(t *testing.T) {
	// deep nests n blocks in a function body.
	deep := func(n int) []byte {
		code := bytes.Repeat([]byte{opBlock, blockEmpty}, n)
		code = append(code, bytes.Repeat([]byte{opEnd}, n+1)...)
		return oneFunc(code...)
	}
	huge := uleb(0xffffffff)
	tests := []struct {
		name string
		wasm []byte
		want error
	}{
		{name: "empty", wasm: nil, want: ErrMalformed},
		{name: "bad magic", wasm: []byte("\x00asn\x01\x00\x00\x00"), want: ErrMalformed},
		{name: "version 2", wasm: []byte("\x00asm\x02\x00\x00\x00"), want: ErrUnsupported},
		{name: "component", wasm: []byte("\x00asm\x0d\x00\x01\x00"), want: ErrUnsupported},
		{name: "section past the end", wasm: cat(magic, []byte{secType}, huge), want: ErrMalformed},
		{name: "section size over 32 bits", wasm: cat(magic, []byte{secType, 0xff, 0xff, 0xff, 0xff, 0x7f}), want: ErrMalformed},
		{name: "unknown section", wasm: wasmModule(section(14)), want: ErrMalformed},
		{name: "custom without name", wasm: wasmModule(section(secCustom)), want: ErrMalformed},
		{name: "huge type count", wasm: wasmModule(section(secType, huge)), want: ErrMalformed},
		{name: "huge param count", wasm: wasmModule(section(secType, uleb(1), []byte{0x60}, huge)), want: ErrMalformed},
		{name: "huge function count", wasm: wasmModule(section(secType, vec(typeVoid)), section(secFunction, huge)), want: ErrMalformed},
		{name: "huge import name", wasm: wasmModule(section(secImport, uleb(1), huge)), want: ErrMalformed},
		{name: "huge br_table", wasm: oneFunc(0x41, 0, 0x0e, 0xff, 0xff, 0xff, 0xff, 0x0f), want: ErrMalformed},
		{name: "huge locals", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secCode, vec(bodyWithLocals(cat(uleb(1), huge, []byte{typeI32}), opEnd)))), want: ErrLimits},
		{name: "huge local groups", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secCode, vec(bodyWithLocals(huge, opEnd)))), want: ErrMalformed},
		{name: "too many locals", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secCode, vec(bodyWithLocals(cat(uleb(2), uleb(30000), []byte{typeI32}, uleb(30000), []byte{typeI64}), opEnd)))), want: ErrLimits},
		{name: "over-long LEB", wasm: wasmModule(section(secType, []byte{0x81, 0x80, 0x80, 0x80, 0x80, 0x00})), want: ErrMalformed},
		{name: "LEB bits past 32", wasm: wasmModule(section(secType, []byte{0x80, 0x80, 0x80, 0x80, 0x10})), want: ErrMalformed},
		{name: "i32.const too large", wasm: oneFunc(0x41, 0x80, 0x80, 0x80, 0x80, 0x40, 0x1a, 0x0b), want: ErrMalformed},
		{name: "truncated body", wasm: oneFunc(0x41), want: ErrMalformed},
		{name: "missing end", wasm: oneFunc(0x01), want: ErrMalformed},
		{name: "bytes after end", wasm: oneFunc(0x0b, 0x01), want: ErrMalformed},
		{name: "unknown opcode", wasm: oneFunc(0xff, 0x0b), want: ErrMalformed},
		{name: "unknown 0xfc opcode", wasm: oneFunc(0xfc, 99, 0x0b), want: ErrMalformed},
		{name: "else without if", wasm: oneFunc(0x05, 0x0b), want: ErrMalformed},
		{name: "two elses", wasm: oneFunc(0x41, 0, 0x04, 0x40, 0x05, 0x05, 0x0b, 0x0b), want: ErrMalformed},
		{name: "label out of range", wasm: oneFunc(0x0c, 1, 0x0b), want: ErrMalformed},
		{name: "call out of range", wasm: oneFunc(0x10, 5, 0x0b), want: ErrMalformed},
		{name: "local out of range", wasm: oneFunc(0x20, 0, 0x1a, 0x0b), want: ErrMalformed},
		{name: "block type out of range", wasm: oneFunc(0x02, 0x05, 0x0b, 0x0b), want: ErrMalformed},
		{name: "negative block type", wasm: oneFunc(0x02, 0x80, 0x7f, 0x0b, 0x0b), want: ErrMalformed},
		{name: "deep nesting", wasm: deep(maxNesting), want: ErrLimits},
		{name: "body count mismatch", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0}, []byte{0})),
			section(secCode, vec(body(0x0b)))), want: ErrMalformed},
		{name: "functions without code", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0}))), want: ErrMalformed},
		{name: "sections out of order", wasm: wasmModule(section(secFunction, vec()), section(secType, vec())), want: ErrMalformed},
		{name: "duplicate section", wasm: wasmModule(section(secType, vec()), section(secType, vec())), want: ErrMalformed},
		{name: "trailing bytes in section", wasm: wasmModule(section(secType, vec(), []byte{0})), want: ErrMalformed},
		{name: "duplicate export", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secExport, vec([]byte{1, 'f', 0, 0}, []byte{1, 'f', 0, 0})),
			section(secCode, vec(body(0x0b)))), want: ErrMalformed},
		{name: "invalid UTF-8 name", wasm: wasmModule(section(secImport, vec(cat([]byte{1, 0xff, 1, 'x', 0, 0})))), want: ErrMalformed},
		{name: "memory over 4 GiB", wasm: wasmModule(section(secMemory, vec(cat([]byte{0}, uleb(maxPages+1))))), want: ErrMalformed},
		{name: "memory max below min", wasm: wasmModule(section(secMemory, vec([]byte{1, 2, 1}))), want: ErrMalformed},
		{name: "global init not constant", wasm: wasmModule(section(secGlobal, vec([]byte{typeI32, 0, 0x20, 0, 0x0b}))), want: ErrMalformed},

		{name: "start out of range", wasm: wasmModule(section(secStart, uleb(0))), want: ErrMalformed},
		{name: "huge element count", wasm: wasmModule(section(secElement, huge)), want: ErrMalformed},
		{name: "huge element vector", wasm: wasmModule(
			section(secTable, vec([]byte{typeFuncref, 0, 1})),
			section(secElement, vec(cat([]byte{0, 0x41, 0, 0x0b}, huge)))), want: ErrMalformed},
		{name: "element function out of range", wasm: wasmModule(
			section(secTable, vec([]byte{typeFuncref, 0, 1})),
			section(secElement, vec([]byte{0, 0x41, 0, 0x0b, 1, 0}))), want: ErrMalformed},
		{name: "element without table", wasm: wasmModule(section(secElement, vec([]byte{0, 0x41, 0, 0x0b, 0}))), want: ErrMalformed},
		{name: "element flags", wasm: wasmModule(section(secElement, vec([]byte{8}))), want: ErrMalformed},
		{name: "huge data count", wasm: wasmModule(section(secData, huge)), want: ErrMalformed},
		{name: "huge data segment", wasm: wasmModule(
			section(secMemory, vec([]byte{0, 1})),
			section(secData, vec(cat([]byte{0, 0x41, 0, 0x0b}, huge)))), want: ErrMalformed},
		{name: "data without memory", wasm: wasmModule(section(secData, vec([]byte{0, 0x41, 0, 0x0b, 0}))), want: ErrMalformed},
		{name: "data count mismatch", wasm: wasmModule(section(secDataCount, uleb(2)), section(secData, vec([]byte{1, 0}))), want: ErrMalformed},
		{name: "memory.init without data count", wasm: oneFunc(0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 8, 0, 0, 0x0b), want: ErrMalformed},
		{name: "elem.drop out of range", wasm: oneFunc(0xfc, 13, 0, 0x0b), want: ErrMalformed},

		// Unsupported features.
		{name: "relaxed SIMD", wasm: oneFunc(cat(v128Const, v128Const, []byte{0xfd, 0x80, 0x02, opDrop, opEnd})...), want: ErrUnsupported},
		{name: "threads opcode", wasm: oneFunc(0x41, 0, 0xfe, 0x10, 2, 0, 0x1a, 0x0b), want: ErrUnsupported},
		{name: "shared memory", wasm: wasmModule(section(secMemory, vec([]byte{3, 1, 1}))), want: ErrUnsupported},
		{name: "64-bit memory", wasm: wasmModule(section(secMemory, vec([]byte{4, 1}))), want: ErrUnsupported},
		{name: "two memories", wasm: wasmModule(section(secMemory, vec([]byte{0, 1}, []byte{0, 1}))), want: ErrUnsupported},
		{name: "multi-memory memarg", wasm: oneFunc(0x41, 0, 0x28, 0x40, 1, 0, 0x1a, 0x0b), want: ErrUnsupported},
		{name: "memory.size of memory 1", wasm: oneFunc(0x3f, 1, 0x1a, 0x0b), want: ErrUnsupported},
		{name: "try", wasm: oneFunc(0x06, 0x40, 0x0b, 0x0b), want: ErrUnsupported},
		{name: "throw", wasm: oneFunc(0x08, 0, 0x0b), want: ErrUnsupported},
		{name: "try_table", wasm: oneFunc(0x1f, 0x40, 0, 0x0b, 0x0b), want: ErrUnsupported},
		{name: "tag section", wasm: wasmModule(section(secTag, vec([]byte{0, 0}))), want: ErrUnsupported},
		{name: "return_call", wasm: oneFunc(0x12, 0, 0x0b), want: ErrUnsupported},
		{name: "call_ref", wasm: oneFunc(0x14, 0, 0x0b), want: ErrUnsupported},
		{name: "GC prefix", wasm: oneFunc(0xfb, 0, 0x0b), want: ErrUnsupported},
		{name: "GC type", wasm: wasmModule(section(secType, vec([]byte{0x5f, 0}))), want: ErrUnsupported},
		{name: "extended const", wasm: wasmModule(section(secGlobal, vec([]byte{typeI32, 0, 0x41, 1, 0x41, 1, 0x6a, 0x0b}))), want: ErrUnsupported},
		{name: "reserved export name", wasm: wasmModule(
			section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})),
			section(secExport, vec(cat([]byte{14}, []byte("toolhost.other"), []byte{0, 0}))),
			section(secCode, vec(body(0x0b)))), want: ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Rewrite(tt.wasm, Options{})
			wantErr(t, err, tt.want)
			if out != nil {
				t.Error("output returned with an error")
			}
			t.Log(err)
		})
	}
}

func TestNameSection(t *testing.T) {
	names := func(payload ...[]byte) []byte {
		return section(secCustom, cat(uleb(4), []byte("name")), cat(payload...))
	}
	good := names([]byte{0, 2, 1, 'm'}, []byte{1, 4, 1, 0, 1, 'f'})
	tests := []struct {
		name    string
		custom  [][]byte
		dropped []string
	}{
		{name: "valid", custom: [][]byte{good}},
		{name: "other sections", custom: [][]byte{section(secCustom, []byte{3, 'a', 'b', 'c', 9, 9}), good}},
		{name: "huge function name count", custom: [][]byte{names([]byte{1, 5}, uleb(0xffffffff))}, dropped: []string{"name"}},
		{name: "huge local count", custom: [][]byte{names([]byte{2, 7, 1, 0}, uleb(0xffffffff))}, dropped: []string{"name"}},
		{name: "subsection past the end", custom: [][]byte{names([]byte{0, 9, 1, 'm'})}, dropped: []string{"name"}},
		{name: "second name section", custom: [][]byte{good, good}, dropped: []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod := oneFunc(0x0b)
			for _, c := range tt.custom {
				mod = append(mod, c...)
			}
			out, info := mustRewrite(t, mod, Options{})
			if !reflect.DeepEqual(info.DroppedCustomSections, tt.dropped) {
				t.Errorf("DroppedCustomSections = %q, want %q", info.DroppedCustomSections, tt.dropped)
			}
			kept := len(tt.custom) - len(tt.dropped)
			if !bytes.HasSuffix(out, cat(tt.custom[:kept]...)) {
				t.Errorf("custom sections not carried over")
			}
			rt := newRuntimeNoEnv(t)
			cm, err := rt.CompileModule(t.Context(), out)
			if err != nil {
				t.Fatalf("compiling the output: %v", err)
			}
			cm.Close(t.Context())
		})
	}
}

// TestAcceptsLimits checks the edges that must still be accepted. The
// nesting case's blocks, each one level deeper in the dominator tree than
// the one before, add up to more than DefaultMaxFunctionDominatorDepths
// (TestDominatorDepths): those limits are lifted here.
func TestAcceptsLimits(t *testing.T) {
	deep := bytes.Repeat([]byte{opBlock, blockEmpty}, maxNesting-1)
	deep = append(deep, bytes.Repeat([]byte{opEnd}, maxNesting)...)
	for name, wasm := range map[string][]byte{
		"empty module":    wasmModule(),
		"nesting":         oneFunc(deep...),
		"locals":          wasmModule(section(secType, vec(typeVoid)), section(secFunction, vec([]byte{0})), section(secCode, vec(bodyWithLocals(cat(uleb(1), uleb(maxLocals), []byte{typeI32}), opEnd)))),
		"non-minimal LEB": oneFunc(0x41, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b),
	} {
		t.Run(name, func(t *testing.T) {
			out := func() []byte {
				o, _ := mustRewrite(t, wasm, Options{MaxFunctionDominatorDepths: 1 << 40, MaxDominatorDepths: 1 << 40})
				return o
			}()
			ctx := t.Context()
			rt := newRuntimeNoEnv(t)
			cm, err := rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("compiling the output: %v", err)
			}
			cm.Close(ctx)
		})
	}
}

// TestTruncations rewrites every prefix of the test modules and of their
// rewritten forms, and a copy with each byte flipped: errors, never panics.
func TestTruncations(t *testing.T) {
	for _, name := range []string{"loop.wasm", "features.wasm"} {
		orig := readTestdata(t, name)
		rewritten, _ := mustRewrite(t, orig, Options{ExportGlobals: true})
		for _, wasm := range [][]byte{orig, rewritten} {
			for n := 0; n < len(wasm); n++ {
				if _, _, err := Rewrite(wasm[:n], Options{}); err == nil {
					// A prefix that ends on a section boundary is a valid
					// module only if no function lacks its code.
					if _, derr := decode(wasm[:n]); derr != nil {
						t.Errorf("%s[:%d]: Rewrite succeeded but decode failed: %v", name, n, derr)
					}
				} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrLimits) {
					t.Errorf("%s[:%d]: error wraps no sentinel: %v", name, n, err)
				}
			}
			mut := bytes.Clone(wasm)
			for i := range mut {
				for _, x := range []byte{0xff, 0x80, 0x01} {
					mut[i] ^= x
					if _, _, err := Rewrite(mut, Options{}); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrLimits) {
						t.Errorf("%s with byte %d ^ %#x: error wraps no sentinel: %v", name, i, x, err)
					}
					mut[i] ^= x
				}
			}
		}
	}
}

package instrument

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzRewrite checks that Rewrite never panics, that every error wraps one
// of the package's sentinels, and that when Rewrite succeeds and wazero
// compiles the input, wazero compiles the output too. Rewrite is not a
// validator: it may accept an invalid input, whose output is then just as
// invalid. wazero sees only inputs Rewrite accepted: its decoder allocates
// on counts the bytes do not back, which Rewrite refuses first.
//
//	go test -run '^$' -fuzz FuzzRewrite -fuzztime 60s ./host/internal/instrument
func FuzzRewrite(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.wat"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		f.Add(readTestdata(f, filepath.Base(name)))
	}
	f.Add(oneFunc(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b))                                        // loop { br 0 }
	f.Add(oneFunc(0x41, 0, 0x41, 0, 0x41, 8, 0xfc, 11, 0, 0x0b))                              // memory.fill
	f.Add(oneFunc(0x41, 1, 0x04, 0x40, 0x0f, 0x05, 0x41, 0, 0x0d, 0, 0x0b, 0x0b))             // if return else br_if
	f.Add(oneFunc(0x02, 0x40, 0x41, 0, 0x0e, 1, 0, 1, 0x0b, 0x10, 0, 0x0b))                   // br_table, call
	f.Add(oneFunc(0x02, 0x40, 0x41, 0, 0x0d, 0, 0x41, 1, 0x04, 0x40, 0x01, 0x0b, 0x0b, 0x0b)) // br_if, then a light if: an else is added
	f.Add(oneFunc(0x02, 0x40, 0x03, 0x40, 0x41, 0, 0x0d, 1, 0x0c, 0, 0x0b, 0x0b, 0x0b))       // a loop paid for by its entries
	f.Add(wasmModule(section(secTable, vec([]byte{typeFuncref, 1, 1, 2})), section(secGlobal, vec([]byte{typeI32, 1, 0x41, 5, 0x0b}))))
	// SIMD: v128.const, i8x16.shuffle, a lane load, a two-byte sub-opcode
	// (i32x4.add), then an extract_lane; and a v128 global.
	f.Add(oneFunc(cat(v128Const, v128Const,
		[]byte{0xfd, 0x0d, 0, 17, 2, 19, 4, 21, 6, 23, 8, 25, 10, 27, 12, 29, 14, 31},
		[]byte{0x41, 0, 0xfd, 0x56, 2, 4, 3}, v128Const, []byte{0xfd, 0xae, 0x01, 0xfd, 0x1b, 3, opDrop, opEnd})...))
	f.Add(wasmModule(section(secGlobal, vec(cat([]byte{typeV128, 1}, v128Const, []byte{opEnd})))))

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, info, err := Rewrite(wasm, Options{ExportGlobals: true, MaxMemoryPages: 64, MaxTableElements: 1000})
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrLimits) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if len(info.DroppedCustomSections) > 0 {
			return // the input's name section may not be safe to decode
		}
		in, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			return
		}
		in.Close(ctx)
		cm, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("wazero compiles the input but not the output: %v", err)
		}
		cm.Close(ctx)
	})
}

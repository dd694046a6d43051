package instrument

import (
	"testing"

	"github.com/tetratelabs/wazero"
)

// An imaged module has no start section: the image holds what the start
// function did, and instantiating the output runs nothing (with no initial
// fuel, a start function would trap on entry).
func TestImageDropsTheStart(t *testing.T) {
	wasm := readTestdata(t, "start_memory.wat")
	out, _ := mustRewrite(t, wasm, Options{ExportGlobals: true, Image: &Image{Globals: map[uint32]uint64{0: 1}, MemoryPages: 1}})
	m, err := decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.hasStart {
		t.Fatal("the imaged module kept its start section")
	}
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatalf("instantiating the imaged module: %v", err)
	}
	mod.ExportedGlobal(FuelGlobal).(interface{ Set(uint64) }).Set(1000)
	if res, err := mod.ExportedFunction("ready").Call(ctx); err != nil || res[0] != 1 {
		t.Errorf("ready() = %v, %v; want the image's 1", res, err)
	}
	// Not imaged, the start function still runs, on the initial fuel.
	out, _ = mustRewrite(t, wasm, Options{})
	if _, err := rt.InstantiateWithConfig(ctx, out, wazero.NewModuleConfig().WithName("plain")); err == nil {
		t.Error("the start function ran with no initial fuel")
	}
}

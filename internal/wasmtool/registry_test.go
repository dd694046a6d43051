package wasmtool_test

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// The registry names the folder's files, the queued phase and a refused
// declaration by its own constants: they are the loader's.
func TestRegistryNamesAgree(t *testing.T) {
	for _, tt := range []struct{ name, loader, registry string }{
		{name: "sidecar suffix", loader: wasmtool.SidecarSuffix, registry: registry.SidecarSuffix},
		{name: "sidecar path", loader: wasmtool.SidecarPath("/tools/a.b.wasm"), registry: registry.SidecarPath("/tools/a.b.wasm")},
		{name: "queued", loader: wasmtool.PhaseQueued, registry: registry.PhaseQueued},
		{name: "declaration refused", loader: string(wasmtool.DeclarationRefused), registry: registry.DeclarationRefused},
		{name: "interpreter tier", loader: wasmtool.TierInterpreter, registry: registry.TierInterpreter},
		{name: "compiled tier", loader: wasmtool.TierCompiled, registry: registry.TierCompiled},
	} {
		if tt.loader != tt.registry {
			t.Errorf("%s: wasmtool %q, registry %q", tt.name, tt.loader, tt.registry)
		}
	}
}

// Unreadable refuses from the stat alone what the read would refuse, with
// the read's codes, which the registry reads through registry.LoadRefusal.
func TestUnreadable(t *testing.T) {
	l := newLoader(t)
	for _, tt := range []struct {
		name    string
		module  registry.FileStat
		sidecar *registry.FileStat
		want    wasmtool.LoadReason // "": readable
	}{
		{name: "a module", module: registry.FileStat{Regular: true, Size: 1 << 20}},
		{name: "at the limits", module: registry.FileStat{Regular: true, Size: wasmtool.MaxModuleBytes},
			sidecar: &registry.FileStat{Regular: true, Size: wasmtool.MaxSidecarBytes}},
		{name: "a FIFO", module: registry.FileStat{Size: 0}, want: wasmtool.NotRegular},
		{name: "a large module", module: registry.FileStat{Regular: true, Size: wasmtool.MaxModuleBytes + 1}, want: wasmtool.ModuleTooLarge},
		{name: "a large sidecar", module: registry.FileStat{Regular: true, Size: 8},
			sidecar: &registry.FileStat{Regular: true, Size: wasmtool.MaxSidecarBytes + 1}, want: wasmtool.SidecarTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Unreadable(tt.module, tt.sidecar)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var lr registry.LoadRefusal
			if !errors.As(err, &lr) {
				t.Fatalf("error %v is no registry.LoadRefusal", err)
			}
			if reason, detail := lr.Refusal(); reason != string(tt.want) || detail != "" {
				t.Errorf("refusal %q/%q, want %q", reason, detail, tt.want)
			}
		})
	}
}

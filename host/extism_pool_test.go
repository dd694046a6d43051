package host_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

// An existing Extism plugin with a start section (AssemblyScript's runtime
// initialises there) is imaged and pooled. A sequence of items gives on its
// pooled instances what it gives on fresh instances of the image — output,
// error and fuel, item by item — and the output it gives with no image at
// all, start function run per item.
func TestExtismPluginPooledAsFresh(t *testing.T) {
	wasm := testkit.Extism(t, "vowels")
	ctx := context.Background()
	loadWith := func(cfg host.Config, s hosttest.Switches) *host.Module {
		m, err := newRuntimeWith(t, cfg, s).Load(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	pooled := loadWith(host.Config{IdleInstances: 1}, hosttest.Switches{})
	fresh := loadWith(host.Config{}, hosttest.Switches{FreshInstances: true})
	unimaged := loadWith(host.Config{}, hosttest.Switches{FreshInstances: true, NoPreinitialise: true})
	if ok, why := pooled.Preinitialised(); !ok {
		t.Fatalf("vowels is not imaged: %v", why)
	}
	if ok, why := pooled.Pooled(); !ok {
		t.Fatalf("vowels is not pooled: %v", why)
	}
	call := func(m *host.Module, in string) string {
		res, err := m.Call(ctx, "count_vowels", []byte(in), host.Limits{})
		if err != nil {
			return "error " + err.Error()
		}
		return fmt.Sprintf("%s fuel %d", res.Output, res.FuelUsed)
	}
	inputs := []string{`{"text":"Hello, World"}`, `{"text":""}`, `{}`, `not json`, `{"text":"AEIOU aeiou xyz"}`, `{"text":"Hello, World"}`}
	for i, in := range inputs {
		if a, b := call(pooled, in), call(fresh, in); a != b {
			t.Errorf("item %d %s: pooled %s, fresh %s", i, in, a, b)
		}
		a, _ := pooled.Call(ctx, "count_vowels", []byte(in), host.Limits{})
		c, _ := unimaged.Call(ctx, "count_vowels", []byte(in), host.Limits{})
		if (a == nil) != (c == nil) || a != nil && !bytes.Equal(a.Output, c.Output) {
			t.Errorf("item %d %s: imaged %v, start run per item %v", i, in, a, c)
		}
	}
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// buildModule builds the package in dir as make wasm does (-trimpath -tags
// guestgen) and returns the module's path.
func buildModule(b *testing.B, dir string) string {
	b.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), filepath.Base(abs)+".wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "guestgen", "-buildmode=c-shared", "-o", out, dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building: %v\n%s", err, msg)
	}
	if fi, err := os.Stat(out); err == nil {
		b.Logf("%s: %d bytes", filepath.Base(out), fi.Size())
	}
	return out
}

// loadModule loads path in a runtime of its own on the default platform.
func loadModule(b *testing.B, path string, cfg host.Config) *wasmtool.Tool {
	b.Helper()
	ctx := context.Background()
	rt, err := host.NewRuntime(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		b.Fatal(err)
	}
	tool, err := l.LoadFile(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tool.Close(ctx) })
	return tool
}

// BenchmarkLoad is the module's load on a cold compilation cache: wazero's
// compile, the pre-initialisation and describe; the text package's module
// beside it, a reference under the same machine load.
func BenchmarkLoad(b *testing.B) {
	for _, dir := range []string{".", "../text"} {
		path := buildModule(b, dir)
		b.Run(filepath.Base(path), func(b *testing.B) {
			for b.Loop() {
				loadModule(b, path, host.Config{CacheDir: b.TempDir()})
			}
		})
	}
}

// BenchmarkFreshItem is the whole per-item path — strict decoding, input
// validation, a fresh instance from the pre-initialised image, compute,
// output validation and encoding — for each service on about 1 KiB of
// input, as internal/wasmtool's BenchmarkFreshItem does for the first
// bundled tools.
func BenchmarkFreshItem(b *testing.B) {
	md := strings.Repeat(`## Notes\n\nSome *emphasis*, a [link](https://x.test) and `+"`code`"+`.\n\n- [x] done\n- todo\n\n`, 12)
	page := `<html><head><title>T</title></head><body>` + strings.Repeat(`<h2>Zoë</h2><p>Text &amp; <a href=\"https://x.test\">a link</a>.</p><ul><li>one</li></ul>`, 12) + `</body></html>`
	items := []struct{ name, code, params string }{
		{"markdown_to_html", "markdown", `{"operation":"to_html","text":"` + md + `"}`},
		{"html_to_text", "html_to_text", `{"operation":"convert","text":"` + page + `"}`},
	}
	path := buildModule(b, ".")
	cache := b.TempDir()
	for _, mode := range []struct {
		name  string
		fresh bool
	}{{"fresh", true}, {"pooled", false}} {
		tool := loadModule(b, path, host.Config{CacheDir: cache, FreshInstances: mode.fresh})
		for _, it := range items {
			b.Run(mode.name+"/"+it.name, func(b *testing.B) {
				b.ReportAllocs()
				var times []time.Duration
				var fuel int64
				for b.Loop() {
					start := time.Now()
					out, err := tool.Run(context.Background(), it.code, []byte(it.params), wasmtool.Deadlines{})
					if err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
					fuel = out.FuelUsed
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
				b.ReportMetric(float64(fuel)/1e6, "Mfuel")
			})
		}
	}
}

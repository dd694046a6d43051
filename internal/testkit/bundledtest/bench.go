package bundledtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// BenchItem is one item a package's benchmarks run: Code is the service,
// Params its parameters, Name the sub-benchmark's name.
type BenchItem struct{ Name, Code, Params string }

// BuildModule builds the tool package plugins-src/<dir> for wasip1 as make
// wasm does (-trimpath -tags guestgen -buildmode=c-shared) and returns the
// module's path; it logs the module's size.
func BuildModule(tb testing.TB, dir string) string {
	tb.Helper()
	// go test puts its own toolchain's bin first on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("no go command to build %s: %v", dir, err)
	}
	out := filepath.Join(tb.TempDir(), dir+".wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-tags", "guestgen", "-buildmode=c-shared", "-o", out,
		"github.com/toolhost/toolhost/plugins-src/"+dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", dir, err, msg)
	}
	if fi, err := os.Stat(out); err == nil {
		tb.Logf("%s: %d bytes", filepath.Base(out), fi.Size())
	}
	return out
}

// BenchLoad is the load of each package's module on a cold compilation
// cache — wazero's compile, the pre-initialisation and describe — one
// sub-benchmark per package: name the text package beside a new one for a
// reference under the same machine load.
func BenchLoad(b *testing.B, dirs ...string) {
	for _, dir := range dirs {
		path := BuildModule(b, dir)
		b.Run(dir, func(b *testing.B) {
			for b.Loop() {
				loadIn(b, path, host.Config{CacheDir: b.TempDir()}, hosttest.Switches{})
			}
		})
	}
}

// BenchItems runs each item through the whole per-item path — strict
// decoding, input validation, an instance from the pre-initialised image,
// compute, output validation and encoding — on the module of package dir
// as make wasm builds it, on fresh instances and on pooled ones (as
// internal/wasmtool's BenchmarkFreshItem does for the first bundled
// tools). It reports the median item (median-µs) and its fuel (Mfuel).
func BenchItems(b *testing.B, dir string, items []BenchItem) {
	path := BuildModule(b, dir)
	cache := b.TempDir()
	for _, mode := range []struct {
		name  string
		fresh bool
	}{{"fresh", true}, {"pooled", false}} {
		tool, _ := loadIn(b, path, host.Config{CacheDir: cache}, hosttest.Switches{FreshInstances: mode.fresh})
		for _, it := range items {
			b.Run(mode.name+"/"+it.Name, func(b *testing.B) {
				b.ReportAllocs()
				var times []time.Duration
				var fuel int64
				for b.Loop() {
					start := time.Now()
					out, err := tool.Run(context.Background(), it.Code, []byte(it.Params), wasmtool.Deadlines{})
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

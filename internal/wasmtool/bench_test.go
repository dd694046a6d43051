package wasmtool_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// kibText is the 1 KiB text the per-item benchmarks send.
var kibText = strings.Repeat("Héllo Wörld, ", 1024/14+1)[:1024]

func benchItem(b *testing.B, pkg, code, params string) {
	l := newLoader(b)
	tool, err := l.Load(context.Background(), testkit.Go(b, pkg), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tool.Close(context.Background())
	b.ReportAllocs()
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := tool.Run(context.Background(), code, []byte(params), wasmtool.Deadlines{}); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	// The target is on the median item, which the mean ns/op hides.
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
}

// BenchmarkFreshItem is the whole per-item path on a bundled Go tool: strict
// decoding, input validation, a fresh instance, compute, output validation
// and encoding, with 1 KiB of text.
func BenchmarkFreshItem(b *testing.B) {
	b.Run("hash", func(b *testing.B) {
		benchItem(b, "plugins-src/codec", "hash", `{"operation":"digest","text":"`+kibText+`","algorithm":"sha256","encoding":"hex"}`)
	})
	b.Run("case", func(b *testing.B) {
		benchItem(b, "plugins-src/text", "case", `{"operation":"convert","text":"`+kibText+`","to":"snake"}`)
	})
	b.Run("json", func(b *testing.B) {
		benchItem(b, "plugins-src/markup", "json", `{"operation":"minify","text":"{\"a\": [1, 2, 3], \"b\": \"`+kibText+`\"}"}`)
	})
}

package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/toolhost/toolhost/host/internal/instrument"
	"github.com/toolhost/toolhost/host/internal/switches"
	"github.com/toolhost/toolhost/internal/testkit"
)

// kib is 1 KiB of text for the per-item benchmarks.
var kib = strings.Repeat("Héllo Wörld, ", 80)[:1024]

var hashEnvelope = []byte(`{"operation":"digest","parameters":{"operation":"digest","text":"` + kib + `","algorithm":"sha256","encoding":"hex"},"tool_code":"hash"}`)

func loadCodec(b *testing.B, s switches.Switches) *Module {
	b.Helper()
	r, err := NewRuntime(switches.With(context.Background(), s), Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(context.Background()) })
	m, err := r.Load(context.Background(), testkit.Go(b, "plugins-src/codec"))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkItem is one item of the bundled hash tool on 1 KiB of text,
// each with fresh state: on a pooled instance reset to the image (the
// default; its memory a private mapping of the image reset with madvise,
// or, in pooled/copy, a buffer the image is copied back into), on a new
// instance from the pre-initialised image, and on a new instance that runs
// _initialize. It reports the median and p99 item beside the mean.
func BenchmarkItem(b *testing.B) {
	for _, c := range []struct {
		name string
		sw   switches.Switches
		copy bool
	}{
		{"pooled/mapped", switches.Switches{}, false},
		{"pooled/copy", switches.Switches{}, true},
		{"fresh/image", switches.Switches{FreshInstances: true}, false},
		{"fresh/initialize", switches.Switches{FreshInstances: true, NoPreinitialise: true}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			noMapping = c.copy
			defer func() { noMapping = false }()
			m := loadCodec(b, c.sw)
			b.ReportAllocs()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := m.Call(context.Background(), "compute", hashEnvelope, Limits{}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			reportQuantiles(b, took)
			if st := m.rt.InstanceStats(); c.sw.FreshInstances == (st.Reused > 0) {
				b.Fatalf("instance stats %+v", st)
			}
		})
	}
	// warm calls compute again and again on one instance: what reusing an
	// instance would cost, which Toolhost never does (isolation).
	b.Run("warm", func(b *testing.B) {
		m := loadCodec(b, switches.Switches{})
		s := &callState{ctx: context.Background(), limits: Limits{}.withDefaults()}
		ctx := experimental.WithMemoryAllocator(context.WithValue(context.Background(), callStateKey{}, s), allocator{s: s, image: m.image})
		inst, err := m.cur.rt.InstantiateModule(ctx, m.cur.compiled, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			b.Fatal(err)
		}
		defer inst.Close(context.Background())
		inst.ExportedGlobal(instrument.FuelGlobal).(api.MutableGlobal).Set(1 << 62)
		compute := inst.ExportedFunction("compute")
		b.ReportAllocs()
		for b.Loop() {
			cs := &callState{ctx: context.Background(), limits: s.limits, input: hashEnvelope, memory: s.memory}
			if _, err := compute.Call(context.WithValue(context.Background(), callStateKey{}, cs)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// native is the same transform without a sandbox: SHA-256 of 1 KiB and
	// hex encoding, in Go on the host.
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sum := sha256.Sum256([]byte(kib))
			_ = hex.EncodeToString(sum[:])
		}
	})
}

// reportQuantiles reports the median and p99 of took, in ms.
func reportQuantiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e6, "median-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e6, "p99-ms")
}

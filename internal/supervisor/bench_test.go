//go:build linux

package supervisor

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkNativeItem measures what one native item costs beyond its
// computation: spawning the worker, the handshake, the job cgroup, the
// frames, and the confirmed cleanup of the process tree, for a trivial
// echo. It reports the median beside the mean.
func BenchmarkNativeItem(b *testing.B) {
	for _, mode := range modes(b) {
		b.Run(mode, func(b *testing.B) {
			s, err := New(Config{Env: []string{testWorkerEnv + "=1"}, CgroupParent: testParent("-bench"),
				MemoryMode: mode, Logger: discard()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			r := s.Runner(probePackage("1.0.0"))
			job := probeJob(b, params("echo", `"text":"hello"`), nil)
			durations := make([]time.Duration, 0, b.N)
			var startup time.Duration
			b.ResetTimer()
			for b.Loop() {
				job.ExecutionID = newID()
				start := time.Now()
				out, err := r.Run(context.Background(), job)
				durations = append(durations, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				startup += *out.Phases.Startup
			}
			b.StopTimer()
			slices.Sort(durations)
			b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "median-ms/item")
			b.ReportMetric(float64(startup.Microseconds())/1000/float64(len(durations)), "startup-ms/item")
		})
	}
}

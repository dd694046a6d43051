//go:build linux

package supervisor

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkNativeItem measures what one native item costs beyond its
// computation, for a trivial echo: the worker's start (spawn and Go
// runtime) unless a spare is ready, the handshake, the job cgroup, the
// frames, and the confirmed cleanup of the process tree. Each memory mode
// runs side by side without spares (spares=0: every item a fresh worker)
// and with them: spares=2 waits, outside the timer, until both spares are
// ready before each item (an item on a quiet server); spares=2-busy waits
// only for one, so the previous item's replacement starts beside the item
// (items back to back, one at a time). It reports the median beside the
// mean, the mean startup phase (spawn or hand-off → ACK) and cleanup phase,
// and the share of items a spare served.
func BenchmarkNativeItem(b *testing.B) {
	for _, mode := range modes(b) {
		for _, v := range []struct {
			name        string
			spares, min int
		}{{"spares=0", 0, 0}, {"spares=2", 2, 2}, {"spares=2-busy", 2, 1}} {
			b.Run(fmt.Sprintf("%s/%s", mode, v.name), func(b *testing.B) {
				benchItems(b, mode, v.spares, v.min)
			})
		}
	}
}

// benchItems runs b.N items on a supervisor in mode with spares, waiting
// before each until min spares are ready.
func benchItems(b *testing.B, mode string, spares, min int) {
	s, err := New(Config{Env: []string{testWorkerEnv + "=1"}, CgroupParent: testParent("-bench"),
		MemoryMode: mode, Logger: discard(), Spares: spares})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	r := s.Runner(probePackage("1.0.0"))
	job := probeJob(b, params("echo", `"text":"hello"`), nil)
	durations := make([]time.Duration, 0, b.N)
	var startup, cleanup time.Duration
	b.ResetTimer()
	for range b.N {
		if min > 0 {
			b.StopTimer()
			awaitSpares(b, s, min)
			b.StartTimer()
		}
		job.ExecutionID = newID()
		start := time.Now()
		out, err := r.Run(context.Background(), job)
		durations = append(durations, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		startup += *out.Phases.Startup
		cleanup += *out.Phases.Cleanup
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "median-ms/item")
	b.ReportMetric(float64(startup.Microseconds())/1000/float64(len(durations)), "startup-ms/item")
	b.ReportMetric(float64(cleanup.Microseconds())/1000/float64(len(durations)), "cleanup-ms/item")
	st := s.Stats()
	b.ReportMetric(float64(st.SparesUsed)/float64(max(1, st.SparesUsed+st.FreshWorkers)), "spare-share")
}

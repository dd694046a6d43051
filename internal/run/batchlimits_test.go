package run

import (
	"testing"

	"github.com/toolhost/toolhost/internal/policy"
)

// TestBatchLimits: the seed-000 per-principal batch limits — one batch of
// a principal at a time by default, its slot held until its last item is
// settled; a principal's pending items bounded apart from its batch count,
// each item given back as it is settled; other principals unaffected.
func TestBatchLimits(t *testing.T) {
	// take takes a batch of n items and returns what gives one back, as
	// the executor's Settled would.
	take := func(t *testing.T, l *batchLimits, p policy.Platform, principal string, n int, want bool) func() {
		t.Helper()
		if ok := l.take(p, principal, n); ok != want {
			t.Fatalf("take(%s, %d) = %v, want %v (load %+v)", principal, n, ok, want, l.load)
		}
		left := n
		return func() {
			left--
			l.settle(principal, left == 0)
		}
	}
	settle := func(f func(), n int) {
		for range n {
			f()
		}
	}

	t.Run("one batch per principal", func(t *testing.T) {
		var l batchLimits
		p := policy.DefaultPlatform() // one batch, four items
		a := take(t, &l, p, "app:1", 4, true)
		take(t, &l, p, "app:1", 1, false)
		b := take(t, &l, p, "app:2", 4, true)
		settle(a, 3)
		take(t, &l, p, "app:1", 1, false) // the slot waits for the batch's last item
		settle(a, 1)
		settle(take(t, &l, p, "app:1", 4, true), 4)
		settle(b, 4)
		if len(l.load) != 0 {
			t.Fatalf("load after every batch settled: %+v", l.load)
		}
	})
	t.Run("pending items apart from batches", func(t *testing.T) {
		var l batchLimits
		p := policy.DefaultPlatform()
		p.MaxConcurrentBatchesPerPrincipal = 2
		first := take(t, &l, p, "app:1", 3, true)
		take(t, &l, p, "app:1", 2, false) // 3 + 2 > 4
		second := take(t, &l, p, "app:1", 1, true)
		take(t, &l, p, "app:1", 1, false) // a third batch
		settle(second, 1)
		settle(first, 1) // two of first's items still held
		settle(take(t, &l, p, "app:1", 2, true), 2)
		take(t, &l, p, "app:1", 3, false) // 2 + 3 > 4
		settle(first, 2)
		if len(l.load) != 0 {
			t.Fatalf("load after every batch settled: %+v", l.load)
		}
	})
}

// Each App has its own limits, the same for all its batches.
func TestAppBatchLimits(t *testing.T) {
	a, b := new(App), new(App)
	if l := a.batchLimits(); a.batchLimits() != l || b.batchLimits() == l {
		t.Fatal("an App's batch limits are not its own")
	}
}

package guard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// backends are the limiter and semaphores a test runs over: in process,
// and in the shared test Redis under a prefix of the test's own.
var backends = []struct {
	name string
	make func(t *testing.T) (Limiter, Semaphores)
}{
	{"memory", func(*testing.T) (Limiter, Semaphores) { return NewMemoryLimiter(), NewMemorySemaphores() }},
	{"redis", func(t *testing.T) (Limiter, Semaphores) {
		rdb, _ := redistest.Shared(t)
		return redisBacked(rdb)(t)
	}},
}

// TestLimiterPeekReset: Peek reads a bucket without spending from it — a
// new one is full — and Reset fills it up again.
func TestLimiterPeekReset(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			l, _ := b.make(t)
			ctx := context.Background()
			a := Allowance{Burst: 5, PerMinute: 60} // a second a unit
			if lv, err := l.Peek(ctx, "k", a, time.Now()); err != nil || lv != (Level{Remaining: 5}) {
				t.Fatalf("a new bucket: %+v %v", lv, err)
			}
			if tk, err := l.Take(ctx, "k", a, 3, time.Now()); err != nil || !tk.OK {
				t.Fatalf("take: %+v %v", tk, err)
			}
			for range 2 { // twice: a peek spends nothing
				lv, err := l.Peek(ctx, "k", a, time.Now())
				if err != nil || lv.Remaining != 2 || lv.Reset <= 2*time.Second || lv.Reset > 3*time.Second {
					t.Fatalf("after spending 3 of 5: %+v %v", lv, err)
				}
			}
			if err := l.Reset(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			if lv, err := l.Peek(ctx, "k", a, time.Now()); err != nil || lv != (Level{Remaining: 5}) {
				t.Fatalf("after Reset: %+v %v", lv, err)
			}
			if err := l.Reset(ctx, "k"); err != nil {
				t.Fatalf("resetting a full bucket: %v", err)
			}
			if tk, err := l.Take(ctx, "k", a, 5, time.Now()); err != nil || !tk.OK {
				t.Fatalf("the whole burst after Reset: %+v %v", tk, err)
			}
		})
	}
}

// TestInspectAndReset: a caller's two jobs hold two slots and spent two
// units; Inspect shows them in their class and column, Reset frees them
// and says what it freed, and Inspect then shows nothing. Another caller
// keeps its own.
func TestInspectAndReset(t *testing.T) {
	tbl := smallTable()
	tbl.Classes["other"] = Class{User: Allowance{Burst: 9, PerMinute: 60}}
	tbl.Classes["work"] = Class{Anonymous: Allowance{Burst: 4, PerMinute: 1, ConcurrentPerCaller: 2, ConcurrentPerTier: 8}}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			lim, sems := b.make(t)
			g := newGuard(t, Config{Mode: Enforce, Quotas: tbl, Limiter: lim, Semaphores: sems})
			ctx := context.Background()
			req := Request{QuotaClass: "work", Cost: 1, Anonymous: true, SlotLease: time.Minute}
			a, other := anon("203.0.113.7"), anon("203.0.113.8")
			for _, c := range []Caller{a, a, other} {
				if d, _ := g.Admit(ctx, c, req); !d.Allowed {
					t.Fatalf("admitting %s: %+v", c.Key, d)
				}
			}
			if d, _ := g.Admit(ctx, a, req); d.Allowed || d.Reason != ReasonConcurrency {
				t.Fatalf("a third job of two: %+v", d)
			}

			h, err := g.Inspect(ctx, a.Key)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Cells) != 1 {
				t.Fatalf("cells %+v, want work/anonymous alone", h.Cells)
			}
			c := h.Cells[0]
			if c.Class != "work" || c.Column != "anonymous" || c.Burst != 4 || c.Remaining != 2 ||
				c.FullInMS <= 60_000 || c.FullInMS > 120_000 || c.ConcurrentPerCaller != 2 || len(c.Slots) != 2 {
				t.Fatalf("cell %+v", c)
			}
			for _, s := range c.Slots {
				if len(s.Holder) != 32 || time.Until(s.Expires) <= 0 || time.Until(s.Expires) > time.Minute+time.Second {
					t.Fatalf("slot %+v", s)
				}
			}

			freed, err := g.Reset(ctx, a.Key)
			if err != nil || len(freed.Cells) != 1 || len(freed.Cells[0].Slots) != 2 || freed.Cells[0].Remaining != 2 {
				t.Fatalf("reset: %+v %v", freed, err)
			}
			if h, err := g.Inspect(ctx, a.Key); err != nil || len(h.Cells) != 0 {
				t.Fatalf("after reset: %+v %v", h, err)
			}
			if h, err := g.Inspect(ctx, other.Key); err != nil || len(h.Cells) != 1 || len(h.Cells[0].Slots) != 1 {
				t.Fatalf("the other caller after a's reset: %+v %v", h, err)
			}
			// a's jobs' slots in the tier's semaphore went with them (one
			// holder id a job); the other caller's stays.
			if n := g.InFlight("work", "anonymous", ""); n != 1 {
				t.Fatalf("the tier holds %d slots after a's reset, want the other caller's 1", n)
			}
			// The slots and the units are a's again: two jobs, a full
			// bucket of four.
			for i := range 2 {
				d, _ := g.Admit(ctx, a, req)
				if !d.Allowed || (i == 1 && first(d.Limits.Limit) != `"work";r=2;t=120`) {
					t.Fatalf("job %d after reset: %+v", i, d)
				}
			}
		})
	}
}

// TestInspectCallerKey: a key that could not be a quota key is refused.
func TestInspectCallerKey(t *testing.T) {
	g := newGuard(t, Config{})
	for _, key := range []string{"", "ip:1\x00x"} {
		if _, err := g.Inspect(context.Background(), key); !errors.Is(err, ErrCallerKey) {
			t.Errorf("Inspect(%q): %v", key, err)
		}
		if _, err := g.Reset(context.Background(), key); !errors.Is(err, ErrCallerKey) {
			t.Errorf("Reset(%q): %v", key, err)
		}
	}
}

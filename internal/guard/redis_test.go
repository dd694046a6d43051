package guard

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// sharedStore, when set, gives newGuard a Redis limiter and semaphores.
var sharedStore func(t *testing.T) (Limiter, Semaphores)

// redisBacked returns a function giving each guard its own key prefix
// on rdb.
func redisBacked(rdb redis.UniversalClient) func(t *testing.T) (Limiter, Semaphores) {
	return func(t *testing.T) (Limiter, Semaphores) {
		p := redistest.Prefix(t)
		s := NewRedisSemaphores(rdb, p, 0)
		t.Cleanup(func() { s.Close() })
		return NewRedisLimiter(rdb, p), s
	}
}

// TestAgainstRedis runs the guard's tests again with the quotas, throttles
// and semaphores in Redis (TOOLHOST_TEST_REDIS): the same admissions and
// the same answers as the in-process implementation. The tests that
// advance an injected clock to see a bucket refill
// (TestRetryAfterThenAllowed, TestPerTargetThrottleAcrossCallers) are not
// among them: the Redis limiter reads Redis's clock, and
// TestRedisLimiterRefills sees its refill in real time.
func TestAgainstRedis(t *testing.T) {
	rdb := redistest.Client(t, redistest.URL(t))
	sharedStore = redisBacked(rdb)
	defer func() { sharedStore = nil }()
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"TierAllowances", TestTierAllowances},
		{"CostExceedsAllowance", TestCostExceedsAllowance},
		{"SpoofedForwardedForSharesBucket", TestSpoofedForwardedForSharesBucket},
		{"AddressKeys", TestAddressKeys},
		{"ParallelNeverOverAdmits", TestParallelNeverOverAdmits},
		{"AuthAndCapability", TestAuthAndCapability},
		{"ReportMode", TestReportMode},
		{"Semaphores", TestSemaphores},
		{"RefusalGivesBack", TestRefusalGivesBack},
		{"Resolve", TestResolve},
		{"ChallengeHook", TestChallengeHook},
		{"PerTargetThrottleByAddressAcrossTools", TestPerTargetThrottleByAddressAcrossTools},
		{"PerTargetThrottleBulk", TestPerTargetThrottleBulk},
	} {
		t.Run(tc.name, tc.f)
	}
}

// TestRedisLimiterMatchesMemory takes the same sequence of costs from
// both limiters, the memory one at one instant and the Redis one on
// Redis's clock, over a bucket slow enough (a minute a unit) that the
// milliseconds the sequence takes change no whole unit: every admission
// and Remaining is equal, and Retry-After and Reset differ by no more
// than the time the sequence took.
func TestRedisLimiterMatchesMemory(t *testing.T) {
	rdb, prefix := redistest.Shared(t)
	red, mem := NewRedisLimiter(rdb, prefix), NewMemoryLimiter()
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	a := Allowance{Burst: 7, PerMinute: 1}
	costs := []int{1, 3, 2, 2, 1, 7, 8, 1, 4, 1, 1, 2, 5, 1}
	start := time.Now()
	for i, n := range costs {
		m, err := mem.Take(ctx, "k", a, n, now)
		if err != nil {
			t.Fatal(err)
		}
		r, err := red.Take(ctx, "k", a, n, now)
		if err != nil {
			t.Fatal(err)
		}
		slack := time.Since(start) + time.Millisecond
		if m.OK != r.OK || m.Remaining != r.Remaining || !within(r.RetryAfter, m.RetryAfter, slack) || !within(r.Reset, m.Reset, slack) {
			t.Fatalf("take %d (cost %d): memory %+v, redis %+v", i, n, m, r)
		}
		if r.OK && (i == 1 || i == 9) {
			// Give them back on both: the next answers still agree.
			m.Undo()
			r.Undo()
			r.Undo() // once only
		}
	}
}

// within reports whether got is want, or less by at most slack (time
// that passed on Redis's clock), or both are "never".
func within(got, want, slack time.Duration) bool {
	if got == time.Duration(math.MaxInt64) || want == time.Duration(math.MaxInt64) {
		return got == want
	}
	return got <= want+time.Millisecond && want-got <= slack
}

// TestRedisLimiterRefills spends a fast bucket (200 ms a unit) and waits
// the Retry-After it answers, on the real clock: the unit is back, as
// Peek saw it coming.
func TestRedisLimiterRefills(t *testing.T) {
	rdb, prefix := redistest.Shared(t)
	l := NewRedisLimiter(rdb, prefix)
	ctx := context.Background()
	a := Allowance{Burst: 2, PerMinute: 300}
	if tk, err := l.Take(ctx, "k", a, 2, time.Time{}); err != nil || !tk.OK || tk.Remaining != 0 {
		t.Fatalf("spending the burst: %+v %v", tk, err)
	}
	tk, err := l.Take(ctx, "k", a, 1, time.Time{})
	if err != nil || tk.OK || tk.RetryAfter <= 0 || tk.RetryAfter > 200*time.Millisecond || tk.Reset < tk.RetryAfter {
		t.Fatalf("an empty bucket: %+v %v", tk, err)
	}
	lv, err := l.Peek(ctx, "k", a, time.Time{})
	if err != nil || lv.Remaining != 0 || lv.Reset <= 0 || lv.Reset > tk.Reset {
		t.Fatalf("peek of an empty bucket: %+v %v (the refusal's reset %v)", lv, err, tk.Reset)
	}
	time.Sleep(tk.RetryAfter + 10*time.Millisecond)
	if tk, err := l.Take(ctx, "k", a, 1, time.Time{}); err != nil || !tk.OK {
		t.Fatalf("after Retry-After: %+v %v", tk, err)
	}
}

// TestRedisLimiterIgnoresNow: takes told a time an hour ahead, an hour
// behind or none at all answer as takes told the real time, because the
// script reads Redis's clock — replicas with skewed clocks share one.
func TestRedisLimiterIgnoresNow(t *testing.T) {
	rdb, prefix := redistest.Shared(t)
	l := NewRedisLimiter(rdb, prefix)
	ctx := context.Background()
	a := Allowance{Burst: 5, PerMinute: 1}
	start := time.Now()
	for i, skew := range []time.Time{time.Now().Add(time.Hour), time.Now().Add(-time.Hour), {}, time.Now().Add(24 * time.Hour), time.Now()} {
		skewed, err := l.Take(ctx, "skewed", a, 1, skew)
		if err != nil {
			t.Fatal(err)
		}
		truth, err := l.Take(ctx, "real", a, 1, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		slack := time.Since(start) + time.Millisecond
		if !skewed.OK || skewed.Remaining != 4-i || skewed.OK != truth.OK || skewed.Remaining != truth.Remaining ||
			(skewed.Reset-truth.Reset).Abs() > slack {
			t.Fatalf("take %d told %v: %+v; told the real time: %+v", i, skew, skewed, truth)
		}
	}
	if tk, err := l.Take(ctx, "skewed", a, 1, time.Now().Add(time.Hour)); err != nil || tk.OK {
		t.Fatalf("a sixth unit of five, told an hour ahead: %+v %v", tk, err)
	}
}

// TestRedisLimiterAcrossReplicas: four limiters, as four replicas, over
// one Redis take from one bucket in parallel and admit together exactly
// its burst.
func TestRedisLimiterAcrossReplicas(t *testing.T) {
	url := redistest.URL(t)
	prefix := redistest.Prefix(t)
	a := Allowance{Burst: 40, PerMinute: 1}
	now := time.Now()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		l := NewRedisLimiter(redistest.Client(t, url), prefix)
		for range 50 {
			wg.Go(func() {
				tk, err := l.Take(context.Background(), "shared", a, 1, now)
				if err != nil {
					t.Error(err)
				}
				if tk.OK {
					ok.Add(1)
				}
			})
		}
	}
	wg.Wait()
	if n := ok.Load(); n != 40 {
		t.Fatalf("admitted %d of 200, want exactly the burst, 40", n)
	}
}

// TestRedisSemaphoreLease: a slot a holder stops renewing (a replica that
// died) is free once its lease has passed; a slot renewed outlives it.
func TestRedisSemaphoreLease(t *testing.T) {
	rdb, prefix := redistest.Shared(t)
	ctx := context.Background()
	lease := 600 * time.Millisecond
	dead := NewRedisSemaphores(rdb, prefix, lease)
	alive := NewRedisSemaphores(rdb, prefix, lease)
	defer alive.Close()
	if _, ok, err := dead.Acquire(ctx, "k", 2); !ok || err != nil {
		t.Fatalf("dead: %v %v", ok, err)
	}
	dead.Close() // stops renewing: the replica died with its slot held
	relAlive, ok, err := alive.Acquire(ctx, "k", 2)
	if !ok || err != nil {
		t.Fatalf("alive: %v %v", ok, err)
	}
	if _, ok, _ := alive.Acquire(ctx, "k", 2); ok {
		t.Fatal("a third slot of two")
	}
	time.Sleep(lease + 300*time.Millisecond)
	if n, err := alive.Held(ctx, "k"); n != 1 || err != nil {
		t.Fatalf("held after the lease: %d %v, want 1 (the renewed one)", n, err)
	}
	rel, ok, err := alive.Acquire(ctx, "k", 2)
	if !ok || err != nil {
		t.Fatalf("the dead holder's slot is not free: %v %v", ok, err)
	}
	rel()
	relAlive()
	relAlive()
	if n, _ := alive.Held(ctx, "k"); n != 0 {
		t.Fatalf("held %d after release", n)
	}
}

// TestRedisOutage stops a redis-server of the test's own: enforce mode
// refuses as guard_unavailable with a retry, report mode lets the run
// through reported, nothing panics; once Redis is back, admission is as
// before.
func TestRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redistest.Client(t, srv.URL())
	prefix := redistest.Prefix(t)
	sems := NewRedisSemaphores(rdb, prefix, 0)
	defer sems.Close()
	tbl := smallTable()
	tbl.Classes["work"] = Class{Anonymous: Allowance{Burst: 2, PerMinute: 60, ConcurrentPerCaller: 2}}
	enforce := newGuard(t, Config{Mode: Enforce, Quotas: tbl, Limiter: NewRedisLimiter(rdb, prefix), Semaphores: sems})
	report := newGuard(t, Config{Mode: Report, Quotas: tbl, Limiter: NewRedisLimiter(rdb, prefix+"r:"), Semaphores: sems})
	req := Request{QuotaClass: "work", Cost: 1, Anonymous: true, Target: "example.com", PerTargetPerMinute: 10}
	c := anon("192.0.2.9")
	ctx := context.Background()

	if d, rel := enforce.Admit(ctx, c, req); !d.Allowed || d.Reason != "" {
		t.Fatalf("before the outage: %+v", d)
	} else {
		rel()
	}
	srv.Stop()
	start := time.Now()
	d, rel := enforce.Admit(ctx, c, req)
	rel()
	if d.Allowed || d.Reason != ReasonUnavailable || d.RetryAfterSeconds != 1 || !d.Reason.Retryable() {
		t.Fatalf("enforce during the outage: %+v", d)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("a decision during the outage took %v", el)
	}
	d, rel = report.Admit(ctx, c, req)
	rel()
	if !d.Allowed || !d.Reported || d.Reason != ReasonUnavailable {
		t.Fatalf("report during the outage: %+v", d)
	}
	if n := enforce.InFlight("work", "anonymous", c.Key); n != 0 {
		t.Fatalf("in flight during the outage: %d", n)
	}

	srv.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, rel := enforce.Admit(ctx, c, req)
		rel()
		if d.Allowed {
			break
		}
		if d.Reason != ReasonUnavailable || time.Now().After(deadline) {
			t.Fatalf("after Redis returned: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The restarted Redis is empty: a full bucket of 2, one spent above.
	if d, rel := enforce.Admit(ctx, c, req); !d.Allowed {
		t.Fatalf("second after recovery: %+v", d)
	} else {
		rel()
	}
	if d, _ := enforce.Admit(ctx, c, req); d.Allowed || d.Reason != ReasonQuotaExceeded {
		t.Fatalf("third after recovery: %+v", d)
	}
}

// BenchmarkRedisTake is one quota decision against the shared Redis
// (docs/scale-out.md records the figure), beside the in-process one.
func BenchmarkRedisTake(b *testing.B) {
	rdb, prefix := redistest.Shared(b)
	for _, bc := range []struct {
		name string
		l    Limiter
	}{{"memory", NewMemoryLimiter()}, {"redis", NewRedisLimiter(rdb, prefix)}} {
		b.Run(bc.name, func(b *testing.B) {
			a := Allowance{Burst: 1 << 30, PerMinute: 1 << 30}
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.l.Take(ctx, "bench", a, 1, time.Now()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

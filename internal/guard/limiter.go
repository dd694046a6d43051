package guard

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter keeps token buckets by key. Take must be atomic per key: two
// concurrent takes never both spend the same tokens, so admission never
// exceeds a bucket. [NewMemoryLimiter] is the one-process implementation;
// a shared store (Redis with a GCRA script, say) implements the same
// interface so that several replicas share limits.
//
// now is the caller's clock. A shared limiter may keep its own instead,
// so that replicas whose clocks differ read one: [RedisLimiter] reads
// Redis's (TIME) and ignores now.
type Limiter interface {
	// Take spends n units from the bucket key, sized and refilled as a
	// says, at time now. When the units are not there it spends nothing
	// and answers OK false with the wait until they would be.
	Take(ctx context.Context, key string, a Allowance, n int, now time.Time) (Take, error)
	// Peek reads the bucket key, sized and refilled as a says, at time
	// now, spending nothing. A bucket never used, or full again, answers
	// a.Burst units and a Reset of 0.
	Peek(ctx context.Context, key string, a Allowance, now time.Time) (Level, error)
	// Reset fills the bucket key up again, for whoever takes from it
	// next. Resetting a full bucket is no error.
	Reset(ctx context.Context, key string) error
}

// Level is a bucket's state, read by [Limiter.Peek].
type Level struct {
	// Remaining is the whole units in the bucket.
	Remaining int
	// Reset is how long until the bucket is full again; 0 when it is.
	Reset time.Duration
}

// Take is the outcome of [Limiter.Take].
type Take struct {
	// OK reports whether the units were spent.
	OK bool
	// Remaining is the whole units left in the bucket after the take.
	Remaining int
	// RetryAfter is, when OK is false, how long until n units are there.
	RetryAfter time.Duration
	// Reset is how long until the bucket is full again.
	Reset time.Duration
	// Undo gives the units of an OK take back, when a later stage of
	// admission refuses the request. Nil when OK is false. Calling it
	// more than once has no further effect.
	Undo func()
}

// MemoryLimiter is a [Limiter] over golang.org/x/time/rate buckets held
// in this process. Takes are serialised by one mutex, so a take and the
// eviction of its bucket never interleave. Buckets idle long enough to
// have refilled completely are evicted (a full bucket is the same as a new
// one, so eviction loses nothing); eviction runs during Take, at most once
// per sweep interval, and starts no goroutine. It is safe for concurrent
// use.
type MemoryLimiter struct {
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
	sweep     time.Duration
}

type bucket struct {
	lim      *rate.Limiter
	lastUsed time.Time
	full     time.Duration // time to refill from empty
}

// NewMemoryLimiter returns an empty in-process limiter.
func NewMemoryLimiter() *MemoryLimiter {
	return &MemoryLimiter{buckets: make(map[string]*bucket), sweep: time.Minute}
}

func perSecond(a Allowance) rate.Limit { return rate.Limit(float64(a.PerMinute) / 60) }

// Take implements [Limiter].
func (m *MemoryLimiter) Take(_ context.Context, key string, a Allowance, n int, now time.Time) (Take, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evict(now)
	if a.Burst <= 0 || a.PerMinute <= 0 || n > a.Burst {
		return Take{OK: false, RetryAfter: time.Duration(math.MaxInt64)}, nil
	}
	lim := perSecond(a)
	b := m.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(lim, a.Burst)}
		m.buckets[key] = b
	} else if b.lim.Limit() != lim || b.lim.Burst() != a.Burst {
		b.lim.SetLimitAt(now, lim)
		b.lim.SetBurstAt(now, a.Burst)
	}
	b.lastUsed = now
	b.full = time.Duration(float64(a.Burst) / float64(lim) * float64(time.Second))

	r := b.lim.ReserveN(now, n)
	if !r.OK() {
		return Take{OK: false, RetryAfter: time.Duration(math.MaxInt64)}, nil
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return Take{OK: false, RetryAfter: d, Remaining: m.remaining(b, now), Reset: m.reset(b, a, now)}, nil
	}
	var once sync.Once
	undo := func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			r.CancelAt(now)
		})
	}
	return Take{OK: true, Remaining: m.remaining(b, now), Reset: m.reset(b, a, now), Undo: undo}, nil
}

// Peek implements [Limiter]. It neither creates the bucket nor counts as
// its use (eviction does not wait for it).
func (m *MemoryLimiter) Peek(_ context.Context, key string, a Allowance, now time.Time) (Level, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buckets[key]
	if b == nil || a.Burst <= 0 || a.PerMinute <= 0 {
		return Level{Remaining: max(a.Burst, 0)}, nil
	}
	return Level{Remaining: min(m.remaining(b, now), a.Burst), Reset: m.reset(b, a, now)}, nil
}

// Reset implements [Limiter]: it forgets the bucket.
func (m *MemoryLimiter) Reset(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.buckets, key)
	return nil
}

func (m *MemoryLimiter) remaining(b *bucket, now time.Time) int {
	return max(int(math.Floor(b.lim.TokensAt(now))), 0)
}

func (m *MemoryLimiter) reset(b *bucket, a Allowance, now time.Time) time.Duration {
	missing := float64(a.Burst) - b.lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(perSecond(a)) * float64(time.Second))
}

// evict drops buckets idle for longer than they take to refill; m.mu is
// held.
func (m *MemoryLimiter) evict(now time.Time) {
	if now.Sub(m.lastSweep) < m.sweep {
		return
	}
	m.lastSweep = now
	for k, b := range m.buckets {
		if now.Sub(b.lastUsed) > b.full {
			delete(m.buckets, k)
		}
	}
}

// Len returns the number of buckets held.
func (m *MemoryLimiter) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

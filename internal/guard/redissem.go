package guard

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLease is how long a slot of [RedisSemaphores] stays held without
// being renewed: the time a replica that died keeps its slots.
const DefaultLease = 15 * time.Second

// RedisSemaphores are [Semaphores] in Redis, shared by every replica. A
// key is a sorted set of holder ids scored by the expiry of their lease,
// in Redis's own clock (TIME), so replicas' clocks do not matter. Acquire
// drops the expired holders and adds one if fewer than the limit remain,
// in one script. While a run's slot (Acquire) is held, a goroutine renews
// its lease every third of the lease; a replica that dies stops renewing,
// and its slots are free a lease later. A leased slot (AcquireLease, a
// job's) is renewed by its holder, from whichever replica runs it. A lease
// that lapsed during a Redis outage longer than the lease is not renewed
// (its slot is already counted free). Close stops the renewals. It is
// safe for concurrent use.
type RedisSemaphores struct {
	rdb     redis.UniversalClient
	prefix  string
	lease   time.Duration
	timeout time.Duration

	mu   sync.Mutex
	held map[holder]struct{}

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type holder struct{ key, id string }

// NewRedisSemaphores returns semaphores over rdb whose keys start with
// prefix; lease 0 is DefaultLease. It starts the renewing goroutine.
func NewRedisSemaphores(rdb redis.UniversalClient, prefix string, lease time.Duration) *RedisSemaphores {
	if lease <= 0 {
		lease = DefaultLease
	}
	s := &RedisSemaphores{rdb: rdb, prefix: prefix, lease: lease, timeout: DefaultRedisTimeout,
		held: map[holder]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.renew()
	return s
}

// semAcquire: KEYS[1] the set, ARGV[1] the limit, ARGV[2] the holder id,
// ARGV[3] the lease in ms. 1 when the slot was taken. The set lives as
// long as its longest lease (a run's 15 s beside a job's 2 min).
var semAcquire = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`)

// semRenew extends the lease of holder ARGV[1] of KEYS[1] by ARGV[2] ms
// from now, if it still holds one.
var semRenew = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`)

// semHeld counts the live leases of KEYS[1].
var semHeld = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`)

// semHolders lists the live holders of KEYS[1] with their leases' ends,
// in ms of Redis's clock, and Redis's clock now.
var semHolders = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hs = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
table.insert(hs, tostring(now))
return hs
`)

// Acquire implements [Semaphores].
func (s *RedisSemaphores) Acquire(ctx context.Context, key string, limit int) (func(), bool, error) {
	h := holder{key: s.prefix + key, id: newHolderID()}
	ok, err := s.acquire(ctx, h, limit, s.lease)
	if err != nil || !ok {
		return nil, false, err
	}
	s.mu.Lock()
	s.held[h] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { s.release(h) }) }, true, nil
}

// acquire runs the acquiring script for h.
func (s *RedisSemaphores) acquire(ctx context.Context, h holder, limit int, lease time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := semAcquire.Run(ctx, s.rdb, []string{h.key}, limit, h.id, lease.Milliseconds()).Int()
	if err != nil {
		// The script may have run and the answer been lost: a slot
		// taken so is freed by its lease, never renewed.
		return false, fmt.Errorf("guard: redis semaphore: %w", err)
	}
	return n == 1, nil
}

// AcquireLease implements [Semaphores].
func (s *RedisSemaphores) AcquireLease(ctx context.Context, key, holderID string, limit int, lease time.Duration) (bool, error) {
	return s.acquire(ctx, holder{key: s.prefix + key, id: holderID}, limit, lease)
}

// RenewLease implements [Semaphores].
func (s *RedisSemaphores) RenewLease(ctx context.Context, key, holderID string, lease time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := semRenew.Run(ctx, s.rdb, []string{s.prefix + key}, holderID, lease.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("guard: redis semaphore: %w", err)
	}
	return n == 1, nil
}

// ReleaseLease implements [Semaphores].
func (s *RedisSemaphores) ReleaseLease(ctx context.Context, key, holderID string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.rdb.ZRem(ctx, s.prefix+key, holderID).Err(); err != nil {
		return fmt.Errorf("guard: redis semaphore: %w", err)
	}
	return nil
}

// Holders implements [Semaphores]. The leases' ends are Redis's clock's,
// told as this replica's clock now plus what remains of each.
func (s *RedisSemaphores) Holders(ctx context.Context, key string) ([]Holder, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	vals, err := semHolders.Run(ctx, s.rdb, []string{s.prefix + key}).StringSlice()
	if err != nil || len(vals)%2 != 1 {
		return nil, fmt.Errorf("guard: redis semaphore: %w", err)
	}
	now, _ := strconv.ParseInt(vals[len(vals)-1], 10, 64)
	local := time.Now()
	var out []Holder
	for i := 0; i+1 < len(vals); i += 2 {
		until, _ := strconv.ParseFloat(vals[i+1], 64)
		out = append(out, Holder{ID: vals[i], Expires: local.Add(time.Duration(int64(until)-now) * time.Millisecond)})
	}
	return out, nil
}

// Reset implements [Semaphores].
func (s *RedisSemaphores) Reset(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.rdb.Del(ctx, s.prefix+key).Err(); err != nil {
		return fmt.Errorf("guard: redis semaphore: %w", err)
	}
	return nil
}

// release frees h's slot; when Redis cannot be told, the lease, no longer
// renewed, frees it.
func (s *RedisSemaphores) release(h holder) {
	s.mu.Lock()
	delete(s.held, h)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	_ = s.rdb.ZRem(ctx, h.key, h.id).Err()
}

// Held implements [Semaphores].
func (s *RedisSemaphores) Held(ctx context.Context, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := semHeld.Run(ctx, s.rdb, []string{s.prefix + key}).Int()
	if err != nil {
		return 0, fmt.Errorf("guard: redis semaphore: %w", err)
	}
	return n, nil
}

// renew extends the leases held, every third of the lease, until Close.
func (s *RedisSemaphores) renew() {
	defer close(s.done)
	tick := time.NewTicker(s.lease / 3)
	defer tick.Stop()
	lease := strconv.FormatInt(s.lease.Milliseconds(), 10)
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		hs := make([]holder, 0, len(s.held))
		for h := range s.held {
			hs = append(hs, h)
		}
		s.mu.Unlock()
		for _, h := range hs {
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
			_ = semRenew.Run(ctx, s.rdb, []string{h.key}, h.id, lease).Err()
			cancel()
		}
	}
}

// Close stops renewing the leases; slots still held are freed by their
// leases. It is safe to call more than once.
func (s *RedisSemaphores) Close() error {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
	})
	return nil
}

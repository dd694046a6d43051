package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisTimeout bounds one decision's round trip to Redis: past it
// the limiter or semaphore answers an error, which Admit turns into a
// [ReasonUnavailable] stage.
const DefaultRedisTimeout = time.Second

// RedisLimiter is a [Limiter] whose buckets live in Redis, so that several
// replicas share them: N replicas admit together exactly what one would.
// Each take is one Lua script (GCRA, the generic cell rate algorithm) run
// atomically by Redis — EVALSHA, and EVAL when Redis does not hold the
// script yet — over one key holding the bucket's theoretical arrival time
// in microseconds, with a TTL of the time the bucket takes to refill (a
// full bucket and no key are the same). Its answers are those of
// [MemoryLimiter]: the same admissions, Remaining, RetryAfter and Reset.
//
// The clock is Redis's, read by the script (TIME), not the caller's: the
// now given to Take and Peek is ignored, so replicas whose clocks are
// skewed share one clock and one bucket. (Redis 7 replicates a script by
// its effects, so a script may read TIME before it writes.) It is safe for
// concurrent use.
type RedisLimiter struct {
	rdb     redis.UniversalClient
	prefix  string
	timeout time.Duration
}

// NewRedisLimiter returns a limiter over rdb whose keys start with
// prefix (such as "toolhost:"), so that one Redis can hold several
// deployments, or several tests, apart.
func NewRedisLimiter(rdb redis.UniversalClient, prefix string) *RedisLimiter {
	return &RedisLimiter{rdb: rdb, prefix: prefix, timeout: DefaultRedisTimeout}
}

// gcraNow is the scripts' clock: Redis's TIME in microseconds (a Lua
// number holds them exactly until the year 2255).
const gcraNow = `
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
`

// gcraTake spends ARGV[3] units of the bucket KEYS[1]: ARGV[1] is the
// emission interval of one unit in microseconds, ARGV[2] the burst. It
// answers {ok, remaining, retry µs, reset µs}.
var gcraTake = redis.NewScript(gcraNow + `
local t = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local tau = t * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new = tat + n * t
local allow = new - tau
if allow > now then
  local rem = math.floor((now - (tat - tau)) / t)
  if rem < 0 then rem = 0 end
  return {0, rem, math.ceil(allow - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], string.format('%.0f', new), 'PX', string.format('%.0f', math.ceil((new - now) / 1000) + 1))
local rem = math.floor((now - allow) / t)
if rem < 0 then rem = 0 end
return {1, rem, 0, math.ceil(new - now)}
`)

// gcraUndo gives back ARGV[1] microseconds of the bucket KEYS[1]; a
// bucket full by then is dropped.
var gcraUndo = redis.NewScript(gcraNow + `
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat then return 0 end
tat = tat - tonumber(ARGV[1])
if tat <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', string.format('%.0f', math.ceil((tat - now) / 1000) + 1))
end
return 1
`)

// gcraPeek reads the bucket KEYS[1] as gcraTake would before a take, with
// ARGV[1] and ARGV[2] as there, writing nothing. It answers {remaining,
// reset µs}.
var gcraPeek = redis.NewScript(gcraNow + `
local t = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat <= now then return {burst, 0} end
local rem = math.floor((now - (tat - t * burst)) / t)
if rem < 0 then rem = 0 end
if rem > burst then rem = burst end
return {rem, math.ceil(tat - now)}
`)

// Take implements [Limiter]; now is not used (Redis's clock is). An
// error (Redis unreachable, or slower than DefaultRedisTimeout) spends
// nothing.
func (l *RedisLimiter) Take(ctx context.Context, key string, a Allowance, n int, _ time.Time) (Take, error) {
	if a.Burst <= 0 || a.PerMinute <= 0 || n > a.Burst {
		return Take{OK: false, RetryAfter: time.Duration(math.MaxInt64)}, nil
	}
	interval := emission(a)
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	k := l.prefix + key
	res, err := gcraTake.Run(ctx, l.rdb, []string{k}, interval, a.Burst, n).Int64Slice()
	if err != nil {
		return Take{}, fmt.Errorf("guard: redis limiter: %w", err)
	}
	if len(res) != 4 {
		return Take{}, errors.New("guard: redis limiter: malformed script answer")
	}
	t := Take{OK: res[0] == 1, Remaining: int(res[1]), RetryAfter: time.Duration(res[2]) * time.Microsecond,
		Reset: time.Duration(res[3]) * time.Microsecond}
	if !t.OK {
		return t, nil
	}
	amount := strconv.FormatFloat(60e6/float64(a.PerMinute)*float64(n), 'f', -1, 64)
	var once sync.Once
	t.Undo = func() {
		once.Do(func() {
			// A give-back that fails leaves the units spent: the caller
			// waits a little longer, nobody gets more.
			ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
			defer cancel()
			_ = gcraUndo.Run(ctx, l.rdb, []string{k}, amount).Err()
		})
	}
	return t, nil
}

// emission is the script argument of a's emission interval: the
// microseconds one unit takes to come back.
func emission(a Allowance) string {
	return strconv.FormatFloat(60e6/float64(a.PerMinute), 'f', -1, 64)
}

// Peek implements [Limiter]; now is not used (Redis's clock is).
func (l *RedisLimiter) Peek(ctx context.Context, key string, a Allowance, _ time.Time) (Level, error) {
	if a.Burst <= 0 || a.PerMinute <= 0 {
		return Level{Remaining: max(a.Burst, 0)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := gcraPeek.Run(ctx, l.rdb, []string{l.prefix + key}, emission(a), a.Burst).Int64Slice()
	if err != nil {
		return Level{}, fmt.Errorf("guard: redis limiter: %w", err)
	}
	if len(res) != 2 {
		return Level{}, errors.New("guard: redis limiter: malformed script answer")
	}
	return Level{Remaining: int(res[0]), Reset: time.Duration(res[1]) * time.Microsecond}, nil
}

// Reset implements [Limiter]: it deletes the bucket's key.
func (l *RedisLimiter) Reset(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if err := l.rdb.Del(ctx, l.prefix+key).Err(); err != nil {
		return fmt.Errorf("guard: redis limiter: %w", err)
	}
	return nil
}

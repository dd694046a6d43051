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
// The clock is the caller's now, as for MemoryLimiter: replicas need
// clocks kept in step (NTP); a skew of d lets the replica ahead admit up
// to d's worth of refill early. It is safe for concurrent use.
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

// gcraTake spends ARGV[4] units of the bucket KEYS[1]: ARGV[1] is now and
// ARGV[2] the emission interval of one unit, both in microseconds, ARGV[3]
// the burst. It answers {ok, remaining, retry µs, reset µs}.
var gcraTake = redis.NewScript(`
local now = tonumber(ARGV[1])
local t = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
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

// gcraUndo gives back ARGV[2] microseconds of the bucket KEYS[1] at the
// take's time ARGV[1].
var gcraUndo = redis.NewScript(`
local now = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat then return 0 end
tat = tat - tonumber(ARGV[2])
if tat <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', string.format('%.0f', math.ceil((tat - now) / 1000) + 1))
end
return 1
`)

// Take implements [Limiter]. An error (Redis unreachable, or slower than
// DefaultRedisTimeout) spends nothing.
func (l *RedisLimiter) Take(ctx context.Context, key string, a Allowance, n int, now time.Time) (Take, error) {
	if a.Burst <= 0 || a.PerMinute <= 0 || n > a.Burst {
		return Take{OK: false, RetryAfter: time.Duration(math.MaxInt64)}, nil
	}
	interval := 60e6 / float64(a.PerMinute) // µs per unit
	us := now.UnixMicro()
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	k := l.prefix + key
	res, err := gcraTake.Run(ctx, l.rdb, []string{k},
		strconv.FormatInt(us, 10), strconv.FormatFloat(interval, 'f', -1, 64), a.Burst, n).Int64Slice()
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
	amount := strconv.FormatFloat(interval*float64(n), 'f', -1, 64)
	var once sync.Once
	t.Undo = func() {
		once.Do(func() {
			// A give-back that fails leaves the units spent: the caller
			// waits a little longer, nobody gets more.
			ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
			defer cancel()
			_ = gcraUndo.Run(ctx, l.rdb, []string{k}, strconv.FormatInt(us, 10), amount).Err()
		})
	}
	return t, nil
}

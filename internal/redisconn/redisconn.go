// Package redisconn opens the Redis client the replicas share their
// quotas, throttles, semaphores and abuse salt through (serve --redis),
// with the bounds the request path needs: a Redis that does not answer
// costs a request at most a fraction of a second, never the default
// seconds of retries, and go-redis reconnects by itself when it returns.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrURL is returned by Open for a URL go-redis does not take.
var ErrURL = errors.New("redisconn: invalid Redis URL")

// The bounds Open gives a URL that sets none of its own (its query can:
// dial_timeout, read_timeout, write_timeout, pool_timeout, max_retries).
const (
	DialTimeout = time.Second
	IOTimeout   = time.Second
	MaxRetries  = 1
)

// Open returns a client for a redis:// or rediss:// URL
// (redis://[user:password@]host:port/db). It does not connect: the first
// command does, and Ping says whether Redis answers.
func Open(rawURL string) (*redis.Client, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = DialTimeout
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = IOTimeout
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = IOTimeout
	}
	if opt.PoolTimeout == 0 {
		opt.PoolTimeout = IOTimeout
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = MaxRetries
	}
	// One dial a command, not go-redis's five with a pause between: a
	// Redis that refuses connections is an answer (unavailable) at once.
	opt.DialerRetries = 1
	quiet.Do(func() { redis.SetLogger(debugLog{}) })
	// A request's deadline bounds its commands, not only the timeouts
	// above.
	opt.ContextTimeoutEnabled = true
	// CLIENT SETINFO is Redis 7.2's; Debian's 7.0 answers it with an
	// error on every connection.
	opt.DisableIdentity = true
	return redis.NewClient(opt), nil
}

// quiet routes go-redis's own log lines (one per failed dial during an
// outage) to slog at debug level, once per process: the server logs the
// outage itself, through /readyz and the guard's refusals.
var quiet sync.Once

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// PingTimeout bounds a readiness Ping.
const PingTimeout = 500 * time.Millisecond

// Ping reports whether Redis answers within PingTimeout.
func Ping(ctx context.Context, rdb redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

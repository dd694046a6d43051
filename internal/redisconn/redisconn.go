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
	"strings"
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

// The schemes of the three kinds of deployment Open takes; each has its
// TLS twin with "rediss" in place of "redis". go-redis reads all three
// under redis:// (its parsers are told apart by the caller, not by the
// URL), so the kind is spelt in the scheme and Open hands go-redis the
// URL with the plain scheme back.
const (
	// SchemeSentinel: redis-sentinel://[user:password@]sentinel:26379/db
	// ?master_name=NAME[&addr=sentinel2:26379…][&password=…] — the
	// userinfo is the sentinels' credentials, the master's and replicas'
	// are the query's username and password (redis.ParseFailoverURL).
	SchemeSentinel = "redis-sentinel"
	// SchemeCluster: redis-cluster://[user:password@]node:6379
	// [?addr=node2:6379…] — the seed nodes of a Redis Cluster
	// (redis.ParseClusterURL); a cluster has no database number.
	SchemeCluster = "redis-cluster"
)

// Open returns a client for rawURL, by its scheme:
//
//   - redis://[user:password@]host:port/db (rediss:// with TLS), or
//     unix:///path/to/socket?db=N: one node;
//   - redis-sentinel://… (rediss-sentinel://): the master a set of Redis
//     Sentinels names (SchemeSentinel), followed across failovers;
//   - redis-cluster://… (rediss-cluster://): a Redis Cluster
//     (SchemeCluster).
//
// Every kind gets the same bounds: DialTimeout, IOTimeout and MaxRetries
// unless the query sets its own, one dial a command, the request's
// deadline on every command, and no CLIENT SETINFO. Open does not
// connect: the first command does, and Ping says whether Redis answers.
func Open(rawURL string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("%w: no scheme", ErrURL)
	}
	quiet.Do(func() { redis.SetLogger(debugLog{}) })
	scheme = strings.ToLower(scheme)
	tls := strings.HasPrefix(scheme, "rediss")
	plain := "redis://"
	if tls {
		plain = "rediss://"
	}
	switch strings.Replace(scheme, "rediss", "redis", 1) {
	case "redis", "unix":
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		bound(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout,
			&opt.MaxRetries, &opt.DialerRetries, &opt.ContextTimeoutEnabled, &opt.DisableIdentity)
		return redis.NewClient(opt), nil
	case SchemeSentinel:
		opt, err := redis.ParseFailoverURL(plain + rest)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		if opt.MasterName == "" {
			return nil, fmt.Errorf("%w: %s:// needs master_name", ErrURL, scheme)
		}
		bound(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout,
			&opt.MaxRetries, &opt.DialerRetries, &opt.ContextTimeoutEnabled, &opt.DisableIdentity)
		return redis.NewFailoverClient(opt), nil
	case SchemeCluster:
		opt, err := redis.ParseClusterURL(plain + rest)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		bound(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, &opt.PoolTimeout,
			&opt.MaxRetries, &opt.DialerRetries, &opt.ContextTimeoutEnabled, &opt.DisableIdentity)
		return redis.NewClusterClient(opt), nil
	default:
		return nil, fmt.Errorf("%w: scheme %q (redis, rediss, unix, %s, %s or their rediss twins)",
			ErrURL, scheme, SchemeSentinel, SchemeCluster)
	}
}

// bound sets the bounds Open gives every kind of client in the fields of
// its options.
func bound(dial, read, write, pool *time.Duration, retries, dialerRetries *int, ctxTimeout, noIdentity *bool) {
	for _, d := range []struct {
		f *time.Duration
		v time.Duration
	}{{dial, DialTimeout}, {read, IOTimeout}, {write, IOTimeout}, {pool, IOTimeout}} {
		if *d.f == 0 {
			*d.f = d.v
		}
	}
	if *retries == 0 {
		*retries = MaxRetries
	}
	// One dial a command, not go-redis's five with a pause between: a
	// Redis that refuses connections is an answer (unavailable) at once.
	*dialerRetries = 1
	// A request's deadline bounds its commands, not only the timeouts
	// above.
	*ctxTimeout = true
	// CLIENT SETINFO is Redis 7.2's; Debian's 7.0 answers it with an
	// error on every connection.
	*noIdentity = true
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

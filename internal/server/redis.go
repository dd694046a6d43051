package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// RedisPrefix starts every key a server keeps in Redis (Config.Redis):
// quotas and throttles under "q"/"t", semaphores, the abuse salt.
const RedisPrefix = "toolhost:"

// shared is what the replicas share through Redis (Config.Redis, serve
// --redis, docs/scale-out.md): the guard's buckets and semaphores and the
// abuse log's daily salt. A nil *shared is a server on its own, whose
// guard and salt stay in the process.
type shared struct {
	rdb  redis.UniversalClient
	sems *guard.RedisSemaphores
}

// openShared opens the Redis client of url; nil for "". It does not
// connect: a Redis down at start is a server that is not ready (and
// refuses or reports according to --guard) until it comes up.
func openShared(url string) (*shared, error) {
	if url == "" {
		return nil, nil
	}
	rdb, err := redisconn.Open(url)
	if err != nil {
		return nil, fmt.Errorf("server: --redis: %w", err)
	}
	return &shared{rdb: rdb, sems: guard.NewRedisSemaphores(rdb, RedisPrefix+"s:", 0)}, nil
}

// guard gives gc the shared limiter and semaphores.
func (s *shared) guard(gc *guard.Config) {
	if s == nil {
		return
	}
	gc.Limiter = guard.NewRedisLimiter(s.rdb, RedisPrefix)
	gc.Semaphores = s.sems
}

// salts is the abuse log's salt source: the shared one, or nil (the
// log's own).
func (s *shared) salts() abuse.SaltSource {
	if s == nil {
		return nil
	}
	return abuse.NewRedisSalts(s.rdb, RedisPrefix)
}

// checks are /readyz's checks of Redis: none without it.
func (s *shared) checks() []api.ReadyCheck {
	if s == nil {
		return nil
	}
	return []api.ReadyCheck{{Name: "redis", Check: func(ctx context.Context) error { return redisconn.Ping(ctx, s.rdb) }}}
}

// close stops renewing the semaphores' leases (slots still held lapse by
// themselves) and closes the client.
func (s *shared) close() error {
	if s == nil {
		return nil
	}
	return errors.Join(s.sems.Close(), s.rdb.Close())
}

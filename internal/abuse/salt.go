package abuse

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SaltSource gives the salt of a UTC day. The Log asks it once a day (and,
// while it fails, at most every [SaltRetry]) and keeps the answer in
// memory until the day ends; a source never writes a salt to disk or to a
// log.
type SaltSource interface {
	// DaySalt returns the 32-byte salt of now's UTC day.
	DaySalt(ctx context.Context, now time.Time) ([32]byte, error)
}

// LocalSalts is the one-process source: a fresh random salt, which the
// Log keeps for the day. Two replicas with LocalSalts give one address two
// callers.
type LocalSalts struct{}

// DaySalt implements [SaltSource]; it never fails.
func (LocalSalts) DaySalt(context.Context, time.Time) ([32]byte, error) {
	var k [32]byte
	rand.Read(k[:]) // never fails (crypto/rand, Go 1.24+)
	return k, nil
}

// RedisSalts is the source replicas share: the first replica to ask on a
// UTC day sets the day's salt in Redis (SET NX, expiring at the end of
// that day), and every replica reads the same one, so that one address is
// one caller across replicas for the day. Redis holds it in memory only
// (the deployment's Redis runs without persistence, docs/scale-out.md);
// after its day nobody holds it.
type RedisSalts struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisSalts returns the source over rdb, under keys starting with
// prefix.
func NewRedisSalts(rdb redis.UniversalClient, prefix string) *RedisSalts {
	return &RedisSalts{rdb: rdb, prefix: prefix}
}

// SaltTimeout bounds one ask of the shared salt.
const SaltTimeout = time.Second

// DaySalt implements [SaltSource].
func (r *RedisSalts) DaySalt(ctx context.Context, now time.Time) ([32]byte, error) {
	var k [32]byte
	rand.Read(k[:])
	defer clear(k[:])
	ctx, cancel := context.WithTimeout(ctx, SaltTimeout)
	defer cancel()
	key := r.prefix + "abuse:salt:" + now.UTC().Format(time.DateOnly)
	old, err := r.rdb.SetArgs(ctx, key, string(k[:]), redis.SetArgs{Mode: "NX", Get: true, ExpireAt: nextMidnight(now)}).Result()
	var out [32]byte
	switch {
	case errors.Is(err, redis.Nil):
		copy(out[:], k[:]) // ours was set: the first ask of the day
	case err != nil:
		return out, fmt.Errorf("abuse: the day's salt from redis: %w", err)
	case len(old) != len(out):
		return out, errors.New("abuse: the day's salt in redis is not 32 bytes")
	default:
		copy(out[:], old)
	}
	return out, nil
}

// SaltRetry is how long a Log whose SaltSource failed hashes under a
// salt of its own (made in memory, for the day) before it asks again.
// Rows hashed under it do not link with the other replicas' rows; nothing
// is lost but that link.
const SaltRetry = 10 * time.Second

// salt is one UTC day's HMAC key.
type salt struct {
	day string // "2006-01-02", UTC
	key [32]byte
	// retry is set on a salt made here because the source failed: when
	// to ask the source again.
	retry time.Time
}

// saltLocked returns the salt of now's UTC day, wiping a salt of another
// day and asking the source for a new one. l.mu must be held.
func (l *Log) saltLocked(now time.Time) *salt {
	day := now.UTC().Format(time.DateOnly)
	if l.salt != nil && l.salt.day == day && (l.salt.retry.IsZero() || now.Before(l.salt.retry)) {
		return l.salt
	}
	key, err := l.salts.DaySalt(context.Background(), now)
	if err != nil {
		if l.salt != nil && l.salt.day == day {
			l.salt.retry = now.Add(SaltRetry)
			return l.salt
		}
		l.logger.Warn("abuse log: the day's shared salt is unavailable; hashing under a salt of this process until it returns", "err", err)
		key, _ = LocalSalts{}.DaySalt(context.Background(), now)
		defer clear(key[:])
		l.dropSaltLocked()
		l.salt = &salt{day: day, key: key, retry: now.Add(SaltRetry)}
		return l.salt
	}
	defer clear(key[:])
	l.dropSaltLocked()
	l.salt = &salt{day: day, key: key}
	return l.salt
}

package abuse

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SaltSource gives the salt of a UTC day. The Log asks it on the day's
// first use and then every [Config.SaltCheck] while it holds the day's
// salt (and, while it fails, every [SaltRetry]), and keeps the answer in
// memory until the day ends; a source never writes a salt to disk or to a
// log.
type SaltSource interface {
	// DaySalt returns the 32-byte salt of now's UTC day. held is the salt
	// the caller already holds for that day from this source, or nil: a
	// source that has lost the day's salt (a Redis restarted without
	// persistence) stores held back rather than a new one, so that the
	// replicas that still hold it keep it; with held nil and no salt
	// stored it makes one. The answer may differ from held — another
	// replica stored its salt back first — and the caller then takes it.
	// DaySalt does not keep or modify *held.
	DaySalt(ctx context.Context, now time.Time, held *[32]byte) ([32]byte, error)
}

// LocalSalts is the one-process source: a fresh random salt, which the
// Log keeps for the day (it answers held when given one). Two replicas
// with LocalSalts give one address two callers.
type LocalSalts struct{}

// DaySalt implements [SaltSource]; it never fails.
func (LocalSalts) DaySalt(_ context.Context, _ time.Time, held *[32]byte) ([32]byte, error) {
	if held != nil {
		return *held, nil
	}
	var k [32]byte
	rand.Read(k[:]) // never fails (crypto/rand, Go 1.24+)
	return k, nil
}

// RedisSalts is the source replicas share: the first replica to ask on a
// UTC day sets the day's salt in Redis (SET NX GET, expiring at the end of
// that day), and every replica reads the same one, so that one address is
// one caller across replicas for the day. Redis holds it in memory only
// (the deployment's Redis runs without persistence, docs/scale-out.md);
// after its day nobody holds it. When Redis has lost it (a restart), the
// first replica to check in with the salt it holds sets that one again,
// and the others, checking in, read it; a new salt is made only by a
// replica that holds none, when no holder has checked in before it.
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

// DaySalt implements [SaltSource]: one SET NX GET of held, or of a fresh
// random salt when held is nil.
func (r *RedisSalts) DaySalt(ctx context.Context, now time.Time, held *[32]byte) ([32]byte, error) {
	// A byte slice rather than a string, so that this copy can be wiped.
	k := make([]byte, 32)
	if held != nil {
		copy(k, held[:])
	} else {
		rand.Read(k)
	}
	defer clear(k)
	ctx, cancel := context.WithTimeout(ctx, SaltTimeout)
	defer cancel()
	key := r.prefix + "abuse:salt:" + now.UTC().Format(time.DateOnly)
	old, err := r.rdb.SetArgs(ctx, key, k, redis.SetArgs{Mode: "NX", Get: true, ExpireAt: nextMidnight(now)}).Result()
	var out [32]byte
	switch {
	case errors.Is(err, redis.Nil):
		copy(out[:], k) // ours was set: the first ask of the day, or held set back
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
// salt of its own (made in memory, for the day) before it asks again, and
// how long a Log holding the shared salt keeps it unchecked after a check
// failed. Rows hashed under a salt of its own do not link with the other
// replicas' rows; nothing is lost but that link.
const SaltRetry = 10 * time.Second

// DefaultSaltCheck is how often a Log holding the day's shared salt checks
// it against its source when Config.SaltCheck is zero: the longest one
// address can have two callers after Redis lost the salt.
const DefaultSaltCheck = 10 * time.Second

// salt is one UTC day's HMAC key.
type salt struct {
	day string // "2006-01-02", UTC
	key [32]byte
	// own is set on a salt made here because the source failed: it is
	// never given to the source as held, so that it cannot win over the
	// salt another replica holds.
	own bool
	// next is when to ask the source again: check a shared salt, or try
	// again for one of our own.
	next time.Time
}

// saltLocked returns the salt of now's UTC day, wiping a salt of another
// day, asking the source on the day's first use and, once the salt's check
// time has come, asking again with the salt held: Redis may have lost it
// (the source then stores it back) or hold another (which is taken). l.mu
// must be held; the source is asked under it, so Records wait for the ask
// (at most [SaltTimeout]).
func (l *Log) saltLocked(now time.Time) *salt {
	day := now.UTC().Format(time.DateOnly)
	if l.salt != nil && l.salt.day != day {
		l.dropSaltLocked()
	}
	cur := l.salt
	if cur != nil && now.Before(cur.next) {
		return cur
	}
	var held *[32]byte
	if cur != nil && !cur.own {
		held = &cur.key
	}
	key, err := l.salts.DaySalt(context.Background(), now, held)
	if err != nil {
		if cur != nil {
			// A shared salt is still the other replicas' salt; one of
			// our own is no worse than a new one of our own.
			cur.next = now.Add(SaltRetry)
			return cur
		}
		l.logger.Warn("abuse log: the day's shared salt is unavailable; hashing under a salt of this process until it returns", "err", err)
		key, _ = LocalSalts{}.DaySalt(context.Background(), now, nil)
		defer clear(key[:])
		l.salt = &salt{day: day, key: key, own: true, next: now.Add(SaltRetry)}
		return l.salt
	}
	defer clear(key[:])
	if held != nil && key == *held {
		cur.next = now.Add(l.saltCheck)
		return cur
	}
	if held != nil {
		l.logger.Info("abuse log: the day's shared salt changed at its source (another replica set it back first); taking it")
	}
	l.dropSaltLocked()
	l.salt = &salt{day: day, key: key, next: now.Add(l.saltCheck)}
	return l.salt
}

// checkSalt asks the source again when the salt held for today is due for
// its check, so that a replica that records nothing still sets its salt
// back in a Redis that lost it, before a replica holding none makes a new
// one. The writer calls it at every flush.
func (l *Log) checkSalt() {
	now := l.now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.salt != nil && l.salt.day == now.Format(time.DateOnly) && !now.Before(l.salt.next) {
		l.saltLocked(now)
	}
}

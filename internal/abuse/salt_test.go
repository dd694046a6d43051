package abuse

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/redisconn/redistest"
	"github.com/toolhost/toolhost/internal/store"
)

// saltFixture is a fixture whose Log takes its salts from salts, over a
// database of its own (a replica's), on a clock starting at start.
func saltFixture(t *testing.T, salts SaltSource, start time.Time) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolhost.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, path: path, clock: &clock{t: start}}
	if f.log, err = New(Config{Store: s, Now: f.clock.Now, Salts: salts}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.log.Close() })
	<-f.log.purged
	return f
}

// TestRedisSaltsShared: two replicas' logs over one Redis name one address
// as one caller; a log with a salt of its own does not; the day's salt in
// Redis is 32 bytes and expires at the end of its UTC day.
func TestRedisSaltsShared(t *testing.T) {
	rdb, prefix := redistest.Shared(t)
	now := time.Now().UTC()
	a := saltFixture(t, NewRedisSalts(rdb, prefix), now)
	b := saltFixture(t, NewRedisSalts(rdb, prefix), now)
	local := saltFixture(t, nil, now)
	ca, cb, cl := a.callerOf(t, "192.0.2.7"), b.callerOf(t, "192.0.2.7"), local.callerOf(t, "192.0.2.7")
	if ca != cb {
		t.Fatalf("two replicas, one address, two callers: %s %s", ca, cb)
	}
	if cl == ca {
		t.Fatal("a log with its own salt gave the shared caller")
	}
	if other := b.callerOf(t, "192.0.2.8"); other == ca {
		t.Fatal("two addresses, one caller")
	}
	key := prefix + "abuse:salt:" + now.Format(time.DateOnly)
	v, err := rdb.Get(context.Background(), key).Result()
	if err != nil || len(v) != 32 {
		t.Fatalf("the day's salt in redis: %d bytes, %v", len(v), err)
	}
	ttl, err := rdb.PTTL(context.Background(), key).Result()
	if until := nextMidnight(time.Now()).Sub(time.Now()); err != nil || ttl <= 0 || ttl > until+time.Second {
		t.Fatalf("TTL %v (%v), want at most the %v to the end of the UTC day", ttl, err, until)
	}
}

// TestRedisSaltsOutage: with Redis down the log still records, under a
// salt of its own; SaltRetry after Redis returned it hashes under the
// shared salt again, as the other replicas do.
func TestRedisSaltsOutage(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redistest.Client(t, srv.URL())
	now := time.Now().UTC()
	f := saltFixture(t, NewRedisSalts(rdb, "x:"), now)
	srv.Stop()
	down := f.callerOf(t, "198.51.100.1")
	srv.Start()
	if again := f.callerOf(t, "198.51.100.1"); again != down {
		t.Fatal("the log asked Redis again before SaltRetry")
	}
	other := saltFixture(t, NewRedisSalts(rdb, "x:"), now)
	shared := other.callerOf(t, "198.51.100.1")
	if shared == down {
		t.Fatal("the salt made during the outage is the shared one")
	}
	f.clock.Add(SaltRetry + time.Second)
	if back := f.callerOf(t, "198.51.100.1"); back != shared {
		t.Fatalf("after Redis returned: caller %s, the other replica's %s", back, shared)
	}
}

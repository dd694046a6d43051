package abuse

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// saltFixture is a fixture whose Log takes its salts from salts, over a
// database of its own (a replica's), on a clock starting at start.
func saltFixture(t *testing.T, salts SaltSource, start time.Time) *fixture {
	t.Helper()
	return saltFixtureCheck(t, salts, start, 0)
}

// saltFixtureCheck is saltFixture with Config.SaltCheck set to check.
func saltFixtureCheck(t *testing.T, salts SaltSource, start time.Time, check time.Duration) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolhost.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, path: path, clock: &clock{t: start}}
	if f.log, err = New(Config{Store: s, Now: f.clock.Now, Salts: salts, SaltCheck: check}); err != nil {
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
	if until := time.Until(nextMidnight(time.Now())); err != nil || ttl <= 0 || ttl > until+time.Second {
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

// hashOf is the caller ip is hashed as at the fixture's clock, as Record
// hashes it (without a row, so that rows of earlier calls do not matter).
func (f *fixture) hashOf(ip string) string {
	return f.log.callerHash(f.clock.Now().UTC(), netip.MustParseAddr(ip))
}

// TestRedisSaltsRestart: after Redis lost the day's salt (a restart
// without persistence), the replicas that held it set it back at their
// next check, and a replica started after the restart takes it: one
// address stays one caller. With no replica holding one, a new salt is
// made.
func TestRedisSaltsRestart(t *testing.T) {
	const ip = "203.0.113.9"
	const check = time.Minute // on the fixtures' clocks, which the test moves
	srv := redistest.Start(t)
	rdb := redistest.Client(t, srv.URL())
	now := time.Now().UTC().Truncate(24 * time.Hour).Add(time.Hour)
	a := saltFixtureCheck(t, NewRedisSalts(rdb, "x:"), now, check)
	b := saltFixtureCheck(t, NewRedisSalts(rdb, "x:"), now, check)
	before := a.hashOf(ip)
	if got := b.hashOf(ip); got != before {
		t.Fatalf("before the restart: two replicas, two callers: %s %s", before, got)
	}

	srv.Stop()
	srv.Start()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Logf("the first ask after the restart: %v", err) // a pooled connection the restart broke
	}
	a.clock.Add(check)
	b.clock.Add(check)
	tests := []struct {
		name string
		f    func() *fixture
	}{
		{"the first holder to check sets its salt back", func() *fixture { return a }},
		{"the second holder keeps it", func() *fixture { return b }},
		{"a replica started after the restart takes it", func() *fixture {
			return saltFixtureCheck(t, NewRedisSalts(rdb, "x:"), now.Add(check), check)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f().hashOf(ip); got != before {
				t.Fatalf("caller %s, before the restart %s", got, before)
			}
		})
	}

	// Nobody holds the day's salt: the first ask makes a new one.
	a.log.Close()
	b.log.Close()
	srv.Stop()
	srv.Start()
	rdb.Ping(context.Background())
	fresh := saltFixtureCheck(t, NewRedisSalts(rdb, "x:"), now.Add(2*check), check)
	made := fresh.hashOf(ip)
	if made == before {
		t.Fatal("with no replica holding the salt, the old one came back")
	}
	if v, err := rdb.Get(context.Background(), "x:abuse:salt:"+now.Format(time.DateOnly)).Result(); err != nil || len(v) != 32 {
		t.Fatalf("the new salt in redis: %d bytes, %v", len(v), err)
	}
	if again := saltFixtureCheck(t, NewRedisSalts(rdb, "x:"), now.Add(2*check), check).hashOf(ip); again != made {
		t.Fatalf("a second replica after the new salt: caller %s, want %s", again, made)
	}
}

// TestRedisSaltsTakesTheStoredOne: a replica holding a salt that is not
// Redis's (Redis lost it and another replica set its own first) takes
// Redis's at its next check.
func TestRedisSaltsTakesTheStoredOne(t *testing.T) {
	const ip = "203.0.113.10"
	rdb, prefix := redistest.Shared(t)
	now := time.Now().UTC()
	a := saltFixtureCheck(t, NewRedisSalts(rdb, prefix), now, time.Minute)
	mine := a.hashOf(ip)
	key := prefix + "abuse:salt:" + now.Format(time.DateOnly)
	other := make([]byte, 32)
	other[0] = 1
	if err := rdb.Set(context.Background(), key, other, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if got := a.hashOf(ip); got != mine {
		t.Fatal("the salt changed before its check")
	}
	a.clock.Add(time.Minute)
	if got := a.hashOf(ip); got == mine {
		t.Fatal("after its check the replica still hashes under its own salt, not Redis's")
	}
	var k [32]byte
	copy(k[:], other)
	want := hmacSHA256(&k, normalise(netip.MustParseAddr(ip)))
	if got := a.hashOf(ip); got != fmt.Sprintf("%x", want) {
		t.Fatalf("caller %s, want the one under Redis's salt %x", got, want)
	}
}

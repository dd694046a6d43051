package auth

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// testClock is a settable clock for Accounts.now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// cachedAccounts are Accounts with a cache of ttl over a new database.
func cachedAccounts(t *testing.T, ttl time.Duration) (*Accounts, *store.Store, *testClock) {
	return cachedAccountsOn(t, storetest.SQLite(t), ttl)
}

// cachedAccountsOn is cachedAccounts on backend b (storetest.Run).
func cachedAccountsOn(t *testing.T, b storetest.Backend, ttl time.Duration) (*Accounts, *store.Store, *testClock) {
	t.Helper()
	s, err := store.Open(context.Background(), b.Target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := &testClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	a := New(s, WithCache(ttl, 100))
	a.now = clock.now
	return a, s, clock
}

// A cached token answers without the database for the TTL: a row deleted
// behind the Accounts' back (another process revoking it) stops working
// once the TTL is over, and a disable through these Accounts at once.
func TestCacheTTLAndRevocation(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, s, clock := cachedAccountsOn(t, backend, 10*time.Second)
		gone, err := a.CreateUserToken(ctx, "alice", []string{CapabilityNetProbe})
		if err != nil {
			t.Fatal(err)
		}
		kept, err := a.CreateToken(ctx, "bob")
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Authenticate(ctx, gone)
		if err != nil || !p.Has(CapabilityNetProbe) {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
		p.Capabilities[0] = "changed" // a caller's copy, not the cache's
		if _, err := a.Authenticate(ctx, kept); err != nil {
			t.Fatal(err)
		}
		// Another process deletes alice's token.
		if _, err := s.DB().Exec(`DELETE FROM tokens WHERE user_id = (SELECT id FROM users WHERE name = 'alice')`); err != nil {
			t.Fatal(err)
		}
		clock.add(9 * time.Second)
		if p, err := a.Authenticate(ctx, gone); err != nil || !p.Has(CapabilityNetProbe) {
			t.Fatalf("within the TTL: %+v, %v", p, err)
		}
		clock.add(2 * time.Second)
		if _, err := a.Authenticate(ctx, gone); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("past the TTL: %v, want ErrInvalidToken", err)
		}
		// A disable through these Accounts holds at once.
		if _, err := a.Authenticate(ctx, kept); err != nil {
			t.Fatal(err)
		}
		if err := a.DisableUser(ctx, "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, kept); !errors.Is(err, ErrDisabled) {
			t.Fatalf("after DisableUser: %v, want ErrDisabled", err)
		}
		// Failures are not cached: enabling works at once too.
		if err := a.EnableUser(ctx, "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, kept); err != nil {
			t.Fatalf("after EnableUser: %v", err)
		}
	})
}

// A cached session never outlives the session.
func TestCacheSessionExpiry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _, clock := cachedAccountsOn(t, backend, time.Hour)
		v, expires, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clock.add(SessionTTL - time.Minute)
		if _, err := a.Session(ctx, v); err != nil {
			t.Fatal(err)
		}
		clock.add(2 * time.Minute) // past the expiry, within the cache's hour
		if _, err := a.Session(ctx, v); !errors.Is(err, ErrInvalidSession) {
			t.Fatalf("a session past %v answered from the cache: %v", expires, err)
		}
	})
}

// While another connection holds the database's write lock, a cached
// token answers; the bound on an uncached one is the request budget.
func TestCacheUnderALock(t *testing.T) {
	ctx := context.Background()
	a, s, _ := cachedAccounts(t, time.Minute)
	tok, err := a.CreateToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := a.CreateToken(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The Store's own writer holds the lock: every other write waits, as
	// it would for another process.
	if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer func() {
		conn.ExecContext(ctx, `ROLLBACK`)
		conn.Close()
	}()
	if _, err := a.Authenticate(ctx, tok); err != nil {
		t.Fatalf("a cached token under the lock: %v", err)
	}
	began := time.Now()
	// carol's first use wants a last_used_at write, which cannot have the
	// writer: it is given up within the budget and she still
	// authenticates.
	if _, err := a.Authenticate(ctx, fresh); err != nil {
		t.Fatalf("an uncached token under the lock: %v", err)
	}
	if took := time.Since(began); took > store.RequestBusyBudget+2*time.Second {
		t.Fatalf("an uncached token under the lock took %v", took)
	}
}

// waitRefreshes waits until no background refresh of a's cache runs.
func waitRefreshes(t *testing.T, a *Accounts) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(a.cache.slots) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a background refresh never ended")
		}
		time.Sleep(time.Millisecond)
	}
}

// A token in steady use is refreshed in the background and never looked
// up on its request again (issue 13, item 2): used every 6 s with a TTL of
// 10 s, each use past half the TTL renews its entry from that use on (a
// miss would renew it only at the TTL), for two minutes; its last_used_at
// still moves on (written by the refreshes), and a refresh that finds the
// token gone takes it out before its TTL is over. TestRefreshStatements
// (build tag toolhost_count) shows the statements are the refresh's.
func TestCacheRefreshesInTheBackground(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, s, clock := cachedAccountsOn(t, backend, 10*time.Second)
		tok, err := a.CreateToken(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, tok); err != nil { // the one lookup on a request
			t.Fatal(err)
		}
		lastUsed := func() string {
			t.Helper()
			var v string
			if err := s.ReadDB().QueryRow(`SELECT last_used_at FROM tokens`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		first := lastUsed()
		for i := range 20 {
			clock.add(6 * time.Second)
			p, err := a.Authenticate(ctx, tok)
			if err != nil || p.UserName != "alice" {
				t.Fatalf("use %d at +%ds: %+v, %v", i, 6*(i+1), p, err)
			}
			waitRefreshes(t, a)
			a.cache.mu.Lock()
			e := a.cache.m["t"+hashToken(tok)]
			a.cache.mu.Unlock()
			if e == nil || !e.until.Equal(clock.now().Add(10*time.Second)) || e.refreshing {
				t.Fatalf("use %d: the entry was not refreshed: %+v", i, e)
			}
		}
		if got := lastUsed(); got == first {
			t.Errorf("last_used_at stayed %s over two minutes of use", got)
		}
		// Another process deletes the token: the next use still answers from
		// memory (within the TTL), and its refresh takes the entry out, so the
		// use after that, still within the TTL, is refused.
		if _, err := s.DB().Exec(`DELETE FROM tokens`); err != nil {
			t.Fatal(err)
		}
		clock.add(6 * time.Second)
		if _, err := a.Authenticate(ctx, tok); err != nil {
			t.Fatalf("within the TTL: %v", err)
		}
		waitRefreshes(t, a)
		clock.add(time.Second)
		if _, err := a.Authenticate(ctx, tok); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("after the refresh found it gone: %v, want ErrInvalidToken", err)
		}
	})
}

// A cached session is refreshed the same way, and a refresh never makes it
// outlive the session.
func TestCacheRefreshesSessions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _, clock := cachedAccountsOn(t, backend, 10*time.Second)
		v, _, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Session(ctx, v); err != nil {
			t.Fatal(err)
		}
		clock.add(6 * time.Second)
		if _, err := a.Session(ctx, v); err != nil {
			t.Fatal(err)
		}
		waitRefreshes(t, a)
		a.cache.mu.Lock()
		e := a.cache.m["s"+hashToken(v)]
		a.cache.mu.Unlock()
		if e == nil || !e.refreshAt.Equal(clock.now().Add(5*time.Second)) {
			t.Fatalf("the session's entry was not refreshed: %+v", e)
		}
		clock.add(SessionTTL)
		if _, err := a.Session(ctx, v); !errors.Is(err, ErrInvalidSession) {
			t.Fatalf("past its expiry: %v", err)
		}
	})
}

// A full cache drops its expired entries, then an eighth at random: a new
// credential costs the others an eighth of the cache, never all of it.
func TestCacheFullDropsAnEighth(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := &testClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	const size = 16
	a := New(s, WithCache(10*time.Second, size))
	a.now = clock.now
	var toks []string
	for i := range size + 1 {
		tok, err := a.CreateToken(ctx, "user"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, tok := range toks[:size] {
		if _, err := a.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.cache.len(); n != size {
		t.Fatalf("%d entries, want %d", n, size)
	}
	if _, err := a.Authenticate(ctx, toks[size]); err != nil {
		t.Fatal(err)
	}
	if n := a.cache.len(); n != size-size/8+1 {
		t.Fatalf("a full cache holds %d entries after one more, want %d", n, size-size/8+1)
	}
	// Re-putting a cached credential in a full cache drops nothing.
	full := a.cache.len()
	if _, err := a.Authenticate(ctx, toks[size]); err != nil {
		t.Fatal(err)
	}
	a.cache.mu.Lock()
	a.cache.m["t"+hashToken(toks[size])].until = clock.now() // due again
	a.cache.mu.Unlock()
	if _, err := a.Authenticate(ctx, toks[size]); err != nil {
		t.Fatal(err)
	}
	if n := a.cache.len(); n != full {
		t.Fatalf("%d entries after a cached token was put again, want %d", n, full)
	}
	// Once they have all expired, room is made from them alone: two new
	// credentials fill the cache and then make room, the second one
	// dropping every expired entry and nothing else.
	clock.add(11 * time.Second)
	for i := range 2 {
		tok, err := a.CreateToken(ctx, "late"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.cache.len(); n != 2 {
		t.Fatalf("%d entries after the expired ones made room, want 2", n)
	}
}

// A lookup that read the database before a revocation does not put its
// stale answer back after it.
func TestCacheIgnoresLookupsFromBeforeAClear(t *testing.T) {
	c := &cache{ttl: time.Minute, max: 10, m: map[string]*cached{}, slots: make(chan struct{}, maxRefreshes)}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, revoke := range []func(){c.clear, func() { c.drop("tx") }} {
		gen := c.generation()
		revoke()
		c.put("tx", cached{principal: &Principal{Key: "user:1"}}, now, gen)
		if _, ok, _ := c.get("tx", now); ok {
			t.Fatal("a lookup from before the revocation was cached")
		}
		c.put("tx", cached{principal: &Principal{Key: "user:1"}}, now, c.generation())
		if _, ok, _ := c.get("tx", now); !ok {
			t.Fatal("a lookup from after it was not")
		}
	}
}

// RevokeToken ends one token at once in this process, cached or not, and
// leaves the account's other tokens alone.
func TestRevokeToken(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, s, _ := cachedAccountsOn(t, backend, time.Hour)
		gone, err := a.CreateUserToken(ctx, "alice", []string{CapabilityNetProbe})
		if err != nil {
			t.Fatal(err)
		}
		kept, err := a.CreateToken(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{gone, kept} {
			if _, err := a.Authenticate(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.RevokeToken(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, gone); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("a revoked token within the cache's hour: %v, want ErrInvalidToken", err)
		}
		if _, err := a.Authenticate(ctx, kept); err != nil {
			t.Fatalf("the account's other token: %v", err)
		}
		var grants int
		if err := s.ReadDB().QueryRow(`SELECT count(*) FROM token_capabilities`).Scan(&grants); err != nil || grants != 0 {
			t.Fatalf("%d capability grants left, %v", grants, err)
		}
		for name, tok := range map[string]string{"revoked again": gone, "malformed": "th_x", "unknown": TokenPrefix + strings.Repeat("A", 43)} {
			if err := a.RevokeToken(ctx, tok); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%s: %v, want ErrInvalidToken", name, err)
			}
		}
	})
}

// len is the number of entries, expired ones included.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

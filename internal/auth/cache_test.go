package auth

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"toolhost/internal/store"
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
	t.Helper()
	s, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "toolhost.db"))
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
	ctx := context.Background()
	a, s, clock := cachedAccounts(t, 10*time.Second)
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
}

// A cached session never outlives the session.
func TestCacheSessionExpiry(t *testing.T) {
	ctx := context.Background()
	a, _, clock := cachedAccounts(t, time.Hour)
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

package auth

import (
	"slices"
	"sync"
	"time"
)

// The credential cache: with [WithCache], Authenticate and Session answer a
// credential they resolved less than a TTL ago from memory, so that a run
// with a known token or session reads nothing from the database and does
// not wait on it when another process holds its lock.
//
// Only successes are cached, keyed by the credential's SHA-256 (the form
// the database stores, never the plaintext). An entry lives for the TTL,
// and a session's no longer than the session. Disabling or enabling a user
// or an app, or revoking a token, through these Accounts takes the entries
// out, so that a revocation made in this process holds at once; one made by
// another process (the toolhost command on the same data folder) reaches a
// cached token within the TTL: that is the revocation delay, documented in
// docs/accounts.md.
//
// # Refreshed off the request path
//
// An entry used after half its TTL is looked up again in the background
// (a goroutine bounded by [store.Budget], at most [maxRefreshes] at once and
// one per entry), while the request that noticed it is answered from
// memory. The refresh replaces the entry, or takes it out when the
// credential is gone or disabled, and does the token's last_used_at write.
// So a credential in steady use never meets a cache miss and its request
// never sends a statement to SQLite; one unused for a whole TTL is looked up
// on the request again, as the first time. The revocation delay stays the
// TTL: an entry is never answered past its expiry, refreshed or not.
//
// # When it is full
//
// A full cache first drops its expired entries and then, when that was not
// enough, an eighth of its entries chosen at random, so that the scan is paid
// once per eighth of the cache's inserts and the entries in use mostly stay
// (a random eighth holds an eighth of them): a flood of credentials the
// cache has not seen turns over only part of it, where dropping everything
// would send every caller to the database at once.

// DefaultCacheTTL is the cache TTL the server uses.
const DefaultCacheTTL = 10 * time.Second

// DefaultCacheEntries bounds the cache the server uses.
const DefaultCacheEntries = 10000

// maxRefreshes bounds the background refreshes running at once; an entry
// due for one while they are all busy is refreshed at a later use, or
// expires and is looked up on its request.
const maxRefreshes = 4

// Option configures [New].
type Option func(*Accounts)

// WithCache makes Authenticate and Session cache what they resolve for
// ttl, at most entries credentials at once (when full, expired entries are
// dropped, then an eighth of the cache at random if that was not enough).
// An entry used after half its ttl is refreshed in the background. A ttl or
// entries of zero or less disables the cache.
func WithCache(ttl time.Duration, entries int) Option {
	return func(a *Accounts) {
		if ttl > 0 && entries > 0 {
			a.cache = &cache{ttl: ttl, max: entries, m: map[string]*cached{}, slots: make(chan struct{}, maxRefreshes)}
		}
	}
}

// cache maps a credential's hash, with a kind prefix ("t" token, "s"
// session), to what it resolved to. It is safe for concurrent use.
type cache struct {
	ttl   time.Duration
	max   int
	slots chan struct{} // one per refresh running

	mu sync.Mutex
	m  map[string]*cached
	// gen counts the changes that took entries out (clear, drop): a
	// lookup that began before one must not put back what it read, which
	// may be the state before a revocation.
	gen uint64
}

type cached struct {
	principal *Principal // a token's; never handed out, only copies
	session   *Session
	// refreshAt is when a use starts a background refresh; until is when
	// the entry stops answering.
	refreshAt, until time.Time
	refreshing       bool
}

// get returns the entry of k when it has not expired at now. refresh is
// set when the caller must start a background refresh of it: the entry is
// past its refreshAt, no refresh of it is running and a slot was free (the
// caller then owns the slot and must call done).
func (c *cache) get(k string, now time.Time) (e cached, ok, refresh bool) {
	if c == nil {
		return cached{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.m[k]
	if p == nil || !now.Before(p.until) {
		return cached{}, false, false
	}
	if !p.refreshing && !now.Before(p.refreshAt) {
		select {
		case c.slots <- struct{}{}:
			p.refreshing, refresh = true, true
		default:
		}
	}
	return *p, true, refresh
}

// generation is the count of changes that took entries out so far; a
// lookup takes it before it reads, for put.
func (c *cache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores e under k from now, unless entries were taken out since gen
// was read: what the lookup read may then be the state before a
// revocation.
func (c *cache) put(k string, e cached, now time.Time, gen uint64) {
	if c == nil {
		return
	}
	e.until = now.Add(c.ttl)
	e.refreshAt = now.Add(c.ttl / 2)
	e.refreshing = false
	if e.session != nil && e.session.Expires.Before(e.until) {
		e.until = e.session.Expires
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		c.makeRoomLocked(now)
	}
	c.m[k] = &e
}

// makeRoomLocked drops the expired entries and, when the cache is still
// full, entries at random until it holds at most seven eighths of max.
// Go's map iteration starts at a random place, which is what picks them.
// c.mu must be held.
func (c *cache) makeRoomLocked(now time.Time) {
	for k, old := range c.m {
		if !now.Before(old.until) {
			delete(c.m, k)
		}
	}
	keep := c.max - max(1, c.max/8)
	for k := range c.m {
		if len(c.m) <= keep {
			break
		}
		delete(c.m, k)
	}
}

// done ends the background refresh of k that get started, whether or not
// it put a new entry: the slot is freed, and k may be refreshed again.
func (c *cache) done(k string) {
	c.mu.Lock()
	if p := c.m[k]; p != nil {
		p.refreshing = false
	}
	c.mu.Unlock()
	<-c.slots
}

// drop forgets the entry of k: its credential was revoked.
func (c *cache) drop(k string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, k)
}

// clear forgets everything: an account or app changed.
func (c *cache) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

// clonePrincipal copies p, so that a caller changing its copy cannot
// change the cache.
func clonePrincipal(p *Principal) *Principal {
	q := *p
	q.Capabilities = slices.Clone(p.Capabilities)
	return &q
}

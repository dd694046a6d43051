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
// or an app through these Accounts clears the cache, so a revocation made
// in this process holds at once; one made by another process (the toolhost
// token command on the same data folder) reaches a cached token within the
// TTL: that is the revocation delay, documented in docs/accounts.md.

// DefaultCacheTTL is the cache TTL the server uses.
const DefaultCacheTTL = 10 * time.Second

// DefaultCacheEntries bounds the cache the server uses.
const DefaultCacheEntries = 10000

// Option configures [New].
type Option func(*Accounts)

// WithCache makes Authenticate and Session cache what they resolve for
// ttl, at most entries credentials at once (when full, expired entries are
// dropped, then the whole cache if that was not enough). A ttl or entries
// of zero or less disables the cache.
func WithCache(ttl time.Duration, entries int) Option {
	return func(a *Accounts) {
		if ttl > 0 && entries > 0 {
			a.cache = &cache{ttl: ttl, max: entries, m: map[string]cached{}}
		}
	}
}

// cache maps a credential's hash, with a kind prefix ("t" token, "s"
// session), to what it resolved to. It is safe for concurrent use.
type cache struct {
	ttl time.Duration
	max int

	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	principal *Principal // a token's; never handed out, only copies
	session   *Session
	until     time.Time
}

func (c *cache) get(k string, now time.Time) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.until) {
		return cached{}, false
	}
	return e, true
}

func (c *cache) put(k string, e cached, now time.Time) {
	if c == nil {
		return
	}
	e.until = now.Add(c.ttl)
	if e.session != nil && e.session.Expires.Before(e.until) {
		e.until = e.session.Expires
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k, old := range c.m {
			if !now.Before(old.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[k] = e
}

// clear forgets everything: an account or app changed.
func (c *cache) clear() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// clonePrincipal copies p, so that a caller changing its copy cannot
// change the cache.
func clonePrincipal(p *Principal) *Principal {
	q := *p
	q.Capabilities = slices.Clone(p.Capabilities)
	return &q
}

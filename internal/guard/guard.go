// Package guard decides who a request comes from and whether it may run:
// caller resolution (tiers, client address behind trusted proxies),
// capabilities, weighted quotas per quota class and tier, per-target
// throttles for egress tools, concurrency semaphores and a challenge hook.
// It knows no transport: the routes hand it what a request presents
// ([Presented]) and map a [Decision] to their answer dialect; the
// application layer (package run) logs reported or refused decisions to
// the abuse log.
//
// # Modes
//
// In [Enforce] mode a refusal is a Decision with Allowed false. In
// [Report] mode (the default, as ADR-027's rollout asks) every would-be
// refusal is let through: the Decision has Allowed and Reported true and
// carries the reason, retry-after and rate-limit fields enforcement would
// have used.
// Admission continues past a reported stage, so quotas and semaphores are
// still counted where they can be.
//
// # Order of admission
//
// The challenge hook; authentication (a tool that is not anonymous needs at
// least a session); the capability; whether the cost can ever fit the
// tier's burst; the concurrency semaphores (per caller, then per tier); the
// quota bucket; the per-target throttle. A stage that refuses gives back
// what earlier stages took.
//
// # A shared store that cannot answer
//
// When the Limiter or the Semaphores fail (Redis unreachable), the stage is
// a [ReasonUnavailable] refusal with a retry-after of one second: enforce
// mode refuses the run (fails closed), report mode lets it through reported
// (fails open), as for any other reason.
package guard

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

var (
	// ErrInvalidCredentials is returned by Resolve when a request presents
	// a token or session that does not resolve; the API answers 401.
	ErrInvalidCredentials = errors.New("guard: invalid credentials")

	// ErrUnavailable is returned by Resolve when the store behind the
	// Credentials could not answer in time (a database locked by another
	// process, say), and is what a Credentials implementation wraps to say
	// so; the API answers 503 with Retry-After. The credential is neither
	// accepted nor refused.
	ErrUnavailable = errors.New("guard: credentials store unavailable")

	// ErrInvalidTable is returned when a quota table is malformed or
	// inconsistent.
	ErrInvalidTable = errors.New("guard: invalid quota table")

	// ErrInvalidMode is returned by ParseMode for anything but report or
	// enforce.
	ErrInvalidMode = errors.New("guard: mode must be report or enforce")

	// ErrCallerKey is returned by Inspect and Reset for a caller key that
	// is empty or holds a NUL byte (it could not be a quota key).
	ErrCallerKey = errors.New("guard: invalid caller key")
)

// Mode is report or enforce.
type Mode int

const (
	// Report lets every request through and flags what enforcement would
	// refuse. It is the zero value: the guard starts in report mode.
	Report Mode = iota
	// Enforce refuses.
	Enforce
)

// String returns "report" or "enforce".
func (m Mode) String() string {
	if m == Enforce {
		return "enforce"
	}
	return "report"
}

// ParseMode parses "report" or "enforce" (as for --guard).
func ParseMode(s string) (Mode, error) {
	switch s {
	case "report":
		return Report, nil
	case "enforce":
		return Enforce, nil
	}
	return Report, fmt.Errorf("%w: %q", ErrInvalidMode, s)
}

// Challenge is called before admission, for a challenge such as Turnstile
// to be added later without changing the API. A non-nil error refuses the
// request with [ReasonChallenge] (403). The default is [NoChallenge].
type Challenge interface {
	Check(ctx context.Context, c Caller, req Request) error
}

// NoChallenge is the default [Challenge]: it admits everything.
type NoChallenge struct{}

// Check returns nil.
func (NoChallenge) Check(context.Context, Caller, Request) error { return nil }

// Config configures a [Guard]. The zero value is usable: report mode, no
// trusted proxy, the default table, an in-memory limiter, no challenge and
// the wall clock.
type Config struct {
	// Mode is Report (default) or Enforce.
	Mode Mode
	// Trusted are the proxy hops whose X-Forwarded-For is believed; none
	// by default. See [ClientIP].
	Trusted []netip.Prefix
	// Quotas is the quota table; DefaultTable() when Classes is nil.
	Quotas Table
	// Limiter holds the quota and per-target buckets; a new
	// MemoryLimiter when nil.
	Limiter Limiter
	// Semaphores hold the concurrency slots; new MemorySemaphores when
	// nil. Replicas that share quotas share both (a RedisLimiter and
	// RedisSemaphores over one Redis).
	Semaphores Semaphores
	// Challenge is called before admission; NoChallenge when nil.
	Challenge Challenge
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// TokenCookie names the cookie holding an account token; "ov_token"
	// when empty.
	TokenCookie string
	// SessionCookie names the browser session cookie; "ov_tools_jobs"
	// when empty.
	SessionCookie string
}

// Guard resolves callers and admits requests. It is safe for concurrent
// use; its configuration is fixed at New.
type Guard struct {
	cfg Config
}

// New validates cfg, fills in defaults and returns a Guard.
func New(cfg Config) (*Guard, error) {
	if cfg.Mode != Report && cfg.Mode != Enforce {
		return nil, fmt.Errorf("%w: %d", ErrInvalidMode, int(cfg.Mode))
	}
	if cfg.Quotas.Classes == nil {
		cfg.Quotas = DefaultTable()
	}
	if err := cfg.Quotas.Validate(); err != nil {
		return nil, err
	}
	if cfg.Limiter == nil {
		cfg.Limiter = NewMemoryLimiter()
	}
	if cfg.Semaphores == nil {
		cfg.Semaphores = NewMemorySemaphores()
	}
	if cfg.Challenge == nil {
		cfg.Challenge = NoChallenge{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TokenCookie == "" {
		cfg.TokenCookie = "ov_token"
	}
	if cfg.SessionCookie == "" {
		cfg.SessionCookie = "ov_tools_jobs"
	}
	cfg.Trusted = slices.Clone(cfg.Trusted)
	return &Guard{cfg: cfg}, nil
}

// SessionCookie returns the name of the browser session cookie the guard
// reads.
func (g *Guard) SessionCookie() string { return g.cfg.SessionCookie }

// TokenCookie returns the name of the cookie the guard reads an account
// token from.
func (g *Guard) TokenCookie() string { return g.cfg.TokenCookie }

// Mode returns the guard's mode.
func (g *Guard) Mode() Mode { return g.cfg.Mode }

// Allowance returns the allowance of class for c, and its column, as
// Admit looks them up (a class the table does not name falls back to the
// default class). Other bounds keyed by tier, such as the API's bound on
// uploads read at once, derive from it.
func (g *Guard) Allowance(class string, c Caller) (Allowance, string) {
	a, column, _ := g.cfg.Quotas.Lookup(class, c)
	return a, column
}

// Package abuse is the pseudonymous abuse log of ADR-027: one row for every
// refused or throttled run and every run that trips an abuse rule, kept in
// the abuse_log table of the [store.Store] for 30 days.
//
// A row names its caller only as the hex HMAC-SHA256 of the client address
// keyed with a salt of 32 random bytes that lives in memory for one UTC day.
// At UTC midnight the day's salt is wiped and a new one is made on first
// use; no salt is ever written to disk or to a log. Two rows of one day from
// one address share a caller; rows of different days do not, and once the
// day's salt is gone nobody, not even by hashing every IPv4 address, can
// tie a caller back to an address. No raw address is stored, logged or
// returned by this package, and nothing here maps an address to its caller.
//
// Before hashing, an IPv4-mapped IPv6 address is taken as its IPv4 address
// and any other IPv6 address is cut to its /64 (the zone dropped), the unit
// a single subscriber is usually given: one caller rotating addresses inside
// its /64 links to itself within a day, at the price of conflating the
// hosts of one /64.
//
// The log is security data for acting on abuse (throttling, blocking a token
// or an app, reporting to the owner), never analytics: see docs/abuse.md.
package abuse

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"toolhost/internal/store"
)

var (
	// ErrInvalidEntry is returned by Record when an entry has no reason or a
	// field longer than [MaxFieldBytes].
	ErrInvalidEntry = errors.New("abuse: invalid entry")

	// ErrClosed is returned by Record, Purge and List after Close.
	ErrClosed = errors.New("abuse: log closed")
)

const (
	// DefaultRetention is how long rows are kept when Config.Retention is
	// zero: 30 days.
	DefaultRetention = 30 * 24 * time.Hour

	// DefaultPurgeInterval is how often the background purge runs when
	// Config.PurgeInterval is zero.
	DefaultPurgeInterval = time.Hour

	// MaxFieldBytes bounds the principal, tool and reason of an entry.
	MaxFieldBytes = 256
)

// timeFormat is the schema's timestamp text: UTC RFC 3339 with milliseconds,
// which sorts as text.
const timeFormat = "2006-01-02T15:04:05.000Z"

// Config configures a [Log]. Store is required; the other fields have
// defaults.
type Config struct {
	// Store holds the abuse_log table. The Log does not own it: Close
	// leaves it open.
	Store *store.Store
	// Now is the clock; time.Now when nil. Days are UTC days of Now.
	Now func() time.Time
	// Retention is how long a row is kept; DefaultRetention when zero.
	Retention time.Duration
	// PurgeInterval is how often the background goroutine purges;
	// DefaultPurgeInterval when zero.
	PurgeInterval time.Duration
	// Logger receives purge results and failures; slog.Default() when nil.
	// It is never given an address or a salt.
	Logger *slog.Logger
}

// Entry is one event to record.
type Entry struct {
	// IP is the client address. It is hashed and then forgotten; the zero
	// Addr (no address known) records a row without a caller.
	IP netip.Addr
	// Principal is the principal or user subject when there is one.
	// It must never be an address.
	Principal string
	// Tool is the tool's id, or "" when the refusal came before one was
	// resolved.
	Tool string
	// Reason is a stable code, such as "quota.exceeded". Required.
	Reason string
	// Reported is true when the guard was in report mode and let the run
	// through.
	Reported bool
}

// Row is one stored event, as operators read it.
type Row struct {
	ID int64
	// Time is when the event was recorded, UTC, to the millisecond.
	Time time.Time
	// Caller is the lower-case hex HMAC-SHA256 of the client address under
	// its day's salt, or "" when there was no address. Equal callers mean
	// one address (or /64) on one UTC day, nothing more.
	Caller    string
	Principal string
	Tool      string
	Reason    string
	Reported  bool
}

// Log is the abuse log. Its methods are safe for concurrent use. A Log
// runs one goroutine, which purges expired rows and drops a salt whose day
// has passed; Close stops it.
type Log struct {
	db        *store.Store
	now       func() time.Time
	retention time.Duration
	interval  time.Duration
	logger    *slog.Logger

	mu   sync.Mutex
	salt *salt // nil until first needed and after its day

	done      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

// salt is one UTC day's HMAC key.
type salt struct {
	day string // "2006-01-02", UTC
	key [32]byte
}

// New returns a Log over cfg.Store and starts its purge goroutine, which
// purges once at start and then every PurgeInterval.
func New(cfg Config) (*Log, error) {
	if cfg.Store == nil {
		return nil, errors.New("abuse: Config.Store is nil")
	}
	if cfg.Retention < 0 || cfg.PurgeInterval < 0 {
		return nil, errors.New("abuse: negative Retention or PurgeInterval")
	}
	l := &Log{
		db:        cfg.Store,
		now:       cfg.Now,
		retention: cfg.Retention,
		interval:  cfg.PurgeInterval,
		logger:    cfg.Logger,
		done:      make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.retention == 0 {
		l.retention = DefaultRetention
	}
	if l.interval == 0 {
		l.interval = DefaultPurgeInterval
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	go l.loop()
	return l, nil
}

// Close stops the purge goroutine, waits for it and wipes the salt. It does
// not close the Store. It is safe to call more than once.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		<-l.stopped
		l.mu.Lock()
		l.dropSaltLocked()
		l.mu.Unlock()
	})
	return nil
}

func (l *Log) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// loop purges and drops a stale salt at start, at every interval and at
// each UTC midnight of the clock, until Close.
func (l *Log) loop() {
	defer close(l.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		l.expireSalt()
		if _, err := l.Purge(ctx); err != nil && ctx.Err() == nil {
			l.logger.Warn("abuse log: purging expired rows", "err", err)
		}
		now := l.now().UTC()
		wait := min(l.interval, nextMidnight(now).Sub(now))
		wait = max(wait, time.Second)
		t := time.NewTimer(wait)
		select {
		case <-l.done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// nextMidnight is the UTC midnight after t.
func nextMidnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Record stores one entry with the current time. The address is hashed
// under the day's salt and goes no further.
func (l *Log) Record(ctx context.Context, e Entry) error {
	if l.closed() {
		return ErrClosed
	}
	switch {
	case e.Reason == "":
		return fmt.Errorf("%w: no reason", ErrInvalidEntry)
	case len(e.Reason) > MaxFieldBytes, len(e.Tool) > MaxFieldBytes, len(e.Principal) > MaxFieldBytes:
		return fmt.Errorf("%w: a field is longer than %d bytes", ErrInvalidEntry, MaxFieldBytes)
	}
	now := l.now().UTC()
	var caller sql.NullString
	if e.IP.IsValid() {
		caller = sql.NullString{String: l.callerHash(now, e.IP), Valid: true}
	}
	_, err := l.db.DB().ExecContext(ctx,
		`INSERT INTO abuse_log (at, caller, principal, tool, reason, reported) VALUES (?, ?, ?, ?, ?, ?)`,
		now.Format(timeFormat), caller, e.Principal, e.Tool, e.Reason, e.Reported)
	if err != nil {
		return fmt.Errorf("recording an abuse event: %w", err)
	}
	return nil
}

// Purge deletes the rows older than the retention and returns how many it
// deleted. The background goroutine calls it; callers need not.
func (l *Log) Purge(ctx context.Context) (int64, error) {
	if l.closed() {
		return 0, ErrClosed
	}
	cutoff := l.now().UTC().Add(-l.retention).Format(timeFormat)
	res, err := l.db.DB().ExecContext(ctx, `DELETE FROM abuse_log WHERE at < ?`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("purging the abuse log: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("purging the abuse log: %w", err)
	}
	if n > 0 {
		l.logger.Info("abuse log: purged expired rows", "rows", n, "before", cutoff)
	}
	return n, nil
}

// List returns the rows recorded at or after since, oldest first, at most
// limit of them (all when limit <= 0). Rows older than the retention are
// never returned, even before they are purged.
func (l *Log) List(ctx context.Context, since time.Time, limit int) ([]Row, error) {
	if l.closed() {
		return nil, ErrClosed
	}
	if floor := l.now().UTC().Add(-l.retention); since.Before(floor) {
		since = floor
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := l.db.ReadDB().QueryContext(ctx,
		`SELECT id, at, coalesce(caller, ''), principal, tool, reason, reported
		   FROM abuse_log WHERE at >= ? ORDER BY at, id LIMIT ?`,
		since.UTC().Format(timeFormat), limit)
	if err != nil {
		return nil, fmt.Errorf("listing the abuse log: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var at string
		if err := rows.Scan(&r.ID, &at, &r.Caller, &r.Principal, &r.Tool, &r.Reason, &r.Reported); err != nil {
			return nil, fmt.Errorf("listing the abuse log: %w", err)
		}
		if r.Time, err = time.Parse(timeFormat, at); err != nil {
			return nil, fmt.Errorf("listing the abuse log: row %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the abuse log: %w", err)
	}
	return out, nil
}

// normalise returns the bytes that identify a caller: 4 bytes for IPv4
// (IPv4-mapped IPv6 included), the first 8 bytes (the /64) for IPv6.
func normalise(ip netip.Addr) []byte {
	ip = ip.Unmap()
	if ip.Is4() {
		b := ip.As4()
		return b[:]
	}
	b := ip.As16()
	return b[:8]
}

// callerHash is the hex HMAC-SHA256 of ip's normalised bytes under the salt
// of now's UTC day, made (and the previous day's wiped) when needed.
func (l *Log) callerHash(now time.Time, ip netip.Addr) string {
	msg := normalise(ip)
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.saltLocked(now)
	sum := hmacSHA256(&s.key, msg)
	return hex.EncodeToString(sum[:])
}

// saltLocked returns the salt of now's UTC day, wiping a salt of another day
// and making a new one. l.mu must be held.
func (l *Log) saltLocked(now time.Time) *salt {
	day := now.UTC().Format(time.DateOnly)
	if l.salt != nil && l.salt.day == day {
		return l.salt
	}
	l.dropSaltLocked()
	s := &salt{day: day}
	rand.Read(s.key[:]) // never fails (crypto/rand, Go 1.24+)
	l.salt = s
	return s
}

// expireSalt wipes the salt if its day has passed, so that an idle Log does
// not keep yesterday's salt until its next Record.
func (l *Log) expireSalt() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.salt != nil && l.salt.day != l.now().UTC().Format(time.DateOnly) {
		l.dropSaltLocked()
	}
}

// dropSaltLocked overwrites the current salt with zeros and forgets it.
// l.mu must be held.
func (l *Log) dropSaltLocked() {
	if l.salt != nil {
		clear(l.salt.key[:])
		l.salt = nil
	}
}

// hmacSHA256 is HMAC-SHA256 (RFC 2104) of msg under a 32-byte key, written
// out rather than taken from crypto/hmac so that the key-derived pads live
// only in buffers this function wipes before it returns; crypto/hmac keeps
// them in a heap object that nothing clears. Go gives no guarantee against
// copies the runtime makes, so this is a best effort.
func hmacSHA256(key *[32]byte, msg []byte) [sha256.Size]byte {
	const block = 64
	var pad [block + sha256.Size]byte
	var inner []byte
	defer func() {
		clear(pad[:])
		clear(inner)
	}()
	for i := range block {
		k := byte(0)
		if i < len(key) {
			k = key[i]
		}
		pad[i] = k ^ 0x36
	}
	inner = make([]byte, 0, block+len(msg))
	inner = append(append(inner, pad[:block]...), msg...)
	ih := sha256.Sum256(inner)
	for i := range block {
		k := byte(0)
		if i < len(key) {
			k = key[i]
		}
		pad[i] = k ^ 0x5c
	}
	copy(pad[block:], ih[:])
	return sha256.Sum256(pad[:])
}

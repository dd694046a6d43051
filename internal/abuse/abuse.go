// Package abuse is the pseudonymous abuse log of ADR-027: every refused or
// throttled run and every run that trips an abuse rule, kept in the
// abuse_log table of the [store.Store] for 30 days.
//
// # Off the request path
//
// [Log.Record] never touches the database. It hashes the address, then
// counts the event in an in-memory table of pending rows keyed by (caller,
// principal, tool, reason, reported, time bucket of [Config.Bucket]), and
// returns. One writer goroutine moves the pending rows to the database
// every [Config.FlushInterval], in one transaction, adding each to its
// stored row of the same key and bucket or inserting it: a flood of
// refusals from one caller is one row a minute with a count, not one insert
// per request. The pending table holds at most [Config.MaxPending] keys; an
// event of a new key past that is dropped and counted ([Log.Stats],
// [ErrDropped]) and never waits. A flush that fails (the database locked by
// another process past its busy timeout) puts its rows back, within the
// same bound, for the next flush. [Log.Shutdown] writes what is pending
// within its context.
//
// # Pseudonyms
//
// A row names its caller only as the hex HMAC-SHA256 of the client address
// keyed with a salt of 32 random bytes that lives in memory for one UTC day.
// At UTC midnight the day's salt is wiped and a new one is made on first
// use; no salt is ever written to disk or to a log. Two rows of one day from
// one address share a caller; rows of different days do not, and once the
// day's salt is gone nobody, not even by hashing every IPv4 address, can
// tie a caller back to an address. No raw address is stored, logged, held
// in the pending table or returned by this package, and nothing here maps
// an address to its caller.
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
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

var (
	// ErrInvalidEntry is returned by Record when an entry has no reason or a
	// field longer than [MaxFieldBytes].
	ErrInvalidEntry = errors.New("abuse: invalid entry")

	// ErrClosed is returned by Record, Flush, Purge and List after Close.
	ErrClosed = errors.New("abuse: log closed")

	// ErrDropped is returned by Record when the pending table is full and
	// the entry's key is not in it: the event is counted in
	// [Stats.Dropped] and not recorded.
	ErrDropped = errors.New("abuse: pending rows full, event dropped")
)

const (
	// DefaultRetention is how long rows are kept when Config.Retention is
	// zero: 30 days.
	DefaultRetention = 30 * 24 * time.Hour

	// DefaultPurgeInterval is how often the background purge runs when
	// Config.PurgeInterval is zero.
	DefaultPurgeInterval = time.Hour

	// DefaultBucket is the time bucket of a row when Config.Bucket is
	// zero.
	DefaultBucket = time.Minute

	// DefaultFlushInterval is how often the writer flushes when
	// Config.FlushInterval is zero.
	DefaultFlushInterval = time.Second

	// DefaultMaxPending bounds the pending rows when Config.MaxPending is
	// zero.
	DefaultMaxPending = 4096

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
	// Bucket is the width of a row's time bucket, from 1 s to 1 h and a
	// divisor of a day; DefaultBucket when zero.
	Bucket time.Duration
	// FlushInterval is how often the writer moves pending rows to the
	// database; DefaultFlushInterval when zero.
	FlushInterval time.Duration
	// MaxPending is the most keys the pending table holds;
	// DefaultMaxPending when zero.
	MaxPending int
	// Logger receives purge results and failures; slog.Default() when nil.
	// It is never given an address or a salt.
	Logger *slog.Logger
	// Salts gives each UTC day's salt (salt.go); LocalSalts when nil.
	// Replicas that share an abuse log share a RedisSalts.
	Salts SaltSource
	// SaltCheck is how often the day's salt, once held, is checked
	// against Salts (and set back there when Salts lost it);
	// DefaultSaltCheck when zero.
	SaltCheck time.Duration
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
	// RequestID is the request's id (its X-Request-Id), or "". It is not
	// part of the row's key: a row keeps the ids of its first and last
	// events. It must never be derived from an address.
	RequestID string
}

// Row is one stored row, as operators read it: Count events of one key in
// one time bucket.
type Row struct {
	ID int64
	// Time is the first event of the row, UTC, to the millisecond.
	Time time.Time
	// Last is the row's last event; equal to Time for a single event.
	Last time.Time
	// Count is how many events the row stands for, at least 1.
	Count int64
	// Caller is the lower-case hex HMAC-SHA256 of the client address under
	// its day's salt, or "" when there was no address. Equal callers mean
	// one address (or /64) on one UTC day, nothing more.
	Caller    string
	Principal string
	Tool      string
	Reason    string
	Reported  bool
	// FirstRequestID and LastRequestID are the request ids of the events
	// at Time and at Last (equal for a single event); "" when unknown
	// (rows written before migration 0006, events without an id).
	FirstRequestID string
	LastRequestID  string
}

// Stats are the Log's counters since New.
type Stats struct {
	// Pending is the keys waiting for the writer now.
	Pending int
	// Dropped is the events not recorded because the pending table was
	// full (and the events of rows a failed flush could not put back).
	Dropped uint64
	// Written is the events the writer has stored.
	Written uint64
	// FlushErrors is the flushes that failed and were retried.
	FlushErrors uint64
}

// key is what a row aggregates over.
type key struct {
	bucket    string
	caller    string // "" with hasCaller false: no address
	hasCaller bool
	principal string
	tool      string
	reason    string
	reported  bool
}

// tally is a pending row: its count, and the time and request id of its
// first and last events.
type tally struct {
	first, last     time.Time
	firstID, lastID string
	count           int64
}

// Log is the abuse log. Its methods are safe for concurrent use. A Log
// runs one goroutine, the writer, which flushes the pending rows, purges
// expired rows, checks the salt it holds against its source and drops a
// salt whose day has passed; Close stops it.
type Log struct {
	db         Rows
	now        func() time.Time
	retention  time.Duration
	interval   time.Duration
	bucket     time.Duration
	flushEvery time.Duration
	maxPending int
	logger     *slog.Logger

	mu        sync.Mutex
	salt      *salt // nil until first needed and after its day
	salts     SaltSource
	saltCheck time.Duration

	pmu     sync.Mutex
	pending map[key]*tally
	closed  bool // set under pmu by Shutdown: Record refuses from then

	flushMu sync.Mutex // one flush at a time: the writer, List or Shutdown

	dropped, written, flushErrors atomic.Uint64

	// purged is closed after the writer's first purge, which tests wait
	// for so that it does not race with their clock.
	purged    chan struct{}
	done      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New returns a Log over cfg.Store and starts its writer goroutine, which
// purges once at start and then every PurgeInterval, and flushes every
// FlushInterval.
func New(cfg Config) (*Log, error) {
	if cfg.Store == nil {
		return nil, errors.New("abuse: Config.Store is nil")
	}
	if cfg.Retention < 0 || cfg.PurgeInterval < 0 || cfg.FlushInterval < 0 || cfg.MaxPending < 0 || cfg.SaltCheck < 0 {
		return nil, errors.New("abuse: negative Retention, PurgeInterval, FlushInterval, MaxPending or SaltCheck")
	}
	if b := cfg.Bucket; b != 0 && (b < time.Second || b > time.Hour || (24*time.Hour)%b != 0) {
		return nil, fmt.Errorf("abuse: Bucket %v is not from 1s to 1h and a divisor of a day", b)
	}
	l := &Log{
		db:         cfg.Store,
		now:        cfg.Now,
		retention:  cmp.Or(cfg.Retention, DefaultRetention),
		interval:   cmp.Or(cfg.PurgeInterval, DefaultPurgeInterval),
		bucket:     cmp.Or(cfg.Bucket, DefaultBucket),
		flushEvery: cmp.Or(cfg.FlushInterval, DefaultFlushInterval),
		maxPending: cmp.Or(cfg.MaxPending, DefaultMaxPending),
		logger:     cfg.Logger,
		salts:      cfg.Salts,
		saltCheck:  cmp.Or(cfg.SaltCheck, DefaultSaltCheck),
		pending:    map[key]*tally{},
		purged:     make(chan struct{}),
		done:       make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	if l.salts == nil {
		l.salts = LocalSalts{}
	}
	go l.loop()
	return l, nil
}

// Close is Shutdown without a deadline of its own: the last flush is one
// attempt, bounded by the store's busy timeout. It is safe to call more
// than once.
func (l *Log) Close() error { return l.Shutdown(context.Background()) }

// Shutdown stops the writer, waits for it, writes the pending rows within
// ctx (one attempt; what it cannot write is counted as dropped and the
// error returned) and wipes the salt. It does not close the Store. It is
// safe to call more than once and returns the first call's result.
func (l *Log) Shutdown(ctx context.Context) error {
	l.closeOnce.Do(func() {
		close(l.done)
		<-l.stopped
		l.pmu.Lock()
		l.closed = true
		l.pmu.Unlock()
		if err := l.flush(ctx, false); err != nil {
			l.closeErr = fmt.Errorf("flushing the abuse log at shutdown: %w", err)
		}
		l.mu.Lock()
		l.dropSaltLocked()
		l.mu.Unlock()
	})
	return l.closeErr
}

func (l *Log) isClosed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// loop is the writer: it flushes and checks a salt due for its check every
// flushEvery, and purges and drops a stale salt at start, at every purge
// interval and at each UTC midnight of the clock, until Close.
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
	flush := time.NewTicker(l.flushEvery)
	defer flush.Stop()
	first := true
	for {
		l.expireSalt()
		if _, err := l.purge(ctx); err != nil && ctx.Err() == nil {
			l.logger.Warn("abuse log: purging expired rows", "err", err)
		}
		if first {
			close(l.purged)
			first = false
		}
		now := l.now().UTC()
		wait := min(l.interval, nextMidnight(now).Sub(now))
		wait = max(wait, time.Second)
		purge := time.NewTimer(wait)
	wait:
		for {
			select {
			case <-l.done:
				purge.Stop()
				return
			case <-flush.C:
				l.checkSalt()
				if err := l.flush(ctx, true); err != nil && ctx.Err() == nil {
					l.logger.Warn("abuse log: writing pending rows; kept for the next flush", "err", err)
				}
			case <-purge.C:
				break wait
			}
		}
	}
}

// nextMidnight is the UTC midnight after t.
func nextMidnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Record counts one entry at the current time in the pending table, for
// the writer to store. The address is hashed under the day's salt and goes
// no further. Record never touches the database and never waits for it: it
// returns ErrDropped, having counted the event, when the table is full.
// ctx is unused; it is there for stores that would need one.
func (l *Log) Record(_ context.Context, e Entry) error {
	switch {
	case e.Reason == "":
		return fmt.Errorf("%w: no reason", ErrInvalidEntry)
	case len(e.Reason) > MaxFieldBytes, len(e.Tool) > MaxFieldBytes, len(e.Principal) > MaxFieldBytes, len(e.RequestID) > MaxFieldBytes:
		return fmt.Errorf("%w: a field is longer than %d bytes", ErrInvalidEntry, MaxFieldBytes)
	}
	if l.isClosed() {
		return ErrClosed
	}
	now := l.now().UTC()
	k := key{bucket: now.Truncate(l.bucket).Format(timeFormat), principal: e.Principal, tool: e.Tool, reason: e.Reason, reported: e.Reported}
	if e.IP.IsValid() {
		k.caller, k.hasCaller = l.callerHash(now, e.IP), true
	}
	l.pmu.Lock()
	defer l.pmu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if t := l.pending[k]; t != nil {
		t.count++
		t.last, t.lastID = now, e.RequestID
		return nil
	}
	if len(l.pending) >= l.maxPending {
		l.dropped.Add(1)
		return ErrDropped
	}
	l.pending[k] = &tally{first: now, last: now, firstID: e.RequestID, lastID: e.RequestID, count: 1}
	return nil
}

// Stats returns the Log's counters.
func (l *Log) Stats() Stats {
	l.pmu.Lock()
	n := len(l.pending)
	l.pmu.Unlock()
	return Stats{Pending: n, Dropped: l.dropped.Load(), Written: l.written.Load(), FlushErrors: l.flushErrors.Load()}
}

// Flush writes the pending rows now, within ctx. The writer does this by
// itself every FlushInterval; List calls it first, so that what was
// recorded is what is listed.
func (l *Log) Flush(ctx context.Context) error {
	if l.isClosed() {
		return ErrClosed
	}
	return l.flush(ctx, true)
}

// flush takes the pending table and writes it in one transaction. On a
// failure it puts the rows back when keep is set, within maxPending (the
// rest counted as dropped), or counts them all as dropped.
func (l *Log) flush(ctx context.Context, keep bool) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.pmu.Lock()
	if len(l.pending) == 0 {
		l.pmu.Unlock()
		return nil
	}
	batch := l.pending
	l.pending = map[key]*tally{}
	l.pmu.Unlock()
	err := l.write(ctx, batch)
	if err == nil {
		var n int64
		for _, t := range batch {
			n += t.count
		}
		l.written.Add(uint64(n))
		return nil
	}
	l.flushErrors.Add(1)
	l.pmu.Lock()
	defer l.pmu.Unlock()
	for k, t := range batch {
		if cur := l.pending[k]; keep && cur != nil {
			// t's events came before cur's.
			cur.count += t.count
			cur.first, cur.firstID = t.first, t.firstID
		} else if keep && len(l.pending) < l.maxPending {
			l.pending[k] = t
		} else {
			l.dropped.Add(uint64(t.count))
		}
	}
	return err
}

// Rows is where the log's rows are kept: the abuse log's statements, for
// SQLite and PostgreSQL alike, in package store (*store.Store implements
// it; store/abuselog.go).
type Rows interface {
	// AddAbuseCounts adds each count to its stored row (same key and
	// bucket), or inserts it, in one transaction.
	AddAbuseCounts(ctx context.Context, counts []store.AbuseCount) error
	// PurgeAbuseLog deletes the rows whose last event is before before.
	PurgeAbuseLog(ctx context.Context, before string) (int64, error)
	// ListAbuseLog returns the rows whose first event is at or after
	// since, oldest first, at most limit (all when limit <= 0).
	ListAbuseLog(ctx context.Context, since string, limit int) ([]store.AbuseRecord, error)
}

var _ Rows = (*store.Store)(nil)

// write adds each pending row of batch to its stored row, or inserts it,
// in one transaction.
func (l *Log) write(ctx context.Context, batch map[key]*tally) error {
	// In time order, so that row ids follow the first events.
	keys := slices.SortedFunc(maps.Keys(batch), func(a, b key) int {
		return cmp.Or(batch[a].first.Compare(batch[b].first), cmp.Compare(a.bucket+a.caller+a.tool+a.reason, b.bucket+b.caller+b.tool+b.reason))
	})
	counts := make([]store.AbuseCount, 0, len(keys))
	for _, k := range keys {
		t := batch[k]
		counts = append(counts, store.AbuseCount{
			Bucket: k.bucket, Caller: k.caller, HasCaller: k.hasCaller, Principal: k.principal, Tool: k.tool,
			Reason: k.reason, Reported: k.reported, First: t.first.Format(timeFormat), Last: t.last.Format(timeFormat),
			FirstRequestID: t.firstID, LastRequestID: t.lastID, Count: t.count,
		})
	}
	if err := l.db.AddAbuseCounts(ctx, counts); err != nil {
		return fmt.Errorf("writing the abuse log: %w", err)
	}
	return nil
}

// Purge writes the pending rows (Flush) and deletes the rows whose last
// event is older than the retention, and returns how many rows it
// deleted. The background goroutine purges by itself; callers need not.
func (l *Log) Purge(ctx context.Context) (int64, error) {
	if l.isClosed() {
		return 0, ErrClosed
	}
	if err := l.flush(ctx, true); err != nil {
		return 0, err
	}
	return l.purge(ctx)
}

func (l *Log) purge(ctx context.Context) (int64, error) {
	cutoff := l.now().UTC().Add(-l.retention).Format(timeFormat)
	n, err := l.db.PurgeAbuseLog(ctx, cutoff)
	if err != nil {
		return 0, fmt.Errorf("purging the abuse log: %w", err)
	}
	if n > 0 {
		l.logger.Info("abuse log: purged expired rows", "rows", n, "before", cutoff)
	}
	return n, nil
}

// List writes the pending rows (Flush) and returns the rows whose first
// event is at or after since, oldest first, at most limit of them (all
// when limit <= 0). Rows older than the retention are never returned, even
// before they are purged. When the pending rows cannot be written now
// (the database is locked), List still answers with the stored rows.
func (l *Log) List(ctx context.Context, since time.Time, limit int) ([]Row, error) {
	if l.isClosed() {
		return nil, ErrClosed
	}
	if err := l.flush(ctx, true); err != nil {
		l.logger.Warn("abuse log: writing pending rows before listing", "err", err)
	}
	if floor := l.now().UTC().Add(-l.retention); since.Before(floor) {
		since = floor
	}
	stored, err := l.db.ListAbuseLog(ctx, since.UTC().Format(timeFormat), limit)
	if err != nil {
		return nil, fmt.Errorf("listing the abuse log: %w", err)
	}
	out := make([]Row, 0, len(stored))
	for _, sr := range stored {
		r := Row{ID: sr.ID, Count: sr.Count, Caller: sr.Caller, Principal: sr.Principal, Tool: sr.Tool, Reason: sr.Reason,
			Reported: sr.Reported, FirstRequestID: sr.FirstRequestID, LastRequestID: sr.LastRequestID}
		if r.Time, err = time.Parse(timeFormat, sr.At); err != nil {
			return nil, fmt.Errorf("listing the abuse log: row %d: %w", r.ID, err)
		}
		if r.Last, err = time.Parse(timeFormat, sr.LastAt); err != nil {
			return nil, fmt.Errorf("listing the abuse log: row %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, nil
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

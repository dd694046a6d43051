package abuse

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a Log over a real database file in a temporary folder.
type fixture struct {
	log   *Log
	store *store.Store
	path  string
	clock *clock
	logs  *bytes.Buffer
}

func newFixture(t *testing.T, start time.Time) *fixture {
	return newFixtureOn(t, storetest.SQLite(t), start)
}

// newFixtureOn is newFixture on backend b (storetest.Run).
func newFixtureOn(t *testing.T, b storetest.Backend, start time.Time) *fixture {
	t.Helper()
	path := b.Target
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, path: path, clock: &clock{t: start}, logs: &bytes.Buffer{}}
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: f.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.log, err = New(Config{Store: s, Now: f.clock.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.log.Close() })
	<-f.log.purged // the writer's first purge, before the test moves the clock
	return f
}

// syncWriter serialises writes from the purge goroutine and the test.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// callerOf records an entry for ip and returns the caller it was stored as.
func (f *fixture) callerOf(t *testing.T, ip string) string {
	t.Helper()
	if err := f.log.Record(context.Background(), Entry{IP: netip.MustParseAddr(ip), Tool: "port_check", Reason: "quota.exceeded"}); err != nil {
		t.Fatal(err)
	}
	rows, err := f.log.List(context.Background(), time.Time{}, 0)
	if err != nil || len(rows) == 0 {
		t.Fatalf("List: %d rows, %v", len(rows), err)
	}
	c := rows[len(rows)-1].Caller
	if len(c) != 64 {
		t.Fatalf("caller %q is not 64 hex digits", c)
	}
	return c
}

// currentSalt is the test hook: the salt the Log holds now, or nil.
func (l *Log) currentSalt() *salt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.salt
}

var day0 = time.Date(2026, 11, 30, 23, 50, 0, 0, time.UTC)

func TestCallerIsDailyPseudonym(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixtureOn(t, backend, day0)
		a := f.callerOf(t, "198.51.100.23")

		tests := []struct {
			name string
			ip   string
			same bool
		}{
			{name: "same IPv4", ip: "198.51.100.23", same: true},
			{name: "IPv4-mapped IPv6 is its IPv4", ip: "::ffff:198.51.100.23", same: true},
			{name: "another IPv4", ip: "198.51.100.24", same: false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := f.callerOf(t, tt.ip); (got == a) != tt.same {
					t.Fatalf("caller of %s = %s, of 198.51.100.23 = %s; want same=%v", tt.ip, got, a, tt.same)
				}
			})
		}

		v6 := f.callerOf(t, "2001:db8:1:2::1")
		for _, tt := range []struct {
			name string
			ip   string
			same bool
		}{
			{name: "same /64", ip: "2001:db8:1:2:aaaa:bbbb:cccc:dddd", same: true},
			{name: "zone dropped", ip: "2001:db8:1:2::99%eth0", same: true},
			{name: "another /64", ip: "2001:db8:1:3::1", same: false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if got := f.callerOf(t, tt.ip); (got == v6) != tt.same {
					t.Fatalf("caller of %s = %s, of 2001:db8:1:2::1 = %s; want same=%v", tt.ip, got, v6, tt.same)
				}
			})
		}

		old := f.log.currentSalt()
		if old == nil || old.day != "2026-11-30" {
			t.Fatalf("salt before midnight: %+v", old)
		}
		oldKey := old.key // a copy, to check that it stops working
		// Past UTC midnight: a new salt, new hashes, and the old salt wiped.
		f.clock.Add(15 * time.Minute)
		b := f.callerOf(t, "198.51.100.23")
		if b == a {
			t.Fatalf("the caller is %s on both days", a)
		}
		if b2 := f.callerOf(t, "198.51.100.23"); b2 != b {
			t.Fatalf("caller on day 2: %s, then %s", b, b2)
		}
		cur := f.log.currentSalt()
		if cur == old || cur.day != "2026-12-01" {
			t.Fatalf("salt after midnight: %p %+v (old %p)", cur, cur.day, old)
		}
		if old.key != ([32]byte{}) {
			t.Fatal("the old day's salt is still in memory")
		}
		if cur.key == oldKey {
			t.Fatal("the new salt equals the old one")
		}
		// The old key gave the day-1 caller; the Log can no longer make it.
		if got := fmt.Sprintf("%x", hmacSHA256(&oldKey, normalise(netip.MustParseAddr("198.51.100.23")))); got != a {
			t.Fatalf("the old key gives %s, want %s", got, a)
		}
	})
}

func TestIdleSaltExpires(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixtureOn(t, backend, day0)
		f.callerOf(t, "198.51.100.23")
		old := f.log.currentSalt()
		f.clock.Add(time.Hour)
		f.log.expireSalt() // what the goroutine does at midnight
		if f.log.currentSalt() != nil || old.key != ([32]byte{}) {
			t.Fatal("an idle Log keeps yesterday's salt")
		}
	})
}

func TestHMACMatchesCryptoHMAC(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i * 7)
	}
	for _, msg := range [][]byte{nil, {198, 51, 100, 23}, bytes.Repeat([]byte{0xab}, 100)} {
		m := hmac.New(sha256.New, key[:])
		m.Write(msg)
		if got, want := hmacSHA256(&key, msg), m.Sum(nil); !bytes.Equal(got[:], want) {
			t.Fatalf("hmacSHA256(%x) = %x, want %x", msg, got, want)
		}
	}
}

func TestNoRawIPStoredOrLogged(t *testing.T) {
	f := newFixture(t, day0)
	ips := []string{"198.51.100.23", "203.0.113.77", "::ffff:192.0.2.55", "2001:db8:cafe:1::42", "2001:db8:cafe:1:dead:beef:0:7"}
	ctx := context.Background()
	for i := range 500 {
		ip := netip.MustParseAddr(ips[i%len(ips)])
		e := Entry{IP: ip, Principal: "user:bob", Tool: "port_check", Reason: "quota.exceeded", Reported: i%2 == 0}
		if err := f.log.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		if i == 250 {
			f.clock.Add(time.Hour) // across midnight: a rotation in the middle
		}
	}
	stored, err := f.log.List(ctx, time.Time{}, 0)
	if err != nil || len(stored) == 0 {
		t.Fatalf("List: %d rows, %v", len(stored), err)
	}
	var events int64
	for _, r := range stored {
		events += r.Count
	}
	if events != 500 {
		t.Fatalf("the rows count %d events, want 500", events)
	}
	f.clock.Add(31 * 24 * time.Hour)
	if err := f.log.Record(ctx, Entry{IP: netip.MustParseAddr(ips[0]), Reason: "abuse.rule"}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.log.Purge(ctx); err != nil || n != int64(len(stored)) {
		t.Fatalf("Purge = %d, %v; want %d", n, err, len(stored))
	}
	rows, err := f.log.List(ctx, time.Time{}, 0)
	if err != nil || len(rows) != 1 {
		t.Fatalf("List: %d rows, %v", len(rows), err)
	}
	f.log.Close()
	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}

	// Everything SQLite left on disk: the file and any -wal or -shm.
	files, _ := filepath.Glob(f.path + "*")
	var disk []byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	logs := f.logs.String()
	for _, s := range ips {
		ip := netip.MustParseAddr(s)
		forms := [][]byte{[]byte(s), []byte(ip.Unmap().String()), []byte(ip.StringExpanded())}
		if u := ip.Unmap(); u.Is4() {
			b := u.As4()
			forms = append(forms, b[:])
		} else {
			b := u.As16()
			forms = append(forms, b[:], b[:8])
		}
		for _, form := range forms {
			if bytes.Contains(disk, form) {
				t.Errorf("the database files contain %q (from %s)", form, s)
			}
			if strings.Contains(logs, string(form)) {
				t.Errorf("the logs contain %q (from %s)", form, s)
			}
		}
	}
	if !strings.Contains(logs, "purged expired rows") {
		t.Errorf("the captured log has no purge line, so it tested nothing:\n%s", logs)
	}
}

func TestPurgeAndRetention(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		start := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
		f := newFixtureOn(t, backend, start)
		ctx := context.Background()
		for _, age := range []time.Duration{0, 10 * 24 * time.Hour, 29 * 24 * time.Hour, 30*24*time.Hour + time.Minute} {
			f.clock.Set(start.Add(40*24*time.Hour - age))
			if err := f.log.Record(ctx, Entry{Tool: fmt.Sprint(age), Reason: "quota.exceeded"}); err != nil {
				t.Fatal(err)
			}
		}
		f.clock.Set(start.Add(40 * 24 * time.Hour))
		// Expired rows are hidden before they are purged ...
		rows, err := f.log.List(ctx, time.Time{}, 0)
		if err != nil || len(rows) != 3 {
			t.Fatalf("List before purge: %+v, %v; want 3 rows", rows, err)
		}
		// ... and purged.
		if n, err := f.log.Purge(ctx); err != nil || n != 1 {
			t.Fatalf("Purge = %d, %v; want 1", n, err)
		}
		var count int
		if err := f.store.DB().QueryRow(`SELECT count(*) FROM abuse_log`).Scan(&count); err != nil || count != 3 {
			t.Fatalf("%d rows left, %v; want 3", count, err)
		}
		if n, err := f.log.Purge(ctx); err != nil || n != 0 {
			t.Fatalf("second Purge = %d, %v; want 0", n, err)
		}
	})
}

func TestListSince(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
		f := newFixtureOn(t, backend, start)
		ctx := context.Background()
		for i := range 4 {
			f.clock.Set(start.Add(time.Duration(i) * time.Hour))
			e := Entry{IP: netip.MustParseAddr("192.0.2.1"), Principal: fmt.Sprintf("app:%d", i), Tool: "dns_lookup", Reason: "probe.forbidden", Reported: i == 3}
			if err := f.log.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			name       string
			since      time.Time
			limit      int
			principals []string
		}{
			{name: "all", principals: []string{"app:0", "app:1", "app:2", "app:3"}},
			{name: "since the second", since: start.Add(time.Hour), principals: []string{"app:1", "app:2", "app:3"}},
			{name: "since between", since: start.Add(90 * time.Minute), principals: []string{"app:2", "app:3"}},
			{name: "limit", since: start.Add(time.Hour), limit: 1, principals: []string{"app:1"}},
			{name: "since the future", since: start.Add(24 * time.Hour)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rows, err := f.log.List(ctx, tt.since, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range rows {
					got = append(got, r.Principal)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.principals) {
					t.Fatalf("principals %q, want %q", got, tt.principals)
				}
			})
		}
		rows, _ := f.log.List(ctx, start.Add(3*time.Hour), 0)
		want := Row{ID: rows[0].ID, Time: start.Add(3 * time.Hour), Last: start.Add(3 * time.Hour), Count: 1, Caller: rows[0].Caller, Principal: "app:3", Tool: "dns_lookup", Reason: "probe.forbidden", Reported: true}
		if len(rows) != 1 || rows[0] != want || len(rows[0].Caller) != 64 {
			t.Fatalf("row %+v, want %+v", rows[0], want)
		}
	})
}

func TestRecordRefusesInvalidEntries(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixtureOn(t, backend, day0)
		long := strings.Repeat("x", MaxFieldBytes+1)
		tests := []struct {
			name  string
			entry Entry
			err   error
		}{
			{name: "no reason", entry: Entry{Tool: "t"}, err: ErrInvalidEntry},
			{name: "long reason", entry: Entry{Reason: long}, err: ErrInvalidEntry},
			{name: "long tool", entry: Entry{Reason: "r", Tool: long}, err: ErrInvalidEntry},
			{name: "long principal", entry: Entry{Reason: "r", Principal: long}, err: ErrInvalidEntry},
			{name: "long request id", entry: Entry{Reason: "r", RequestID: long}, err: ErrInvalidEntry},
			{name: "no address", entry: Entry{Reason: "r"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := f.log.Record(context.Background(), tt.entry); !errors.Is(err, tt.err) {
					t.Fatalf("Record = %v, want %v", err, tt.err)
				}
			})
		}
		rows, err := f.log.List(context.Background(), time.Time{}, 0)
		if err != nil || len(rows) != 1 || rows[0].Caller != "" {
			t.Fatalf("rows %+v, %v; want one without a caller", rows, err)
		}
	})
}

func TestCloseStopsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	path := filepath.Join(t.TempDir(), "toolhost.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := New(Config{Store: s, Now: func() time.Time { return day0 }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), Entry{IP: netip.MustParseAddr("192.0.2.1"), Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	sl := l.currentSalt()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if l.currentSalt() != nil || sl.key != ([32]byte{}) {
		t.Fatal("Close left the salt in memory")
	}
	if err := l.Record(context.Background(), Entry{Reason: "r"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close = %v", err)
	}
	if _, err := l.List(context.Background(), time.Time{}, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("List after Close = %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a Store succeeded")
	}
}

package abuse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// The aggregator (issue 11, finding 9): Record counts in memory, one
// writer stores one row per key and bucket, a locked database never holds
// a Record up, and Shutdown writes what is pending.

// aggFixture is a Log with a small pending table and a fast writer.
func aggFixture(t *testing.T, start time.Time, maxPending int) *fixture {
	return aggFixtureOn(t, storetest.SQLite(t), start, maxPending)
}

// aggFixtureOn is aggFixture on backend b (storetest.Run).
func aggFixtureOn(t *testing.T, b storetest.Backend, start time.Time, maxPending int) *fixture {
	t.Helper()
	path := b.Target
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, path: path, clock: &clock{t: start}}
	f.log, err = New(Config{Store: s, Now: f.clock.Now, Logger: slog.New(slog.DiscardHandler),
		FlushInterval: 10 * time.Millisecond, MaxPending: maxPending})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.log.Close() })
	<-f.log.purged
	return f
}

// stored reads every row straight from the table: key → count.
func (f *fixture) stored(t *testing.T) (rows int, counts map[string]int64) {
	t.Helper()
	q, err := f.store.ReadDB().Query(`SELECT bucket, coalesce(caller, '-'), tool, reason, reported, count FROM abuse_log`)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	counts = map[string]int64{}
	for q.Next() {
		var bucket, caller, tool, reason string
		var reported bool
		var n int64
		if err := q.Scan(&bucket, &caller, &tool, &reason, &reported, &n); err != nil {
			t.Fatal(err)
		}
		rows++
		counts[fmt.Sprintf("%s %.8s %s %s %v", bucket, caller, tool, reason, reported)] += n
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, counts
}

// total sums counts.
func total(counts map[string]int64) (n int64) {
	for _, c := range counts {
		n += c
	}
	return n
}

// lockFile takes the write lock of the database at path from a connection
// of its own, as another process would, until the returned func is called.
func lockFile(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

func TestFloodIsBoundedRows(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		start := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
		f := aggFixtureOn(t, backend, start, 0)
		ctx := context.Background()
		ips := []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("2001:db8::1")}
		reasons := []string{"quota_exceeded", "concurrency"}
		const perWorker = 1500 // 8 × 1500 events spread evenly over the 6 keys
		flood := func() {
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range perWorker {
						j := w*perWorker + i
						e := Entry{IP: ips[j%len(ips)], Tool: "hash", Reason: reasons[(j/len(ips))%len(reasons)], Reported: true}
						if err := f.log.Record(ctx, e); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		flood()
		// Some flushes ran during the flood: the rows of a key add up.
		if err := f.log.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rows, counts := f.stored(t)
		if rows != len(ips)*len(reasons) || total(counts) != 8*perWorker {
			t.Fatalf("%d rows counting %d events, want %d rows counting %d: %v", rows, total(counts), len(ips)*len(reasons), 8*perWorker, counts)
		}
		for k, n := range counts {
			if n != 8*perWorker/int64(len(ips)*len(reasons)) {
				t.Errorf("row %s counts %d", k, n)
			}
		}
		// The next minute is another bucket: new rows, the old ones unchanged.
		f.clock.Add(time.Minute)
		flood()
		if err := f.log.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rows, counts = f.stored(t)
		if rows != 2*len(ips)*len(reasons) || total(counts) != 2*8*perWorker {
			t.Fatalf("after a minute: %d rows counting %d events", rows, total(counts))
		}
		listed, err := f.log.List(ctx, time.Time{}, 0)
		if err != nil || len(listed) != rows {
			t.Fatalf("List: %d rows, %v", len(listed), err)
		}
		for _, r := range listed {
			if r.Count < 1 || r.Last.Before(r.Time) || len(r.Caller) != 64 {
				t.Errorf("row %+v", r)
			}
		}
		if s := f.log.Stats(); s.Dropped != 0 || s.Written != 2*8*perWorker || s.Pending != 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

func TestRecordNeverWaitsForALockedDatabase(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	const maxPending = 50
	f := aggFixture(t, start, maxPending)
	ctx := context.Background()
	// A key the table already holds keeps counting when it is full.
	if err := f.log.Record(ctx, Entry{Principal: "user:held", Tool: "hash", Reason: "quota_exceeded"}); err != nil {
		t.Fatal(err)
	}
	release := lockFile(t, f.path)
	// The writer is now stuck behind the lock at each flush (in SQLite's
	// busy wait, up to store.BusyTimeout); Records go on in memory. Wait
	// until it is inside the database: it has taken the pending rows and
	// holds flushMu, in the write.
	if err := f.log.Record(ctx, Entry{Principal: "user:first", Tool: "hash", Reason: "quota_exceeded"}); err != nil {
		t.Fatal(err)
	}
	inWrite := func() bool {
		if f.log.flushMu.TryLock() {
			f.log.flushMu.Unlock()
			return false
		}
		return true
	}
	for deadline := time.Now().Add(time.Minute); f.log.Stats().Pending > 0 || !inWrite(); {
		if time.Now().After(deadline) {
			t.Fatalf("the writer never started a flush: %+v", f.log.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	blockedFlushErrors := f.log.Stats().FlushErrors
	done := make(chan error, 1)
	const events = 20000
	go func() {
		var dropped int
		for i := range events {
			e := Entry{Principal: fmt.Sprintf("user:%d", i%200), Tool: "hash", Reason: "quota_exceeded"}
			if i%2 == 0 {
				e.Principal = "user:held"
			}
			err := f.log.Record(ctx, e)
			switch {
			case errors.Is(err, ErrDropped):
				dropped++
			case err != nil:
				done <- err
				return
			}
		}
		if dropped == 0 {
			done <- errors.New("nothing was dropped past MaxPending")
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(store.BusyTimeout / 2):
		// The lock is still held: Records are waiting on the database.
		t.Fatal("Record waited while the database was locked")
	}
	s := f.log.Stats()
	if s.Written != 0 || s.Pending > maxPending || s.Dropped == 0 {
		t.Fatalf("stats while locked: %+v", s)
	}
	// Every Record returned while the writer sat in one write, blocked in
	// the database: the same flush, not yet failed.
	if !inWrite() || s.FlushErrors != blockedFlushErrors {
		t.Fatalf("the writer's flush ended while the Records ran (flush errors %d → %d): the test did not hold it in the database", blockedFlushErrors, s.FlushErrors)
	}
	release()
	// Once the lock is gone the writer stores what it kept.
	deadline := time.Now().Add(2*store.BusyTimeout + 10*time.Second)
	for f.log.Stats().Pending > 0 || f.log.Stats().Written+f.log.Stats().Dropped != events+2 {
		if time.Now().After(deadline) {
			t.Fatalf("the writer never caught up: %+v", f.log.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, counts := f.stored(t)
	s = f.log.Stats()
	if uint64(total(counts)) != s.Written || s.Written+s.Dropped != events+2 {
		t.Fatalf("stored %d events, stats %+v", total(counts), s)
	}
}

func TestShutdownFlushes(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		start := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
		f := aggFixtureOn(t, backend, start, 0)
		ctx := context.Background()
		for i := range 300 {
			if err := f.log.Record(ctx, Entry{Tool: "hash", Reason: "quota_exceeded", Principal: fmt.Sprint("user:", i%3)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.log.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if rows, counts := f.stored(t); rows != 3 || total(counts) != 300 {
			t.Fatalf("after Shutdown: %d rows counting %d", rows, total(counts))
		}
		if err := f.log.Record(ctx, Entry{Reason: "r"}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Record after Shutdown = %v", err)
		}
	})
}

func TestShutdownEndsWithinItsContext(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	f := aggFixture(t, start, 0)
	ctx := context.Background()
	for range 10 {
		if err := f.log.Record(ctx, Entry{Tool: "hash", Reason: "quota_exceeded"}); err != nil {
			t.Fatal(err)
		}
	}
	lockFile(t, f.path)
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := f.log.Shutdown(sctx)
	// Its documented bound is its context; the margin is generous.
	if took := time.Since(began); err == nil || took > store.BusyTimeout {
		t.Fatalf("Shutdown under a lock = %v after %v", err, took)
	}
	if s := f.log.Stats(); s.Dropped != 10 {
		t.Fatalf("stats %+v: the unwritten events are not counted as dropped", s)
	}
}

package abuse

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// An aggregated row keeps the request ids of its first and last events:
// in memory, across flushes (the stored row's first stays, its last moves
// on), across a flush that failed and was put back, and apart per key.
func TestRowKeepsFirstAndLastRequestID(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	f := aggFixture(t, start, 0)
	ctx := context.Background()
	ip := netip.MustParseAddr("192.0.2.7")
	record := func(id string, reason string) {
		t.Helper()
		f.clock.Add(time.Millisecond) // each event later than the one before
		if err := f.log.Record(ctx, Entry{IP: ip, Tool: "hash", Reason: reason, RequestID: id}); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []Row {
		t.Helper()
		rows, err := f.log.List(ctx, time.Time{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	check := func(step string, want ...[2]string) {
		t.Helper()
		rows := list()
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows %+v, want %d", step, len(rows), rows, len(want))
		}
		for i, r := range rows {
			if r.FirstRequestID != want[i][0] || r.LastRequestID != want[i][1] {
				t.Errorf("%s: row %d (%s, %d events) has ids %q…%q, want %q…%q", step, i, r.Reason, r.Count,
					r.FirstRequestID, r.LastRequestID, want[i][0], want[i][1])
			}
		}
	}

	// One event: its id is the first and the last.
	record("r1", "quota.exceeded")
	check("one event", [2]string{"r1", "r1"})
	// More of the key in the same minute: the stored row's first stays.
	record("r2", "quota.exceeded")
	record("r3", "quota.exceeded")
	check("a later flush", [2]string{"r1", "r3"})
	// Another key has its own ids.
	record("t1", "throttled")
	check("two keys", [2]string{"r1", "r3"}, [2]string{"t1", "t1"})

	// A flush that fails while newer events of its key came in puts its
	// rows back before them: the row's first is the failed batch's, its
	// last the newest.
	release := lockFile(t, f.path)
	record("c1", "challenge")
	for f.log.Stats().Pending != 0 { // the writer took the batch and waits on the lock
		time.Sleep(5 * time.Millisecond)
	}
	record("c2", "challenge")
	for f.log.Stats().FlushErrors == 0 { // and failed
		time.Sleep(10 * time.Millisecond)
	}
	release()
	check("after a failed flush", [2]string{"r1", "r3"}, [2]string{"t1", "t1"}, [2]string{"c1", "c2"})

	// An event without an id leaves the row's last id empty: the last is
	// the last event's, known or not.
	record("", "quota.exceeded")
	check("an event without an id", [2]string{"r1", ""}, [2]string{"t1", "t1"}, [2]string{"c1", "c2"})

	// A new minute is a new row.
	f.clock.Add(time.Minute)
	record("r7", "quota.exceeded")
	rows := list()
	if len(rows) != 4 || rows[3].FirstRequestID != "r7" || rows[3].LastRequestID != "r7" || rows[3].Count != 1 {
		t.Fatalf("the next minute's row: %+v", rows)
	}
	if rows[0].Count != 4 || rows[2].Count != 2 {
		t.Errorf("the rows count %d and %d events, want 4 and 2", rows[0].Count, rows[2].Count)
	}
}

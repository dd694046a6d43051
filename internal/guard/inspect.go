package guard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Holdings is what the guard holds of one caller key: for each class and
// column of the quota table, the caller's bucket when it is not full and
// the caller's own concurrency slots when any is held. The slots a tier
// shares (concurrent_per_tier) are not the caller's and are not listed.
type Holdings struct {
	// Key is the caller key, as Caller.Key and the abuse log spell it.
	Key string `json:"caller"`
	// Cells are in the order of the classes' names, then the table's
	// columns (anonymous, session, user, app, sandbox); empty when the
	// caller holds nothing.
	Cells []Cell `json:"cells"`
}

// Cell is the caller's state in one class and column.
type Cell struct {
	Class  string `json:"class"`
	Column string `json:"column"`
	// Burst is the bucket's size in the table; Remaining is its whole
	// units now and FullInMS the milliseconds until it is full again.
	// Remaining is Burst and FullInMS 0 for a bucket the caller has not
	// spent from.
	Burst     int   `json:"burst"`
	Remaining int   `json:"remaining"`
	FullInMS  int64 `json:"full_in_ms"`
	// Slots are the caller's concurrency slots held now, of at most
	// ConcurrentPerCaller.
	ConcurrentPerCaller int        `json:"concurrent_per_caller,omitempty"`
	Slots               []SlotHeld `json:"slots,omitempty"`
}

// SlotHeld is one held concurrency slot of a caller.
type SlotHeld struct {
	Holder string `json:"holder"`
	// Expires is when the slot lapses unless renewed: the end of its
	// lease, in this process's clock; zero for a run's slot of in-process
	// semaphores, which has no lease.
	Expires time.Time `json:"expires,omitzero"`
}

// cell is one class and column of the table with the keys of a caller's
// bucket and slots in it, as Admit spells them.
type cell struct {
	class, column string
	a             Allowance
	bucket, slots string
}

// cells lists the classes and columns of the table for callerKey, every
// column of every class (a caller key does not say its tier: "p:" is a
// user's or an app's).
func (g *Guard) cells(callerKey string) ([]cell, error) {
	if callerKey == "" || strings.ContainsRune(callerKey, 0) {
		return nil, fmt.Errorf("%w: %q", ErrCallerKey, callerKey)
	}
	var out []cell
	names := make([]string, 0, len(g.cfg.Quotas.Classes))
	for name := range g.cfg.Quotas.Classes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cl := g.cfg.Quotas.Classes[name]
		for _, col := range []struct {
			name string
			a    Allowance
		}{
			{Anonymous.String(), cl.Anonymous},
			{Session.String(), cl.Session},
			{User.String(), cl.User},
			{App.String(), cl.App},
			{"sandbox", cl.Sandbox},
		} {
			out = append(out, cell{class: name, column: col.name, a: col.a,
				bucket: "q\x00" + name + "\x00" + col.name + "\x00" + callerKey,
				slots:  name + "\x00" + col.name + "\x00" + callerKey})
		}
	}
	return out, nil
}

// Inspect reads what the guard holds of callerKey — its quota buckets and
// its concurrency slots, in every class and column of the table — without
// spending or taking anything. With a shared limiter and semaphores
// (Redis) it is every replica's state; with the in-process ones, this
// guard's alone.
func (g *Guard) Inspect(ctx context.Context, callerKey string) (Holdings, error) {
	cells, err := g.cells(callerKey)
	if err != nil {
		return Holdings{}, err
	}
	r := Holdings{Key: callerKey, Cells: []Cell{}}
	now := g.cfg.Now()
	for _, c := range cells {
		out := Cell{Class: c.class, Column: c.column, Burst: c.a.Burst, Remaining: c.a.Burst,
			ConcurrentPerCaller: c.a.ConcurrentPerCaller}
		if c.a.Burst > 0 && c.a.PerMinute > 0 {
			lv, err := g.cfg.Limiter.Peek(ctx, c.bucket, c.a, now)
			if err != nil {
				return Holdings{}, fmt.Errorf("inspecting %s/%s: %w", c.class, c.column, err)
			}
			out.Remaining, out.FullInMS = lv.Remaining, lv.Reset.Milliseconds()
			if lv.Reset > 0 && out.FullInMS == 0 {
				out.FullInMS = 1 // not full: never shown as 0
			}
		}
		// A slot is read even where the table sets no limit: it may have
		// been taken under another table.
		hs, err := g.cfg.Semaphores.Holders(ctx, c.slots)
		if err != nil {
			return Holdings{}, fmt.Errorf("inspecting %s/%s: %w", c.class, c.column, err)
		}
		for _, h := range hs {
			out.Slots = append(out.Slots, SlotHeld{Holder: h.ID, Expires: h.Expires})
		}
		if out.FullInMS > 0 || len(out.Slots) > 0 {
			r.Cells = append(r.Cells, out)
		}
	}
	return r, nil
}

// Reset frees what the guard holds of callerKey: it fills every bucket of
// the caller up again and frees every concurrency slot of the caller's
// own, in every class and column, whoever holds them — with a job's slot
// in its tier's semaphore, which has the same holder id (a job still running
// with such a slot finds it gone at its next renewal and runs on without
// it). It returns what Inspect saw just before. Resetting a caller that
// holds nothing is no error.
func (g *Guard) Reset(ctx context.Context, callerKey string) (Holdings, error) {
	r, err := g.Inspect(ctx, callerKey)
	if err != nil {
		return Holdings{}, err
	}
	cells, _ := g.cells(callerKey)
	for _, c := range cells {
		if err := g.cfg.Limiter.Reset(ctx, c.bucket); err != nil {
			return r, fmt.Errorf("resetting %s/%s: %w", c.class, c.column, err)
		}
		// A job's slot in the tier's semaphore has the holder id of its
		// slot in the caller's (one per admission): it goes too.
		hs, err := g.cfg.Semaphores.Holders(ctx, c.slots)
		if err != nil {
			return r, fmt.Errorf("resetting %s/%s: %w", c.class, c.column, err)
		}
		for _, h := range hs {
			if err := g.cfg.Semaphores.ReleaseLease(ctx, c.class+"\x00"+c.column, h.ID); err != nil {
				return r, fmt.Errorf("resetting %s/%s: %w", c.class, c.column, err)
			}
		}
		if err := g.cfg.Semaphores.Reset(ctx, c.slots); err != nil {
			return r, fmt.Errorf("resetting %s/%s: %w", c.class, c.column, err)
		}
	}
	return r, nil
}

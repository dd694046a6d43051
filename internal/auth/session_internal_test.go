package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// A session works until SessionTTL after it was made, not a moment later,
// and PurgeSessions deletes it then; ids are not given again.
func TestSessionExpiry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		s, err := store.Open(ctx, backend.Target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a := New(s)
		start := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
		clock := start
		a.now = func() time.Time { return clock }

		old, expires, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Date(2026, 12, 30, 12, 0, 0, 123000000, time.UTC)
		if !expires.Equal(want) {
			t.Fatalf("expires %v, want %v", expires, want)
		}
		clock = start.Add(SessionTTL / 2)
		young, _, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			at      time.Time
			old, ok bool
		}{
			{at: start, old: true},
			{at: want.Add(-time.Millisecond), old: true},
			{at: want},
			{at: want.Add(time.Hour)},
		}
		for _, st := range steps {
			clock = st.at
			sess, err := a.Session(ctx, old)
			if st.old && (err != nil || !sess.Expires.Equal(want)) {
				t.Fatalf("at %v: %+v, %v; want the session", st.at, sess, err)
			}
			if !st.old && !errors.Is(err, ErrInvalidSession) {
				t.Fatalf("at %v: %+v, %v; want ErrInvalidSession", st.at, sess, err)
			}
		}
		youngSession, err := a.Session(ctx, young)
		if err != nil {
			t.Fatalf("the younger session: %v", err)
		}
		n, err := a.PurgeSessions(ctx)
		if err != nil || n != 1 {
			t.Fatalf("PurgeSessions = %d, %v; want 1", n, err)
		}
		if _, err := a.Session(ctx, young); err != nil {
			t.Fatalf("the younger session after the purge: %v", err)
		}
		// Purge the youngest too, so that the highest id is gone, then check a
		// new session does not take it again.
		clock = clock.Add(SessionTTL)
		if n, err := a.PurgeSessions(ctx); err != nil || n != 1 {
			t.Fatalf("second PurgeSessions = %d, %v; want 1", n, err)
		}
		fresh, _, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := a.Session(ctx, fresh)
		if err != nil || sess.ID <= youngSession.ID {
			t.Fatalf("new session %+v, %v; its id must be above %d", sess, err, youngSession.ID)
		}
	})
}

package auth

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// last_used_at is written on first use, left alone within a minute, and
// moved on after that.
func TestLastUsed(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		s, err := store.Open(ctx, backend.Target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a := New(s)
		clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		a.now = func() time.Time { return clock }
		tok, err := a.CreateToken(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() string {
			t.Helper()
			var v sql.NullString
			if err := s.ReadDB().QueryRow(`SELECT last_used_at FROM tokens`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v.String
		}
		if got := lastUsed(); got != "" {
			t.Fatalf("a new token has last_used_at %q", got)
		}
		steps := []struct {
			advance time.Duration
			want    string
		}{
			{0, "2026-11-30T12:00:00.000Z"},
			{59 * time.Second, "2026-11-30T12:00:00.000Z"},
			{2 * time.Second, "2026-11-30T12:01:01.000Z"},
		}
		for _, st := range steps {
			clock = clock.Add(st.advance)
			if _, err := a.Authenticate(ctx, tok); err != nil {
				t.Fatal(err)
			}
			if got := lastUsed(); got != st.want {
				t.Fatalf("at %v: last_used_at %q, want %q", clock, got, st.want)
			}
		}
	})
}

// The stored hash is the hex SHA-256 of the whole token, as documented.
func TestHashToken(t *testing.T) {
	tok := TokenPrefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	sum := sha256.Sum256([]byte(tok))
	if got := hashToken(tok); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("hashToken = %s", got)
	}
}

//go:build toolhost_count

package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

// The refresh of a cached token runs off the request (issue 13, item 2):
// a use past half the TTL sends no statement from Authenticate's own
// goroutine; the lookup and the last_used_at write come from the refresh's.
// It needs the store's statement counter:
//
//	go test -count=1 -tags toolhost_count -run Statements ./internal/auth
func TestRefreshStatementsOffTheRequest(t *testing.T) {
	ctx := context.Background()
	a, _, clock := cachedAccounts(t, 2*time.Minute)
	tok, err := a.CreateToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	clock.add(3 * time.Minute) // past the TTL: the next use looks up on its request
	store.StartCounting()
	if _, err := a.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	miss := store.StopCounting()
	if len(miss) == 0 || !miss[0].OnStack("github.com/toolhost/toolhost/internal/auth.(*Accounts).Authenticate") {
		t.Fatalf("an expired entry was not looked up on its request: %v", miss)
	}

	clock.add(61 * time.Second) // past half the TTL, within it, and last_used_at due
	store.StartCounting()
	if _, err := a.Authenticate(ctx, tok); err != nil {
		t.Fatal(err)
	}
	waitRefreshes(t, a)
	got := store.StopCounting()
	var updates int
	for _, st := range got {
		if st.OnStack("github.com/toolhost/toolhost/internal/auth.(*Accounts).Authenticate") || !st.OnStack("github.com/toolhost/toolhost/internal/auth.(*Accounts).refresh") {
			t.Errorf("a statement not from the refresh: %v\n\t%s", st, strings.Join(st.Stack, "\n\t"))
		}
		if strings.HasPrefix(st.SQL, "UPDATE tokens SET last_used_at") {
			updates++
		}
	}
	if len(got) == 0 || updates != 1 {
		t.Fatalf("the refresh sent %v, want the lookup and one last_used_at write", got)
	}
}

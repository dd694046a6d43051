package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// A session signed in with a user's token is that user's caller (tier user,
// key user:ID, no capability) for SignInTTL; it fails while the account is
// disabled, and ends on sign-out, on revocation of its token (in this
// process at once, cache or not), and never comes from an app's token.
func TestUserSession(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		for _, cached := range []bool{false, true} {
			name := "no cache"
			if cached {
				name = "cache"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				_, s := accountsOn(t, backend)
				var opts []auth.Option
				if cached {
					opts = append(opts, auth.WithCache(time.Minute, 100))
				}
				a := auth.New(s, opts...)
				tok, err := a.CreateUserToken(ctx, "bob", []string{auth.CapabilityNetProbe})
				if err != nil {
					t.Fatal(err)
				}
				before := time.Now()
				value, sess, err := a.CreateUserSession(ctx, tok)
				if err != nil {
					t.Fatal(err)
				}
				if d := sess.Expires.Sub(before); d < auth.SignInTTL-time.Second || d > auth.SignInTTL+time.Second {
					t.Fatalf("expires in %v, want %v", d, auth.SignInTTL)
				}
				got, err := a.Session(ctx, value)
				if err != nil {
					t.Fatal(err)
				}
				p := got.Principal()
				if !got.SignedIn() || got.UserName != "bob" || p.Tier != auth.TierUser || p.Key != "user:1" || len(p.Capabilities) != 0 || p.SessionID != sess.ID {
					t.Fatalf("session %+v, principal %+v", got, p)
				}
				if _, err := a.Authenticate(ctx, value); !errors.Is(err, auth.ErrInvalidToken) {
					t.Fatalf("a session value as a token: %v", err)
				}

				if err := a.DisableUser(ctx, "bob"); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Session(ctx, value); !errors.Is(err, auth.ErrDisabled) {
					t.Fatalf("disabled: %v", err)
				}
				if _, _, err := a.CreateUserSession(ctx, tok); !errors.Is(err, auth.ErrDisabled) {
					t.Fatalf("sign-in while disabled: %v", err)
				}
				if err := a.EnableUser(ctx, "bob"); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Session(ctx, value); err != nil {
					t.Fatalf("enabled again: %v", err)
				}

				// Sign-out.
				other, _, err := a.CreateUserSession(ctx, tok)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.DeleteSession(ctx, other); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Session(ctx, other); !errors.Is(err, auth.ErrInvalidSession) {
					t.Fatalf("after sign-out: %v", err)
				}
				if err := a.DeleteSession(ctx, other); !errors.Is(err, auth.ErrInvalidSession) {
					t.Fatalf("second sign-out: %v", err)
				}

				// Revoking the token ends the sessions signed in with it.
				if err := a.RevokeToken(ctx, tok); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Session(ctx, value); !errors.Is(err, auth.ErrInvalidSession) {
					t.Fatalf("after revocation: %v", err)
				}
				if _, _, err := a.CreateUserSession(ctx, tok); !errors.Is(err, auth.ErrInvalidToken) {
					t.Fatalf("sign-in with a revoked token: %v", err)
				}

				app, err := a.CreateAppToken(ctx, "ci", nil, false)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := a.CreateUserSession(ctx, app); !errors.Is(err, auth.ErrInvalidToken) {
					t.Fatalf("sign-in with an app token: %v", err)
				}
				if _, _, err := a.CreateUserSession(ctx, "th_nope"); !errors.Is(err, auth.ErrInvalidToken) {
					t.Fatalf("sign-in with a malformed token: %v", err)
				}

				// An anonymous session stays what it was.
				anon, _, err := a.CreateSession(ctx)
				if err != nil {
					t.Fatal(err)
				}
				as, err := a.Session(ctx, anon)
				if err != nil || as.SignedIn() || as.Principal().Tier != auth.TierSession {
					t.Fatalf("anonymous session %+v, %v", as, err)
				}
			})
		}
	})
}

// Users and UserTokens list accounts and tokens without secrets;
// RevokeUserToken revokes one by id, and only the named account's.
func TestUserListing(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		bob := token(t, a, "bob")
		token(t, a, "bob")
		token(t, a, "Alice")
		if _, _, err := a.CreateUserSession(ctx, bob); err != nil {
			t.Fatal(err)
		}
		if err := a.DisableUser(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		users, err := a.Users(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(users) != 2 || users[0].Name != "Alice" || !users[0].Disabled || users[0].Tokens != 1 ||
			users[1].Name != "bob" || users[1].Disabled || users[1].Tokens != 2 || users[1].Sessions != 1 || users[1].LastUsed == "" {
			t.Fatalf("users %+v", users)
		}
		toks, err := a.UserTokens(ctx, "bob")
		if err != nil || len(toks) != 2 || toks[0].ID >= toks[1].ID {
			t.Fatalf("tokens %+v, %v", toks, err)
		}
		if _, err := a.UserTokens(ctx, "nobody"); !errors.Is(err, auth.ErrNoSuchUser) {
			t.Fatalf("tokens of nobody: %v", err)
		}
		alice, _ := a.UserTokens(ctx, "alice")
		if err := a.RevokeUserToken(ctx, "bob", alice[0].ID); !errors.Is(err, auth.ErrNoSuchToken) {
			t.Fatalf("revoking alice's token as bob's: %v", err)
		}
		if err := a.RevokeUserToken(ctx, "bob", toks[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, bob); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("bob's first token after revocation: %v", err)
		}
		users, _ = a.Users(ctx)
		if users[1].Tokens != 1 || users[1].Sessions != 0 {
			t.Fatalf("after revocation %+v", users[1])
		}
	})
}

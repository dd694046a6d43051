package auth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// Closing the store stops every goroutine its pools started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// accounts opens accounts on a new database file in a temporary folder and
// returns them with the store.
func accounts(t *testing.T) (*auth.Accounts, *store.Store) {
	return accountsOn(t, storetest.SQLite(t))
}

// accountsOn is accounts on backend b (storetest.Run).
func accountsOn(t *testing.T, b storetest.Backend) (*auth.Accounts, *store.Store) {
	t.Helper()
	s, err := store.Open(context.Background(), b.Target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return auth.New(s), s
}

// token creates a token for user and fails the test when it cannot.
func token(t *testing.T, a *auth.Accounts, user string) string {
	t.Helper()
	tok, err := a.CreateToken(context.Background(), user)
	if err != nil {
		t.Fatalf("CreateToken(%q): %v", user, err)
	}
	return tok
}

func TestCreateAndAuthenticate(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		first := token(t, a, "alice")
		second := token(t, a, "Alice") // the same account: names ignore ASCII case
		if first == second {
			t.Fatal("two tokens are equal")
		}
		for _, tok := range []string{first, second} {
			if !strings.HasPrefix(tok, auth.TokenPrefix) || len(tok) != 46 {
				t.Fatalf("token %q is not th_ and 43 characters", tok)
			}
			if raw, err := base64.RawURLEncoding.DecodeString(tok[3:]); err != nil || len(raw) != 32 {
				t.Fatalf("token %q does not carry 32 bytes: %v", tok, err)
			}
		}
		p1, err := a.Authenticate(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := a.Authenticate(ctx, second)
		if err != nil {
			t.Fatal(err)
		}
		if p1.UserName != "alice" || p1.UserID != p2.UserID || p2.UserName != "alice" || p1.TokenID == p2.TokenID {
			t.Fatalf("principals %+v and %+v, want one user alice with two tokens", p1, p2)
		}
		if _, err := a.CreateUser(ctx, "ALICE"); !errors.Is(err, auth.ErrUserExists) {
			t.Fatalf("CreateUser(ALICE) = %v, want ErrUserExists", err)
		}
		id, err := a.CreateUser(ctx, "bob")
		if err != nil || id == p1.UserID {
			t.Fatalf("CreateUser(bob) = %d, %v", id, err)
		}
		p3, err := a.Authenticate(ctx, token(t, a, "bob"))
		if err != nil || p3.UserID != id || p3.UserName != "bob" {
			t.Fatalf("bob's token authenticates %+v, %v; want user %d", p3, err, id)
		}
	})
}

func TestWrongTokens(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		a, _ := accountsOn(t, backend)
		good := token(t, a, "alice")
		flipped := []byte(good)
		if flipped[10] == 'A' {
			flipped[10] = 'B'
		} else {
			flipped[10] = 'A'
		}
		// Same length and alphabet as a real token, never issued.
		unknown := auth.TokenPrefix + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		tests := []struct {
			name  string
			token string
		}{
			{name: "empty", token: ""},
			{name: "prefix only", token: auth.TokenPrefix},
			{name: "unknown", token: unknown},
			{name: "one character changed", token: string(flipped)},
			{name: "one character more", token: good + "A"},
			{name: "one character less", token: good[:len(good)-1]},
			{name: "upper-case prefix", token: "TH_" + good[3:]},
			{name: "no prefix", token: good[3:]},
			{name: "with scheme", token: "Bearer " + good},
			{name: "surrounding space", token: " " + good[:len(good)-1]},
			{name: "padded", token: good[:len(good)-1] + "="},
			{name: "standard base64", token: good[:len(good)-1] + "+"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if p, err := a.Authenticate(context.Background(), tt.token); !errors.Is(err, auth.ErrInvalidToken) {
					t.Fatalf("Authenticate = %+v, %v; want ErrInvalidToken", p, err)
				}
			})
		}
	})
}

// Disabling an account fails every one of its tokens with ErrDisabled, and
// only its tokens; enabling it again restores them.
func TestDisabledUser(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		carol := []string{token(t, a, "carol"), token(t, a, "carol"), token(t, a, "carol")}
		dave := token(t, a, "dave")

		if err := a.DisableUser(ctx, "Carol"); err != nil {
			t.Fatal(err)
		}
		if err := a.DisableUser(ctx, "carol"); err != nil {
			t.Fatalf("disabling twice: %v", err)
		}
		for i, tok := range carol {
			if p, err := a.Authenticate(ctx, tok); !errors.Is(err, auth.ErrDisabled) {
				t.Fatalf("carol's token %d: %+v, %v; want ErrDisabled", i, p, err)
			}
		}
		if _, err := a.CreateToken(ctx, "carol"); !errors.Is(err, auth.ErrDisabled) {
			t.Fatalf("CreateToken for a disabled account = %v, want ErrDisabled", err)
		}
		if _, err := a.Authenticate(ctx, dave); err != nil {
			t.Fatalf("dave's token after disabling carol: %v", err)
		}

		if err := a.EnableUser(ctx, "carol"); err != nil {
			t.Fatal(err)
		}
		for i, tok := range carol {
			if _, err := a.Authenticate(ctx, tok); err != nil {
				t.Fatalf("carol's token %d after enabling: %v", i, err)
			}
		}
	})
}

func TestNoSuchUser(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		token(t, a, "erin")
		for _, name := range []string{"frank", "", "not a name"} {
			if err := a.DisableUser(ctx, name); !errors.Is(err, auth.ErrNoSuchUser) {
				t.Fatalf("DisableUser(%q) = %v, want ErrNoSuchUser", name, err)
			}
			if err := a.EnableUser(ctx, name); !errors.Is(err, auth.ErrNoSuchUser) {
				t.Fatalf("EnableUser(%q) = %v, want ErrNoSuchUser", name, err)
			}
		}
	})
}

func TestUserNames(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		tests := []struct {
			name string
			user string
			ok   bool
		}{
			{name: "plain", user: "alice", ok: true},
			{name: "email", user: "ops+toolhost@example.org", ok: true},
			{name: "dotted", user: "svc.backup_2-b", ok: true},
			{name: "one character", user: "x", ok: true},
			{name: "64 characters", user: strings.Repeat("a", 64), ok: true},
			{name: "empty", user: ""},
			{name: "65 characters", user: strings.Repeat("a", 65)},
			{name: "space", user: "alice smith"},
			{name: "leading dot", user: ".alice"},
			{name: "leading dash", user: "-alice"},
			{name: "non-ASCII", user: "élise"},
			{name: "newline", user: "alice\n"},
			{name: "quote", user: `al"ice`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a, _ := accountsOn(t, backend)
				_, errUser := a.CreateUser(context.Background(), tt.user)
				_, errToken := a.CreateToken(context.Background(), tt.user)
				if tt.ok && (errUser != nil || errToken != nil) {
					t.Fatalf("CreateUser = %v, CreateToken = %v; want both to succeed", errUser, errToken)
				}
				if !tt.ok && (!errors.Is(errUser, auth.ErrInvalidName) || !errors.Is(errToken, auth.ErrInvalidName)) {
					t.Fatalf("CreateUser = %v, CreateToken = %v; want ErrInvalidName", errUser, errToken)
				}
			})
		}
	})
}

// No file of the database (the database, its WAL and shared memory) holds a
// token's text or its 32 random bytes, before or after the store is closed.
// The token's hash is found, which shows that the scan would see the token.
func TestNoPlaintextStored(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(context.Background(), filepath.Join(dir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := auth.New(s)
	var tokens []string
	for _, user := range []string{"alice", "alice", "bob"} {
		tok := token(t, a, user)
		if _, err := a.Authenticate(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	scan := func(when string) {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("listing the database files: %v", err)
		}
		var all []byte
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, data...)
		}
		for _, tok := range tokens {
			raw, _ := base64.RawURLEncoding.DecodeString(tok[3:])
			for _, secret := range [][]byte{[]byte(tok), []byte(tok[3:]), raw} {
				if bytes.Contains(all, secret) {
					t.Fatalf("%s: the database files hold a token in clear", when)
				}
			}
			if !bytes.Contains(all, []byte(sha256Hex(tok))) {
				t.Fatalf("%s: the database files do not hold the token's hash; the scan sees nothing", when)
			}
		}
	}
	scan("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	scan("closed")
}

// Authenticate is called from many goroutines at once, with good, unknown
// and disabled tokens, while tokens are being created; run with -race.
func TestConcurrentAuthenticate(t *testing.T) {
	ctx := context.Background()
	a, _ := accounts(t)
	good := []string{token(t, a, "alice"), token(t, a, "bob")}
	disabled := token(t, a, "mallory")
	if err := a.DisableUser(ctx, "mallory"); err != nil {
		t.Fatal(err)
	}
	unknown := auth.TokenPrefix + strings.Repeat("A", 43)

	const workers, rounds = 16, 50
	var wg sync.WaitGroup
	var accepted atomic.Int64
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				if w == 0 && i%10 == 0 {
					if _, err := a.CreateToken(ctx, "alice"); err != nil {
						errs <- err
					}
				}
				// A good token is accepted, or meets a store too busy to
				// look it up within its budget (answered 503, never 401).
				p, err := a.Authenticate(ctx, good[(w+i)%2])
				switch {
				case errors.Is(err, store.ErrBusy):
				case err != nil || (p.UserName != "alice" && p.UserName != "bob"):
					errs <- errors.Join(errors.New("good token refused"), err)
				default:
					accepted.Add(1)
				}
				// A refusal either way: the store may also be too busy to
				// look the token up within its budget on a loaded machine
				// (store.ErrBusy, answered 503), never an acceptance.
				if _, err := a.Authenticate(ctx, disabled); !errors.Is(err, auth.ErrDisabled) && !errors.Is(err, store.ErrBusy) {
					errs <- errors.Join(errors.New("disabled token not refused"), err)
				}
				if _, err := a.Authenticate(ctx, unknown); !errors.Is(err, auth.ErrInvalidToken) && !errors.Is(err, store.ErrBusy) {
					errs <- errors.Join(errors.New("unknown token not refused"), err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if accepted.Load() == 0 {
		t.Fatal("no good token was accepted")
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

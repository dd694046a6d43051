package auth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

func TestAppTokens(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		probe := []string{auth.CapabilityNetProbe}
		tests := []struct {
			name    string
			app     string
			caps    []string
			sandbox bool
			want    []string
		}{
			{name: "plain", app: "ci"},
			{name: "with the probe capability", app: "monitor", caps: probe, want: probe},
			{name: "capability repeated", app: "monitor2", caps: []string{auth.CapabilityNetProbe, auth.CapabilityNetProbe}, want: probe},
			{name: "sandbox", app: "sandboxed", sandbox: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tok, err := a.CreateAppToken(ctx, tt.app, tt.caps, tt.sandbox)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(tok, auth.TokenPrefix) || len(tok) != 46 {
					t.Fatalf("token %q is not th_ and 43 characters", tok)
				}
				p, err := a.Authenticate(ctx, tok)
				if err != nil {
					t.Fatal(err)
				}
				if p.Tier != auth.TierApp || p.AppName != tt.app || p.AppID == 0 || p.UserID != 0 || p.UserName != "" ||
					p.Key != "app:"+strconv.FormatInt(p.AppID, 10) || p.Sandbox != tt.sandbox || !slices.Equal(p.Capabilities, tt.want) {
					t.Fatalf("principal %+v", p)
				}
				if got := p.Has(auth.CapabilityNetProbe); got != (len(tt.want) > 0) {
					t.Fatalf("Has(%s) = %v", auth.CapabilityNetProbe, got)
				}
			})
		}
	})
}

// User tokens are tier user with the key the API has always built, hold no
// capability unless granted one, and are never sandbox tokens.
func TestUserTokenTiers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		plain := token(t, a, "alice")
		granted, err := a.CreateUserToken(ctx, "alice", []string{auth.CapabilityNetProbe})
		if err != nil {
			t.Fatal(err)
		}
		p1, err := a.Authenticate(ctx, plain)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := a.Authenticate(ctx, granted)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*auth.Principal{p1, p2} {
			if p.Tier != auth.TierUser || p.Key != "user:"+strconv.FormatInt(p.UserID, 10) || p.UserName != "alice" || p.AppID != 0 || p.Sandbox {
				t.Fatalf("principal %+v", p)
			}
		}
		if p1.Capabilities != nil || p1.Has(auth.CapabilityNetProbe) {
			t.Fatalf("a plain user token holds %q", p1.Capabilities)
		}
		if !p2.Has(auth.CapabilityNetProbe) || len(p2.Capabilities) != 1 {
			t.Fatalf("the granted token holds %q", p2.Capabilities)
		}
		// An app and a user of one name are two callers.
		appTok, err := a.CreateAppToken(ctx, "alice", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		p3, err := a.Authenticate(ctx, appTok)
		if err != nil || p3.Key == p1.Key || p3.Tier != auth.TierApp {
			t.Fatalf("app alice: %+v, %v; user alice is %s", p3, err, p1.Key)
		}
		// A sandbox token holds no capability, and is not made when asked for one.
		if tok, err := a.CreateAppToken(ctx, "trial", []string{auth.CapabilityNetProbe}, true); !errors.Is(err, auth.ErrSandboxCapability) || tok != "" {
			t.Fatalf("a sandbox token with the probe capability: %q, %v; want ErrSandboxCapability", tok, err)
		}
		if (*auth.Principal)(nil).Has(auth.CapabilityNetProbe) {
			t.Fatal("a nil principal holds a capability")
		}
	})
}

func TestTierOrder(t *testing.T) {
	tiers := []auth.Tier{auth.TierAnonymous, auth.TierSession, auth.TierUser, auth.TierApp}
	names := []string{"anonymous", "session", "user", "app"}
	for i, tier := range tiers {
		if tier.String() != names[i] {
			t.Fatalf("tier %d is %q, want %q", i, tier, names[i])
		}
		if i > 0 && tiers[i-1] >= tier {
			t.Fatalf("%s is not below %s", tiers[i-1], tier)
		}
	}
	if s := auth.Tier(9).String(); s != "tier(9)" {
		t.Fatalf("Tier(9) = %q", s)
	}
}

func TestCapabilityNames(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		tests := []struct {
			name string
			cap  string
			want error
		}{
			{name: "probe", cap: "tools.net.probe"},
			{name: "unknown", cap: "tools.net.scan", want: auth.ErrUnknownCapability},
			{name: "unknown short", cap: "admin", want: auth.ErrUnknownCapability},
			{name: "empty", cap: "", want: auth.ErrInvalidCapability},
			{name: "capitals", cap: "Tools.net.probe", want: auth.ErrInvalidCapability},
			{name: "leading digit", cap: "1tools", want: auth.ErrInvalidCapability},
			{name: "leading dot", cap: ".tools", want: auth.ErrInvalidCapability},
			{name: "dash", cap: "tools.net-probe", want: auth.ErrInvalidCapability},
			{name: "space", cap: "tools.net.probe ", want: auth.ErrInvalidCapability},
			{name: "too long", cap: "a" + strings.Repeat("b", 64), want: auth.ErrInvalidCapability},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := auth.CheckCapability(tt.cap); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
					t.Fatalf("CheckCapability(%q) = %v, want %v", tt.cap, err, tt.want)
				}
				if tt.want == nil {
					return
				}
				// Refused wherever a token is made, and no token is made.
				a, s := accountsOn(t, backend)
				ctx := context.Background()
				if tok, err := a.CreateAppToken(ctx, "app", []string{auth.CapabilityNetProbe, tt.cap}, false); !errors.Is(err, tt.want) || tok != "" {
					t.Fatalf("CreateAppToken = %q, %v; want %v", tok, err, tt.want)
				}
				if tok, err := a.CreateUserToken(ctx, "bob", []string{tt.cap}); !errors.Is(err, tt.want) || tok != "" {
					t.Fatalf("CreateUserToken = %q, %v; want %v", tok, err, tt.want)
				}
				var n int
				if err := s.ReadDB().QueryRow(`SELECT (SELECT count(*) FROM tokens) + (SELECT count(*) FROM apps) + (SELECT count(*) FROM users)`).Scan(&n); err != nil || n != 0 {
					t.Fatalf("%d rows left behind (%v)", n, err)
				}
			})
		}
		if got := auth.Capabilities(); !slices.Equal(got, []string{auth.CapabilityNetProbe}) {
			t.Fatalf("Capabilities() = %q", got)
		}
	})
}

// Disabling an app fails every one of its tokens, and only its tokens;
// enabling it restores them. A disabled account's tokens keep failing, with
// or without capabilities.
func TestDisabledApp(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		app1, err := a.CreateAppToken(ctx, "scanner", []string{auth.CapabilityNetProbe}, false)
		if err != nil {
			t.Fatal(err)
		}
		app2, err := a.CreateAppToken(ctx, "Scanner", nil, true) // the same app, a sandbox token
		if err != nil {
			t.Fatal(err)
		}
		other, err := a.CreateAppToken(ctx, "other", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		user, err := a.CreateUserToken(ctx, "scanner", []string{auth.CapabilityNetProbe})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.DisableApp(ctx, "SCANNER"); err != nil {
			t.Fatal(err)
		}
		if err := a.DisableApp(ctx, "scanner"); err != nil {
			t.Fatalf("disabling twice: %v", err)
		}
		for i, tok := range []string{app1, app2} {
			if p, err := a.Authenticate(ctx, tok); !errors.Is(err, auth.ErrDisabled) {
				t.Fatalf("scanner's token %d: %+v, %v; want ErrDisabled", i, p, err)
			}
		}
		if _, err := a.CreateAppToken(ctx, "scanner", nil, false); !errors.Is(err, auth.ErrDisabled) {
			t.Fatalf("CreateAppToken for a disabled app = %v, want ErrDisabled", err)
		}
		for _, tok := range []string{other, user} {
			if _, err := a.Authenticate(ctx, tok); err != nil {
				t.Fatalf("a token of another caller after disabling the app: %v", err)
			}
		}
		if err := a.EnableApp(ctx, "scanner"); err != nil {
			t.Fatal(err)
		}
		if p, err := a.Authenticate(ctx, app1); err != nil || !p.Has(auth.CapabilityNetProbe) {
			t.Fatalf("after enabling: %+v, %v", p, err)
		}

		if err := a.DisableUser(ctx, "scanner"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, user); !errors.Is(err, auth.ErrDisabled) {
			t.Fatalf("a disabled account's token with a capability: %v, want ErrDisabled", err)
		}
		if _, err := a.Authenticate(ctx, app1); err != nil {
			t.Fatalf("app scanner after disabling user scanner: %v", err)
		}
		for _, name := range []string{"nobody", "", "not a name"} {
			if err := a.DisableApp(ctx, name); !errors.Is(err, auth.ErrNoSuchApp) {
				t.Fatalf("DisableApp(%q) = %v, want ErrNoSuchApp", name, err)
			}
			if err := a.EnableApp(ctx, name); !errors.Is(err, auth.ErrNoSuchApp) {
				t.Fatalf("EnableApp(%q) = %v, want ErrNoSuchApp", name, err)
			}
		}
		if _, err := a.CreateAppToken(ctx, "bad name", nil, false); !errors.Is(err, auth.ErrInvalidName) {
			t.Fatalf("CreateAppToken(bad name) = %v, want ErrInvalidName", err)
		}
	})
}

func TestSessions(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		ctx := context.Background()
		a, _ := accountsOn(t, backend)
		v1, exp1, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v2, _, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v1 == v2 || !strings.HasPrefix(v1, auth.SessionPrefix) || len(v1) != 47 {
			t.Fatalf("session values %q and %q", v1, v2)
		}
		if raw, err := base64.RawURLEncoding.DecodeString(v1[4:]); err != nil || len(raw) != 32 {
			t.Fatalf("session value %q does not carry 32 bytes: %v", v1, err)
		}
		s1, err := a.Session(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := a.Session(ctx, v2)
		if err != nil {
			t.Fatal(err)
		}
		if s1.ID == s2.ID || !s1.Expires.Equal(exp1) {
			t.Fatalf("sessions %+v and %+v; the first should expire at %v", s1, s2, exp1)
		}
		p := s1.Principal()
		if p.Tier != auth.TierSession || p.Key != "session:"+strconv.FormatInt(s1.ID, 10) || p.SessionID != s1.ID ||
			p.UserID != 0 || p.AppID != 0 || p.TokenID != 0 || p.Capabilities != nil || p.Has(auth.CapabilityNetProbe) {
			t.Fatalf("session principal %+v", p)
		}

		// A session value is no token and a token no session value.
		tok := token(t, a, "alice")
		if _, err := a.Authenticate(ctx, v1); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("Authenticate(session value) = %v, want ErrInvalidToken", err)
		}
		for _, bad := range []string{"", tok, auth.SessionPrefix, v1[:len(v1)-1], v1 + "A", "ths_" + strings.Repeat("A", 43), "THS_" + v1[4:], v1[:len(v1)-1] + "="} {
			if s, err := a.Session(ctx, bad); !errors.Is(err, auth.ErrInvalidSession) {
				t.Fatalf("Session(%q) = %+v, %v; want ErrInvalidSession", bad, s, err)
			}
		}
	})
}

// No file of the database holds an app token, a session value or their
// random bytes; their hashes are found, which shows that the scan works.
func TestNoPlaintextCallers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, filepath.Join(dir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := auth.New(s)
	var secrets []string
	for i, sandbox := range []bool{false, true} {
		var caps []string
		if !sandbox {
			caps = []string{auth.CapabilityNetProbe}
		}
		tok, err := a.CreateAppToken(ctx, "app"+strconv.Itoa(i), caps, sandbox)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok)
	}
	tok, err := a.CreateUserToken(ctx, "bob", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, tok)
	for range 3 {
		v, _, err := a.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Session(ctx, v); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, v)
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
		for _, secret := range secrets {
			body := secret[strings.IndexByte(secret, '_')+1:]
			raw, _ := base64.RawURLEncoding.DecodeString(body)
			for _, b := range [][]byte{[]byte(secret), []byte(body), raw} {
				if bytes.Contains(all, b) {
					t.Fatalf("%s: the database files hold a secret in clear", when)
				}
			}
			if !bytes.Contains(all, []byte(sha256Hex(secret))) {
				t.Fatalf("%s: the database files do not hold the secret's hash; the scan sees nothing", when)
			}
		}
	}
	scan("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	scan("closed")
}

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/store"
)

var tokenLine = regexp.MustCompile(`^th_[A-Za-z0-9_-]{43}\n$`)

// authenticate checks token against the database of dataDir with the real
// auth package, as the server will.
func authenticate(t *testing.T, dataDir, token string) (*auth.Principal, error) {
	t.Helper()
	s, err := store.Open(context.Background(), filepath.Join(dataDir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return auth.New(s).Authenticate(context.Background(), token)
}

// newToken runs token create and returns the token it printed.
func newToken(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"token", "create"}, args...)
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || !tokenLine.MatchString(stdout.String()) {
		t.Fatalf("run(%q) = %d\nstdout: %q\nstderr: %s", args, code, stdout.String(), stderr.String())
	}
	return strings.TrimSuffix(stdout.String(), "\n")
}

func TestAccountCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(dataDirEnv, "")
	bob := newToken(t, "--user", "bob", "--data-dir", dir)
	bob2 := newToken(t, "--data-dir", dir, "--user", "bob")
	alice := newToken(t, "--user", "alice", "--data-dir", dir)
	if p, err := authenticate(t, dir, bob); err != nil || p.UserName != "bob" {
		t.Fatalf("bob's token: %+v, %v", p, err)
	}

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // expected stdout, exactly
		stderr string // substring expected on stderr
	}{
		{name: "disable", args: []string{"user", "disable", "bob", "--data-dir", dir}, code: 0},
		{name: "disable again", args: []string{"user", "disable", "--data-dir", dir, "bob"}, code: 0},
		{name: "no token for a disabled user", args: []string{"token", "create", "--user", "bob", "--data-dir", dir}, code: 1, stderr: `user "bob" is disabled`},
		{name: "disable a missing user", args: []string{"user", "disable", "nobody", "--data-dir", dir}, code: 1, stderr: `no such user "nobody"`},
		{name: "disable in a missing data folder", args: []string{"user", "disable", "bob", "--data-dir", filepath.Join(dir, "nope")}, code: 1, stderr: `no such user "bob": no database`},
		{name: "invalid name", args: []string{"token", "create", "--user", "bob smith", "--data-dir", dir}, code: 1, stderr: "not a valid user name"},
		{name: "token without subcommand", args: []string{"token"}, code: 2, stderr: "usage"},
		{name: "token list", args: []string{"token", "list"}, code: 2, stderr: "usage"},
		{name: "token create without user", args: []string{"token", "create", "--data-dir", dir}, code: 2, stderr: "usage"},
		{name: "token create with an argument", args: []string{"token", "create", "--user", "bob", "extra"}, code: 2, stderr: "usage"},
		{name: "user without subcommand", args: []string{"user"}, code: 2, stderr: "usage"},
		{name: "user delete", args: []string{"user", "delete", "bob"}, code: 2, stderr: "usage"},
		{name: "disable without name", args: []string{"user", "disable", "--data-dir", dir}, code: 2, stderr: "usage"},
		{name: "disable two names", args: []string{"user", "disable", "bob", "alice", "--data-dir", dir}, code: 2, stderr: "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || stdout.String() != tt.stdout || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("run(%q) = %d\nstdout: %q\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("user disable made a data folder: %v", err)
	}

	for _, tok := range []string{bob, bob2} {
		if p, err := authenticate(t, dir, tok); !errors.Is(err, auth.ErrDisabled) {
			t.Fatalf("bob's token after user disable: %+v, %v; want ErrDisabled", p, err)
		}
	}
	if _, err := authenticate(t, dir, alice); err != nil {
		t.Fatalf("alice's token after disabling bob: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"user", "enable", "bob", "--data-dir", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("user enable = %d: %s", code, stderr.String())
	}
	if _, err := authenticate(t, dir, bob); err != nil {
		t.Fatalf("bob's token after user enable: %v", err)
	}
}

// Without --data-dir the database is in $TOOLHOST_DATA_DIR, or in ./data
// when that is unset.
func TestDataDirDefault(t *testing.T) {
	t.Run("environment", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "from-env")
		t.Setenv(dataDirEnv, dir)
		tok := newToken(t, "--user", "carol")
		if p, err := authenticate(t, dir, tok); err != nil || p.UserName != "carol" {
			t.Fatalf("token in $%s: %+v, %v", dataDirEnv, p, err)
		}
	})
	t.Run("flag over environment", func(t *testing.T) {
		env, flagDir := t.TempDir(), t.TempDir()
		t.Setenv(dataDirEnv, env)
		newToken(t, "--user", "carol", "--data-dir", flagDir)
		if _, err := os.Stat(filepath.Join(flagDir, "toolhost.db")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(env, "toolhost.db")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the environment's folder was used too: %v", err)
		}
	})
	t.Run("working directory", func(t *testing.T) {
		wd := t.TempDir()
		t.Chdir(wd)
		t.Setenv(dataDirEnv, "")
		tok := newToken(t, "--user", "dave")
		if p, err := authenticate(t, filepath.Join(wd, "data"), tok); err != nil || p.UserName != "dave" {
			t.Fatalf("token in ./data: %+v, %v", p, err)
		}
	})
}

// token create --app and --capability make app tokens and grant
// capabilities as named, and nothing by default; app disable and enable
// work as user disable and enable.
func TestAppTokenCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(dataDirEnv, "")
	tests := []struct {
		name    string
		args    []string
		tier    auth.Tier
		caller  string
		probe   bool
		sandbox bool
	}{
		{name: "app", args: []string{"--app", "ci"}, tier: auth.TierApp, caller: "ci"},
		{name: "app with the probe capability", args: []string{"--app", "monitor", "--capability", "tools.net.probe"}, tier: auth.TierApp, caller: "monitor", probe: true},
		{name: "sandbox app", args: []string{"--sandbox", "--app", "trial"}, tier: auth.TierApp, caller: "trial", sandbox: true},
		{name: "app with the capability twice", args: []string{"--app", "trial", "--capability", "tools.net.probe", "--capability=tools.net.probe"}, tier: auth.TierApp, caller: "trial", probe: true},
		{name: "user", args: []string{"--user", "bob"}, tier: auth.TierUser, caller: "bob"},
		{name: "user with the probe capability", args: []string{"--user", "bob", "--capability", "tools.net.probe"}, tier: auth.TierUser, caller: "bob", probe: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := newToken(t, append(tt.args, "--data-dir", dir)...)
			p, err := authenticate(t, dir, tok)
			if err != nil {
				t.Fatal(err)
			}
			name := p.UserName
			if tt.tier == auth.TierApp {
				name = p.AppName
			}
			if p.Tier != tt.tier || name != tt.caller || p.Has(auth.CapabilityNetProbe) != tt.probe || p.Sandbox != tt.sandbox || len(p.Capabilities) > 1 {
				t.Fatalf("principal %+v", p)
			}
		})
	}
	ci := newToken(t, "--app", "ci", "--data-dir", dir)

	missing := filepath.Join(t.TempDir(), "never")
	failures := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{name: "unknown capability", args: []string{"token", "create", "--app", "x", "--capability", "tools.net.scan", "--data-dir", missing}, code: 1, stderr: `cannot grant capability "tools.net.scan": it is not one Toolhost knows (known: tools.net.probe)`},
		{name: "malformed capability", args: []string{"token", "create", "--user", "x", "--capability", "Tools.Net", "--data-dir", missing}, code: 1, stderr: `cannot grant capability "Tools.Net"`},
		{name: "empty capability", args: []string{"token", "create", "--user", "x", "--capability", "", "--data-dir", missing}, code: 1, stderr: `cannot grant capability ""`},
		{name: "user and app", args: []string{"token", "create", "--user", "x", "--app", "y", "--data-dir", missing}, code: 2, stderr: "usage"},
		{name: "sandbox with a capability", args: []string{"token", "create", "--app", "x", "--sandbox", "--capability", "tools.net.probe", "--data-dir", missing}, code: 2, stderr: "a sandbox token holds no capability"},
		{name: "sandbox user", args: []string{"token", "create", "--user", "x", "--sandbox", "--data-dir", missing}, code: 2, stderr: "--sandbox is for app tokens"},
		{name: "capability without value", args: []string{"token", "create", "--app", "x", "--capability"}, code: 2, stderr: "usage"},
		{name: "invalid app name", args: []string{"token", "create", "--app", "a b", "--data-dir", dir}, code: 1, stderr: "not a valid app name"},
		{name: "disable app", args: []string{"app", "disable", "CI", "--data-dir", dir}, code: 0},
		{name: "no token for a disabled app", args: []string{"token", "create", "--app", "ci", "--data-dir", dir}, code: 1, stderr: "app \"ci\" is disabled; enable it with `toolhost app enable ci` first"},
		{name: "disable a missing app", args: []string{"app", "disable", "nobody", "--data-dir", dir}, code: 1, stderr: `no such app "nobody"`},
		{name: "app without subcommand", args: []string{"app"}, code: 2, stderr: "usage"},
		{name: "disable app in a missing data folder", args: []string{"app", "disable", "ci", "--data-dir", missing}, code: 1, stderr: `no such app "ci": no database`},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || stdout.Len() != 0 || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("run(%q) = %d\nstdout: %q\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused command made a data folder: %v", err)
	}
	if _, err := authenticate(t, dir, ci); !errors.Is(err, auth.ErrDisabled) {
		t.Fatalf("ci's token after app disable: %v, want ErrDisabled", err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"app", "enable", "ci", "--data-dir", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("app enable = %d: %s", code, stderr.String())
	}
	if _, err := authenticate(t, dir, ci); err != nil {
		t.Fatalf("ci's token after app enable: %v", err)
	}
}

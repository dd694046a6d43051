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

	"toolhost/internal/auth"
	"toolhost/internal/store"
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

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/auth"
)

// TestUserCommands: user create makes an account and prints its first
// token, user token another, user list and user tokens show them without
// secrets, user revoke ends one token (the account's other tokens stay),
// and the refusals name what to do.
func TestUserCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(dataDirEnv, "")
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, first, stderr := cli("user", "create", "erin", "--data-dir", dir)
	if code != 0 || !tokenLine.MatchString(first) {
		t.Fatalf("user create = %d %q %s", code, first, stderr)
	}
	code, second, stderr := cli("user", "token", "erin", "--capability", auth.CapabilityNetProbe, "--data-dir", dir)
	if code != 0 || !tokenLine.MatchString(second) {
		t.Fatalf("user token = %d %q %s", code, second, stderr)
	}
	first, second = strings.TrimSpace(first), strings.TrimSpace(second)
	if p, err := authenticate(t, dir, second); err != nil || p.UserName != "erin" || !p.Has(auth.CapabilityNetProbe) {
		t.Fatalf("second token: %+v, %v", p, err)
	}

	code, list, stderr := cli("user", "list", "--data-dir", dir)
	var row struct {
		Name     string
		Disabled bool
		Tokens   int
	}
	if code != 0 || json.Unmarshal([]byte(list), &row) != nil || row.Name != "erin" || row.Tokens != 2 || row.Disabled {
		t.Fatalf("user list = %d %q %s", code, list, stderr)
	}
	code, toks, stderr := cli("user", "tokens", "erin", "--data-dir", dir)
	lines := strings.Split(strings.TrimSpace(toks), "\n")
	if code != 0 || len(lines) != 2 || strings.Contains(toks, "th_") || !strings.Contains(lines[1], auth.CapabilityNetProbe) {
		t.Fatalf("user tokens = %d %q %s", code, toks, stderr)
	}
	var tok struct{ ID int64 }
	if err := json.Unmarshal([]byte(lines[0]), &tok); err != nil || tok.ID == 0 {
		t.Fatalf("token row %q: %v", lines[0], err)
	}
	if code, out, stderr := cli("user", "revoke", "erin", "--data-dir", dir, strings.TrimSpace(itoa(tok.ID))); code != 0 || out != "" {
		t.Fatalf("user revoke = %d %q %s", code, out, stderr)
	}
	if _, err := authenticate(t, dir, first); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("first token after revoke: %v", err)
	}
	if _, err := authenticate(t, dir, second); err != nil {
		t.Fatalf("second token after revoking the first: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "never")
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"create twice", []string{"user", "create", "ERIN", "--data-dir", dir}, 1, "toolhost user token ERIN"},
		{"token for nobody", []string{"user", "token", "nobody", "--data-dir", dir}, 1, "toolhost user create nobody"},
		{"token in a missing folder", []string{"user", "token", "erin", "--data-dir", missing}, 1, "no database"},
		{"invalid name", []string{"user", "create", "a b", "--data-dir", dir}, 1, "not a valid user name"},
		{"unknown capability", []string{"user", "token", "erin", "--capability", "tools.net.scan", "--data-dir", dir}, 1, "cannot grant capability"},
		{"revoke again", []string{"user", "revoke", "erin", itoa(tok.ID), "--data-dir", dir}, 1, "has no token"},
		{"revoke a bad id", []string{"user", "revoke", "erin", "x", "--data-dir", dir}, 2, "not a token id"},
		{"revoke without id", []string{"user", "revoke", "erin", "--data-dir", dir}, 2, "usage"},
		{"tokens of nobody", []string{"user", "tokens", "nobody", "--data-dir", dir}, 1, `no such user "nobody"`},
		{"list with an argument", []string{"user", "list", "x", "--data-dir", dir}, 2, "usage"},
		{"unknown verb", []string{"user", "delete", "erin"}, 2, "usage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := cli(tt.args...)
			if code != tt.code || out != "" || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("run(%q) = %d\nstdout: %q\nstderr: %s", tt.args, code, out, stderr)
			}
		})
	}
	if code, out, _ := cli("user", "list", "--data-dir", missing); code != 0 || out != "" {
		t.Fatalf("user list of a missing folder = %d %q", code, out)
	}
	if code, out, _ := cli("user", "disable", "erin", "--data-dir", dir); code != 0 || out != "" {
		t.Fatalf("user disable = %d %q", code, out)
	}
	if code, list, _ := cli("user", "list", "--data-dir", dir); code != 0 || !strings.Contains(list, `"disabled":true`) {
		t.Fatalf("user list after disable = %d %q", code, list)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

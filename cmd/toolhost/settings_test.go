package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/cachedir"
)

// helpOf runs toolhost's help for args and returns what it printed.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("%q = %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

var helpFlag = regexp.MustCompile(`(?m)^  --([a-z-]+)`)

// Every flag of every command is a setting of the table — printed with
// its environment variable, config key and default — or an argument of
// one run; each command's settings are the ones commandSettings lists;
// every setting has an environment variable and, but --config, a config
// key, and toolhost help lists them all.
func TestSettingsTable(t *testing.T) {
	commands := []string{"serve", "run", "list", "export", "check", "token", "user", "app", "abuse", "policy", "new", "guard", "jobs"}
	seen := map[string]bool{}
	for _, cmd := range commands {
		t.Run(cmd, func(t *testing.T) {
			out := helpOf(t, cmd, "--help")
			if out != helpOf(t, "help", cmd) {
				t.Errorf("toolhost help %s differs from toolhost %s --help", cmd, cmd)
			}
			var got []string
			for _, m := range helpFlag.FindAllStringSubmatch(out, -1) {
				name := m[1]
				s, ok := lookupSetting(name)
				if !ok {
					if !slices.Contains(arguments, name) {
						t.Errorf("--%s is neither a setting nor an argument", name)
					}
					continue
				}
				got = append(got, name)
				seen[name] = true
				if !strings.Contains(out, sources(s)) {
					t.Errorf("--%s: the help lacks %q", name, sources(s))
				}
			}
			want := slices.Clone(commandSettings[cmd])
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("settings %v, commandSettings says %v", got, want)
			}
		})
	}
	all := helpOf(t, "help")
	envs := map[string]bool{}
	for _, s := range settings {
		if !seen[s.Name] {
			t.Errorf("--%s is no command's flag", s.Name)
		}
		if !strings.HasPrefix(s.Env, "TOOLHOST_") || envs[s.Env] {
			t.Errorf("--%s: environment variable %q", s.Name, s.Env)
		}
		envs[s.Env] = true
		if !strings.Contains(all, "--"+s.Name+" ") || !strings.Contains(all, sources(s)) {
			t.Errorf("toolhost help lacks --%s with %q", s.Name, sources(s))
		}
	}
	if n, err := parseBytes(mustSetting(t, "cache-max-bytes").Default); err != nil || n != cachedir.DefaultMaxBytes {
		t.Errorf("--cache-max-bytes defaults to %d (%v), cachedir.DefaultMaxBytes is %d", n, err, cachedir.DefaultMaxBytes)
	}
}

func mustSetting(t *testing.T, name string) setting {
	t.Helper()
	s, ok := lookupSetting(name)
	if !ok {
		t.Fatalf("no setting %s", name)
	}
	return s
}

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A setting's value comes from its flag, else its environment variable,
// else the config file, else its default.
func TestSettingsPrecedence(t *testing.T) {
	config := writeConfig(t, `
addr = "config:1"
drain-delay = "7s"
trusted-proxy = ["10.0.0.0/8", "192.168.0.0/16"]
cache-max-bytes = 1024
spare-workers = 5
tools-dir = "from-config"   # a key of another command's setting is no error
`)
	type values struct {
		addr    string
		drain   time.Duration
		trusted string
		max     int64
		spares  int
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want values
	}{
		{name: "defaults", want: values{addr: ":8080", drain: 2 * time.Second, max: 1 << 30, spares: 2}},
		{name: "config file", args: []string{"--config", config},
			want: values{addr: "config:1", drain: 7 * time.Second, trusted: "10.0.0.0/8,192.168.0.0/16", max: 1024, spares: 5}},
		{name: "config file from the environment", env: map[string]string{"TOOLHOST_CONFIG": config},
			want: values{addr: "config:1", drain: 7 * time.Second, trusted: "10.0.0.0/8,192.168.0.0/16", max: 1024, spares: 5}},
		{name: "environment over config", args: []string{"--config", config},
			env:  map[string]string{"TOOLHOST_ADDR": "env:2", "TOOLHOST_TRUSTED_PROXY": "127.0.0.1/32,::1/128", "TOOLHOST_CACHE_MAX_BYTES": "2MiB"},
			want: values{addr: "env:2", drain: 7 * time.Second, trusted: "127.0.0.1/32,::1/128", max: 2 << 20, spares: 5}},
		{name: "flag over environment", args: []string{"--config", config, "--addr", "flag:3", "--trusted-proxy", "172.16.0.0/12", "--cache-max-bytes", "0", "--spare-workers", "0"},
			env:  map[string]string{"TOOLHOST_ADDR": "env:2", "TOOLHOST_TRUSTED_PROXY": "127.0.0.1/32", "TOOLHOST_SPARE_WORKERS": "9"},
			want: values{addr: "flag:3", drain: 7 * time.Second, trusted: "172.16.0.0/12", max: 0, spares: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range settings {
				t.Setenv(s.Env, "")
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o := newOptions(fs)
			addr := o.String("addr")
			drain := o.Duration("drain-delay")
			trusted := o.Prefixes("trusted-proxy")
			max := o.Bytes("cache-max-bytes")
			spares := o.Int("spare-workers")
			if _, err := o.parse(tt.args, false); err != nil {
				t.Fatal(err)
			}
			got := values{addr: *addr, drain: *drain, trusted: trusted.String(), max: *max, spares: *spares}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A config file that is not TOML, a key that is no setting, a value a
// setting does not take, an environment variable that does not parse: a
// usage error (exit 2) naming the file and the key or the variable.
func TestSettingsRefused(t *testing.T) {
	tests := []struct {
		name   string
		config string
		env    map[string]string
		stderr string
	}{
		{name: "unknown key", config: "cache-dir = \"x\"\ncache-max = 5\n", stderr: `unknown key "cache-max"`},
		{name: "a table", config: "[serve]\naddr = \":1\"\n", stderr: `unknown key "serve"`},
		{name: "config is no key", config: "config = \"other.toml\"\n", stderr: `unknown key "config"`},
		{name: "not TOML", config: "cache-dir = \n", stderr: "toolhost.toml:1:"},
		{name: "bad size", config: "cache-max-bytes = \"lots\"\n", stderr: `key "cache-max-bytes": "lots" is not a size`},
		{name: "an array for one value", config: "probe-allow = [\"10.0.0.1\", \"10.0.0.2\"]\n", stderr: `key "probe-allow": takes one value`},
		{name: "bad environment", env: map[string]string{"TOOLHOST_CACHE_MAX_BYTES": "-1"}, stderr: "$TOOLHOST_CACHE_MAX_BYTES: \"-1\" is not a size"},
		{name: "missing file", env: map[string]string{"TOOLHOST_CONFIG": "/nonexistent/toolhost.toml"}, stderr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"list", "--tools-dir", t.TempDir(), "--cache-dir", ""}
			if tt.config != "" {
				args = append(args, "--config", writeConfig(t, tt.config))
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) = %d, stderr %q; want 2 with %q", args, code, stderr.String(), tt.stderr)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0"}, {in: "1073741824", want: 1 << 30}, {in: "1GiB", want: 1 << 30}, {in: "500MB", want: 500e6},
		{in: "1.5 GiB", want: 3 << 29}, {in: "64K", want: 64 << 10}, {in: "10B", want: 10},
		{in: "", bad: true}, {in: "GiB", bad: true}, {in: "-5", bad: true}, {in: "1 PB", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseBytes(tt.in)
			if (err != nil) != tt.bad || got != tt.want {
				t.Errorf("parseBytes(%q) = %d, %v", tt.in, got, err)
			}
		})
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this binary as the toolhost command: with
// TOOLHOST_TEST_AS_MAIN set, the test binary is toolhost; started as
// "worker" (by the supervisor of a command under test, whose worker is
// /proc/self/exe), it is toolhost's worker. A test binary is otherwise
// only ever started with -test flags.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLHOST_TEST_AS_MAIN") == "1" || len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serve runs `toolhost serve` as a child process: it answers /readyz, then
// SIGTERM drains it and it exits 0, having said so in its log.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--tools-dir", t.TempDir(),
		"--data-dir", t.TempDir(), "--cache-dir", t.TempDir(), "--log-format", "json")
	cmd.Env = append(os.Environ(), "TOOLHOST_TEST_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		logs <- b.String()
	}()
	ready := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			ready = true
			break
		}
	}
	if !ready {
		cmd.Process.Kill()
		t.Fatalf("the server never became ready; log:\n%s", <-logs)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	log := <-logs
	if err != nil {
		t.Fatalf("serve exited with %v; log:\n%s", err, log)
	}
	for _, want := range []string{`"msg":"serving"`, `"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// export writes the tools manifest and the OpenAPI document.
func TestExport(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := run([]string{"export", "--out", out, "--tools-dir", t.TempDir(), "--cache-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("export: %d %s", code, stderr.String())
	}
	var list struct {
		Count int `json:"count"`
		Tools []struct {
			ID string `json:"id"`
		} `json:"tools"`
	}
	var api struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	for name, v := range map[string]any{"tools.json": &list, "openapi.json": &api} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// An empty tools folder: the native packages are the tools.
	if list.Count != len(list.Tools) || list.Count < 3 || api.OpenAPI != "3.1.0" || api.Paths["/api/v1/tools/pac_allocator/run"] == nil {
		t.Errorf("manifest %+v, openapi %s with %d paths", list, api.OpenAPI, len(api.Paths))
	}
}

// The guard's flags are checked before anything opens.
func TestServeGuardFlags(t *testing.T) {
	quota := filepath.Join(t.TempDir(), "quota.json")
	if err := os.WriteFile(quota, []byte(`{"classes": {"nope": {}}, "extra": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{name: "mode", args: []string{"--guard", "lenient"}},
		{name: "trusted proxy", args: []string{"--trusted-proxy", "not-a-cidr"}},
		{name: "quota table", args: []string{"--quota-table", quota}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--data-dir", t.TempDir(), "--addr", "127.0.0.1:0"}, tt.args...)
			if err := runServe(args, io.Discard); !errors.Is(err, errUsage) {
				t.Errorf("runServe(%q) = %v, want a usage error", tt.args, err)
			}
		})
	}
}

// serve refuses a --log-level (or $TOOLHOST_LOG_LEVEL) it does not know
// before it opens anything.
func TestServeLogLevelRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  string
	}{{"flag", []string{"--log-level", "verbose"}, ""}, {"environment", nil, "trace"}} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("TOOLHOST_LOG_LEVEL", c.env)
			}
			args := append([]string{"serve", "--tools-dir", t.TempDir(), "--data-dir", t.TempDir(), "--cache-dir", ""}, c.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--log-level is debug, info, warn or error") {
				t.Fatalf("run(%q) = %d, stderr %q", args, code, stderr.String())
			}
		})
	}
}

// --interpreter-memory is the bound of the interpreter tiers on a cold
// start; 0 turns the tiered start off. Either way serve publishes the
// modules as they load, in the background.
func TestServeInterpreterMemory(t *testing.T) {
	if l := loading(0); !l.Untiered || !l.Background {
		t.Errorf("loading(0) = %+v, want untiered, in the background", l)
	}
	if l := loading(64 << 20); l.Untiered || !l.Background || l.InterpretedBytes != 64<<20 {
		t.Errorf("loading(64 MiB) = %+v", l)
	}
	if err := runServe([]string{"--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--interpreter-memory", "-1"}, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("--interpreter-memory -1: %v, want a usage error", err)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit"
)

// `serve` listens while a module's load is stuck in its image phase, and
// SIGTERM ends the process within --shutdown-timeout even though that load
// and a run looping in host calls (hard deadline 20 s) are still going.
func TestServeShutdownTimeoutHolds(t *testing.T) {
	tools := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(tools, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// _initialize loops in host calls: the image phase runs to host's
	// own 10 s bound.
	write("stuck.wasm", testkit.WAT(t, "init_host_loop"))
	write("spin.tool.json", spinDeclaration(t))
	write("spin.wasm", testkit.WAT(t, "host_alloc_loop"))

	const timeout = 2 * time.Second
	const margin = 3 * time.Second
	const imageBound = 10 * time.Second
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--tools-dir", tools,
		"--data-dir", t.TempDir(), "--cache-dir", t.TempDir(), "--log-format", "json",
		"--shutdown-timeout", timeout.String())
	cmd.Env = append(os.Environ(), "TOOLHOST_TEST_AS_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	logs := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		logs <- b.String()
		exited <- cmd.Wait()
	}()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	get := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for deadline := time.Now().Add(60 * time.Second); get("/api/v1/tools/spin") != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("spin was never listed; log:\n%s", <-logs)
		}
	}
	listening := time.Since(began)
	if listening >= imageBound {
		t.Errorf("spin was listed only after %v, when the stuck load (host's %v image bound) had ended", listening, imageBound)
	}
	// The run loops until the shutdown cancels it.
	go func() {
		resp, err := http.Post("http://"+addr+"/api/v1/tools/spin/run", "application/json",
			strings.NewReader(`{"input":{"operation":"count","text":"x"}}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var log string
	select {
	case log = <-logs:
		err = <-exited
	case <-time.After(timeout + margin):
		cmd.Process.Kill()
		t.Fatalf("serve still running %v after SIGTERM with --shutdown-timeout %v; log:\n%s", timeout+margin, timeout, <-logs)
	}
	took := time.Since(signalled)
	t.Logf("listed spin after %v; exited %v after SIGTERM: %v", listening.Round(time.Millisecond), took.Round(time.Millisecond), err)
	if err != nil {
		t.Errorf("serve exited with %v; log:\n%s", err, log)
	}
	if strings.Contains(log, `"file":"stuck.wasm"`) {
		t.Errorf("the stuck load ended before the shutdown; the test proves nothing; log:\n%s", log)
	}
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// spinDeclaration is a sidecar declaring the tool spin: one operation,
// "count", calling the module's compute export with a 20 s hard deadline.
func spinDeclaration(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", "vowels", "vowels.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decl map[string]any
	if err := json.Unmarshal(b, &decl); err != nil {
		t.Fatal(err)
	}
	s := decl["services"].([]any)[0].(map[string]any)
	s["tool_code"] = "spin"
	s["ui"].(map[string]any)["component_key"] = "spin"
	s["documentation"].(map[string]any)["path"] = "tools/spin"
	s["operations"] = []any{map[string]any{
		"operation": "count", "deterministic": true, "export": "compute",
		"engine_timeout_ms": 18_000, "soft_timeout_ms": 19_000, "hard_timeout_ms": 20_000,
		"request_timeout_ms": 40_000, "client_timeout_ms": 45_000, "memory_limit_bytes": 64 << 20,
	}}
	out, err := json.Marshal(decl)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

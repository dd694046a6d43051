package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

const pingRun = `{"input":{"operation":"ping"}}`

// Listen first: a server over a folder holding a module whose load takes
// its whole phase deadline (its _initialize loops) is composed within its
// load wait, not the module's deadline; hash and ping answer while the
// hostile load runs on, and the hostile module is listed as refused once
// its deadline has passed.
func TestListensWhileAHostileModuleLoads(t *testing.T) {
	const imageDeadline = 8 * time.Second
	const wait = time.Second
	began := time.Now()
	r := startConfigured(t, map[string][]byte{
		"codec.wasm": module(t, "plugins-src/codec"),
		"ping.wasm":  testkit.WAT(t, "ping"),
		"loop.wasm":  testkit.WAT(t, "image_loop"),
	}, false, func(c *server.Config) {
		// The server's own load wait, and room for every load at once
		// whatever GOMAXPROCS is.
		c.Loading = server.LoadingConfig{Wait: wait, Image: imageDeadline, MaxLoads: 4}
	})
	composed := time.Since(began)
	t.Logf("composed and listening after %v", composed.Round(time.Millisecond))
	if composed >= imageDeadline {
		t.Errorf("New took %v, as long as the hostile module's %v image deadline (its load wait is %v)", composed, imageDeadline, wait)
	}
	for _, tool := range []struct{ code, body string }{{"hash", hashRun}, {"ping", pingRun}} {
		var code string
		var err error
		eventually(t, tool.code+" answers", func() bool {
			code, err = r.runTool(tool.code, r.token, tool.body)
			return err == nil && code == ""
		})
		t.Logf("%s answered after %v", tool.code, time.Since(began).Round(time.Millisecond))
	}
	d := r.liveDiagnostics()
	if _, ok := d.failure("loop.wasm"); ok && time.Since(began) < imageDeadline/2 {
		t.Errorf("the hostile module was refused after %v, before its %v deadline", time.Since(began), imageDeadline)
	}
	c := hostileCase{refused: []string{"load_timeout/image"}}
	r.awaitRefused(t, c, "loop.wasm", began, imageDeadline)
}

// Shutdown returns within its context while a load is stuck in a phase
// (an _initialize looping in host calls, with a ten-minute image
// deadline) and an item loops in host calls with a hard deadline far past
// it; the item is cancelled and answered, and the goroutines end (goleak
// checks the package).
func TestShutdownWithinItsTimeout(t *testing.T) {
	tools := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(tools, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Its _initialize loops in host calls: the image phase runs to host's
	// own 10 s bound, the loader's deadline being ten minutes.
	write("stuck.wasm", testkit.WAT(t, "init_host_loop"))
	// The loop's hard deadline is 20 s; its request deadline must cover
	// it with the queue, cleanup and reserves.
	write("spin.tool.json", sidecarDeclaration(t, "spin", map[string]any{
		"engine_timeout_ms": 18_000, "soft_timeout_ms": 19_000, "hard_timeout_ms": 20_000,
		"request_timeout_ms": 40_000, "client_timeout_ms": 45_000,
	}))
	write("spin.wasm", testkit.WAT(t, "host_alloc_loop"))
	srv, err := server.New(context.Background(), server.Config{
		ToolsDir: tools, DataDir: t.TempDir(), CacheDir: testkit.CacheDir(),
		Settle:  50 * time.Millisecond,
		Loading: server.LoadingConfig{Wait: 300 * time.Millisecond, Image: 10 * time.Minute, MaxLoads: 4},
		Logger:  slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	token, err := srv.Accounts().CreateToken(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, srv: srv, url: "http://" + l.Addr().String(), tools: tools, token: token,
		client: &http.Client{Timeout: time.Minute}}
	defer r.client.CloseIdleConnections()
	eventually(t, "spin is listed", func() bool { _, ok := r.liveDiagnostics().service("spin"); return ok })
	if _, ok := r.liveDiagnostics().failure("stuck.wasm"); ok {
		t.Fatal("the stuck module was refused already")
	}
	ran := make(chan error, 1)
	go func() {
		code, err := r.runTool("spin", token, `{"input":{"operation":"count","text":"x"}}`)
		t.Logf("the looping run ended %q, %v", code, err)
		ran <- err
	}()
	eventually(t, "the loop holds a lane", func() bool { return r.pool().Active == 1 })

	const timeout = 2 * time.Second
	const margin = 1500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	err = srv.Shutdown(ctx)
	took := time.Since(began)
	t.Logf("Shutdown returned after %v: %v", took.Round(time.Millisecond), err)
	if took > timeout+margin {
		t.Errorf("Shutdown took %v with a %v context", took, timeout)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("the looping run: %v, want an answer", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the looping run's request never ended")
	}
	// A second Shutdown waits for the first one's teardown, which the
	// first left told to stop.
	second := make(chan error, 1)
	go func() { second <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-second:
		t.Logf("a second Shutdown: %v", err)
	case <-time.After(10 * time.Second):
		t.Error("a second Shutdown never returned")
	}
}

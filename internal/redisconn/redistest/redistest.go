// Package redistest gives tests a real Redis: the shared one named by
// TOOLHOST_TEST_REDIS (each test under a key prefix of its own, so tests
// run in parallel), or a redis-server process of the test's own on a
// random loopback port, which the test can stop and start again to see
// an outage and the recovery. Without Redis a test skips with a message,
// and fails when CI=true.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/redisconn"
)

// Env names the shared test Redis, such as redis://127.0.0.1:6379/0.
const Env = "TOOLHOST_TEST_REDIS"

// Missing skips the test with why, or fails it under CI=true.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required under CI=true)", why)
	}
	t.Skip(why)
}

// URL returns TOOLHOST_TEST_REDIS, or skips (fails under CI) without it.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		Missing(t, Env+" is not set: no Redis to test against")
	}
	return u
}

// Prefix returns a key prefix no other test uses.
func Prefix(t testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	return "test:" + hex.EncodeToString(b[:]) + ":"
}

// Client returns a client of url (as serve opens one), closed when the
// test ends; it fails the test when Redis does not answer.
func Client(t testing.TB, url string) *redis.Client {
	t.Helper()
	rdb, err := redisconn.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	if err := redisconn.Ping(context.Background(), rdb); err != nil {
		t.Fatalf("test Redis %s: %v", url, err)
	}
	return rdb
}

// Shared returns a client of the shared test Redis and a key prefix of
// the test's own.
func Shared(t testing.TB) (*redis.Client, string) {
	t.Helper()
	return Client(t, URL(t)), Prefix(t)
}

// Server is a redis-server process of the test's own, on a loopback port
// that stays the same across Stop and Start.
type Server struct {
	t    testing.TB
	Port int
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// Start starts redis-server (from PATH; skips, or fails under CI, when
// there is none) on a free loopback port and waits until it answers. The
// process is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		Missing(t, "redis-server is not on PATH (apt-get install redis-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{t: t, Port: port}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Start starts the process again after Stop (on the same port) and waits
// until it answers; it does nothing while it runs.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.t.TempDir())
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.cmd = cmd
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on port %d does not answer: %v", s.Port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the process (SIGKILL: an outage, not a shutdown) and waits
// for it; it does nothing when it is stopped.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

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
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit"
)

// Env names the shared test Redis, such as redis://127.0.0.1:6379/0.
const Env = "TOOLHOST_TEST_REDIS"

// URL returns TOOLHOST_TEST_REDIS, or skips (fails under CI) without it.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		testkit.Missing(t, Env+" is not set: no Redis to test against")
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
func Client(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	rdb, err := redisconn.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A test may have closed it already.
		if err := rdb.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
			t.Errorf("closing the client of %s: %v", url, err)
		}
	})
	if err := redisconn.Ping(context.Background(), rdb); err != nil {
		t.Fatalf("test Redis %s: %v", url, err)
	}
	return rdb
}

// Shared returns a client of the shared test Redis and a key prefix of
// the test's own.
func Shared(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	return Client(t, URL(t)), Prefix(t)
}

// Server is a redis-server process of the test's own, on a loopback port
// that stays the same across Stop and Start.
type Server struct {
	t    testing.TB
	Port int
	args []string // further redis-server arguments
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// Start starts redis-server (from PATH; skips, or fails under CI, when
// there is none) on a free loopback port and waits until it answers. The
// process is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testkit.Missing(t, "redis-server is not on PATH (apt-get install redis-server)")
	}
	s := &Server{t: t, Port: freePort(t)}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // a listener that served nothing: nothing to lose
	return l.Addr().(*net.TCPAddr).Port
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
	args := append([]string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.t.TempDir()}, s.args...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.cmd = cmd
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close() //nolint:errcheck // a probing client done with: nothing to lose
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
	kill(s.t, s.cmd)
	s.cmd = nil
}

// kill kills cmd's process and waits for it; Wait's error is the kill's
// signal.
func kill(t testing.TB, cmd *exec.Cmd) {
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("killing %s: %v", cmd.Path, err)
	}
	cmd.Wait() //nolint:errcheck // see above
}

// MasterName is the name the Sentinel of StartSentinel knows its master
// by.
const MasterName = "toolhost"

// Sentinel is a redis-server master and one redis-sentinel process
// monitoring it, both of the test's own, on loopback ports.
type Sentinel struct {
	// Master is the monitored redis-server.
	Master *Server
	// Port is the sentinel's port.
	Port int
	cmd  *exec.Cmd
}

// StartSentinel starts a master (as Start does) and one redis-sentinel
// (from PATH; skips, or fails under CI, when there is none) monitoring it
// under MasterName, with a quorum of one and its sentinel.conf in the
// test's temporary folder, and waits until the sentinel names the
// master. Both are stopped when the test ends.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		testkit.Missing(t, "redis-sentinel is not on PATH (apt-get install redis-sentinel)")
	}
	s := &Sentinel{Master: Start(t), Port: freePort(t)}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	// The sentinel rewrites its configuration file: it must be writable.
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %s 5000\n", s.Port, dir, MasterName, s.Master.Port, MasterName)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command("redis-sentinel", conf)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting redis-sentinel: %v", err)
	}
	t.Cleanup(func() { kill(t, s.cmd) })
	sc := redis.NewSentinelClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), DisableIdentity: true, MaxRetries: -1})
	defer sc.Close() //nolint:errcheck // a probing client done with: nothing to lose
	want := []string{"127.0.0.1", strconv.Itoa(s.Master.Port)}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		addr, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		cancel()
		if err == nil && slices.Equal(addr, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-sentinel on port %d does not name its master: %v %v", s.Port, addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the sentinel's redis-sentinel:// URL of the master
// (redisconn.SchemeSentinel).
func (s *Sentinel) URL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d/0?master_name=%s", redisconn.SchemeSentinel, s.Port, MasterName)
}

// StartCluster starts a Redis Cluster of one node (a redis-server with
// cluster mode on, as Start does, holding every hash slot) and waits until
// the cluster is up: about 2 s, the delay Redis gives a master before its
// cluster accepts writes. It is stopped when the test ends.
func StartCluster(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testkit.Missing(t, "redis-server is not on PATH (apt-get install redis-server)")
	}
	s := &Server{t: t, Port: freePort(t),
		args: []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf")}}
	s.Start()
	t.Cleanup(s.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close() //nolint:errcheck // a setup client done with: nothing to lose
	ctx := context.Background()
	if err := rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatalf("cluster of port %d: adding its slots: %v", s.Port, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster of port %d is not up: %q %v", s.Port, info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ClusterURL is the server's redis-cluster:// URL (redisconn.SchemeCluster).
func (s *Server) ClusterURL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d", redisconn.SchemeCluster, s.Port)
}

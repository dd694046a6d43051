package storetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolhost/toolhost/internal/testkit"
)

// Server is a PostgreSQL cluster of the test's own, in its temporary
// folder, on a loopback port that stays the same across Stop and Start:
// a test that stops its database (an outage) disturbs no other test.
// It runs the binaries of Debian's postgresql package
// (/usr/lib/postgresql/N/bin); as root, under the postgres account, as
// initdb requires.
type Server struct {
	t    testing.TB
	Port int
	bin  string
	dir  string
	run  []string // the prefix that runs a binary as the cluster's owner
	mu   sync.Mutex
	up   bool
}

// StartServer makes and starts a cluster of the test's own and returns
// it, stopped when the test ends. It skips (fails under CI=true) without
// the PostgreSQL server binaries.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		testkit.Missing(t, "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin, apt-get install postgresql)")
	}
	sort.Slice(bins, func(i, j int) bool { return version(bins[i]) < version(bins[j]) })
	s := &Server{t: t, bin: filepath.Dir(bins[len(bins)-1]), dir: t.TempDir()}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running PostgreSQL as root needs the postgres account: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// The temporary folder's parents must let the account in.
		for d := s.dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
					t.Fatalf("letting the postgres account through %s: %v", d, err)
				}
			}
		}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.run = []string{"runuser", "-u", "postgres", "--"}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close() //nolint:errcheck // a listener that served nothing: nothing to lose
	s.exec("initdb", "-D", filepath.Join(s.dir, "data"), "-U", "postgres", "--auth=trust", "--no-sync")
	s.Start()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.up {
			s.ctl("stop", "-m", "immediate")
		}
	})
	return s
}

// version is the major version in a binary's path, for sorting.
func version(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

func (s *Server) exec(name string, args ...string) {
	s.t.Helper()
	argv := append(append(append([]string{}, s.run...), filepath.Join(s.bin, name)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func (s *Server) ctl(args ...string) {
	s.t.Helper()
	s.exec("pg_ctl", append([]string{"-D", filepath.Join(s.dir, "data"), "-w", "-l", filepath.Join(s.dir, "log")}, args...)...)
}

// URL is a postgres:// URL of the cluster's database as its superuser.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
}

// Start starts the cluster (again, after Stop) and waits until it takes
// connections; it does nothing while it runs.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		return
	}
	s.ctl("start", "-o", fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=300", s.Port, s.dir))
	s.up = true
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL())
		if err == nil {
			conn.Close(ctx) //nolint:errcheck // a probing session done with: nothing to lose
			cancel()
			return
		}
		cancel()
		if time.Now().After(deadline) {
			s.t.Fatalf("PostgreSQL on port %d does not take connections: %v", s.Port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the cluster at once (immediate mode: an outage, not a
// shutdown; the connections of its clients break); it does nothing when
// it is stopped.
func (s *Server) Stop() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return
	}
	s.ctl("stop", "-m", "immediate")
	s.up = false
}

package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// pgProxy is a TCP proxy on loopback in front of the test's PostgreSQL
// server, which a test stops to make the store unreachable for one
// server alone, and starts again on the same address.
type pgProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]struct{}
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	p := &pgProxy{t: t, target: target, addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}}
	p.start()
	t.Cleanup(p.stop)
	return p
}

func (p *pgProxy) start() {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *pgProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

// stop closes the listener and every connection through it.
func (p *pgProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// through is dsn with its host replaced by the proxy's address.
func (p *pgProxy) through(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// TestReplicasOnPostgres: two servers on one PostgreSQL store share the
// accounts and the jobs: a token made on A authenticates on B, a job
// submitted to A is read from B and ends; /readyz of a server whose store
// is unreachable is 503 naming the store, and ready again when it comes
// back, while the other server stays ready.
func TestReplicasOnPostgres(t *testing.T) {
	pg := storetest.Postgres(t)
	u, err := url.Parse(pg.Target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPGProxy(t, u.Host)
	replica := func(dsn string) *rig {
		return startConfigured(t, nil, true, func(c *server.Config) {
			c.Store = dsn
			c.Natives = testNatives()
			c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		})
	}
	a := replica(proxy.through(t, pg.Target))
	b := replica(pg.Target)

	// A's token, made by startConfigured on A's accounts, is B's too; so
	// is the job.
	id := a.submitSleeper(a.token, 50)
	if d := b.final(id); d.State != "succeeded" {
		t.Fatalf("the job read from B: %+v", d)
	}

	readyz := func(r *rig) (int, string) {
		resp, err := r.client.Get(r.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := readyz(a); code != http.StatusOK {
		t.Fatalf("A's /readyz: %d %s", code, body)
	}
	proxy.stop()
	eventually(t, "A's /readyz turns 503 with its store away", func() bool {
		code, body := readyz(a)
		var doc struct {
			Status string                     `json:"status"`
			Checks map[string]json.RawMessage `json:"checks"`
		}
		_ = json.Unmarshal([]byte(body), &doc)
		return code == http.StatusServiceUnavailable && doc.Status == "unavailable" && doc.Checks["store"] != nil
	})
	if code, body := readyz(b); code != http.StatusOK {
		t.Fatalf("B's /readyz while A's store is away: %d %s", code, body)
	}
	// A request needing the store is refused, never a 500.
	status, _, body := a.do("GET", "/api/v1/jobs/"+id, a.token, nil)
	if status >= 500 && status != http.StatusServiceUnavailable {
		t.Fatalf("a job read with the store away: %d %s", status, body)
	}
	proxy.start()
	eventually(t, "A is ready again", func() bool { code, _ := readyz(a); return code == http.StatusOK })
	// A pooled connection the cut broke fails its next statement: that
	// request is refused 503 tools.store.busy (retryable, nothing
	// changed) and the connection dropped; a retry reads the job.
	eventually(t, "A reads the job again", func() bool {
		status, _, body := a.do("GET", "/api/v1/jobs/"+id, a.token, nil)
		switch {
		case status == http.StatusOK:
			var d jobDoc
			if err := json.Unmarshal(body, &d); err != nil || d.State != "succeeded" {
				t.Fatalf("the job read from A again: %s", body)
			}
			return true
		case status == http.StatusServiceUnavailable && strings.Contains(string(body), "tools.store.busy"):
			return false
		default:
			t.Fatalf("a job read from A after its store came back: %d %s", status, body)
			return false
		}
	})
}

// TestStoreRefusals: a --store that is not a PostgreSQL URL, or names a
// server that does not answer, stops New with a clear error, without the
// password.
func TestStoreRefusals(t *testing.T) {
	for _, dsn := range []string{
		"mysql://u:pw@127.0.0.1/db",
		"postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		srv, err := server.New(ctx, server.Config{DataDir: t.TempDir(), Store: dsn})
		cancel()
		if err == nil {
			srv.Shutdown(context.Background())
			t.Fatalf("%s: New succeeded", dsn)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("%s: the error shows the password: %v", dsn, err)
		}
		t.Logf("%s: %v", dsn, err)
	}
}

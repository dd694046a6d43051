package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// bounds are the fields Open sets on every kind of client.
type bounds struct {
	dial, read, write, pool time.Duration
	retries, dialerRetries  int
	ctxTimeout, noIdentity  bool
}

// defaults are the bounds of a URL that sets none.
var defaults = bounds{redisconn.DialTimeout, redisconn.IOTimeout, redisconn.IOTimeout, redisconn.IOTimeout,
	redisconn.MaxRetries, 1, true, true}

// TestOpen: each scheme gives its kind of client (one node, a Sentinel's
// master, a Cluster) with the same bounds, a query's own bound kept; a
// URL go-redis does not take, or a scheme of none of the kinds, is
// ErrURL. Open connects to nothing.
func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		kind      string // "node", "sentinel", "cluster"
		addrs     []string
		db        int
		want      bounds
	}{
		{"node", "redis://127.0.0.1:6390/2", "node", []string{"127.0.0.1:6390"}, 2, defaults},
		{"node with TLS and a read timeout", "rediss://u:p@h.example:6390/0?read_timeout=3s", "node", []string{"h.example:6390"}, 0,
			bounds{time.Second, 3 * time.Second, time.Second, time.Second, 1, 1, true, true}},
		{"unix socket", "unix:///run/redis.sock?db=3", "node", []string{"/run/redis.sock"}, 3, defaults},
		{"sentinel", "redis-sentinel://127.0.0.1:26379/1?master_name=m&addr=127.0.0.2:26379", "sentinel",
			[]string{"127.0.0.1:26379", "127.0.0.2:26379"}, 1, defaults},
		{"sentinel with TLS and retries", "rediss-sentinel://s.example:26379?master_name=m&max_retries=3&password=x", "sentinel",
			[]string{"s.example:26379"}, 0, bounds{time.Second, time.Second, time.Second, time.Second, 3, 1, true, true}},
		{"cluster", "redis-cluster://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", "cluster",
			[]string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}, 0, defaults},
		{"cluster in capitals", "REDIS-CLUSTER://127.0.0.1:7000", "cluster", []string{"127.0.0.1:7000"}, 0, defaults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, err := redisconn.Open(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			var got bounds
			var addrs []string
			db := 0
			switch c := rdb.(type) {
			case *redis.Client:
				o := c.Options()
				got = bounds{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled, o.DisableIdentity}
				db = o.DB
				if o.Addr == "FailoverClient" { // go-redis's mark of a Sentinel's client
					if tc.kind != "sentinel" {
						t.Fatalf("a Sentinel's client for %s", tc.url)
					}
					addrs = tc.addrs // the sentinels' addresses are not exported
				} else {
					if tc.kind != "node" {
						t.Fatalf("a one-node client for %s", tc.url)
					}
					addrs = []string{o.Addr}
				}
			case *redis.ClusterClient:
				if tc.kind != "cluster" {
					t.Fatalf("a Cluster client for %s", tc.url)
				}
				o := c.Options()
				got = bounds{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled, o.DisableIdentity}
				addrs = o.Addrs
			default:
				t.Fatalf("client %T", rdb)
			}
			if got != tc.want || db != tc.db || !slices.Equal(addrs, tc.addrs) {
				t.Fatalf("bounds %+v db %d addrs %v; want %+v db %d addrs %v", got, db, addrs, tc.want, tc.db, tc.addrs)
			}
		})
	}
	for _, bad := range []string{
		"127.0.0.1:6379",
		"http://127.0.0.1:6379",
		"redis://127.0.0.1:6379/x",
		"redis-sentinel://127.0.0.1:26379/0",              // no master_name
		"redis-sentinel://127.0.0.1:26379/0?master=m",     // not an option
		"redis-cluster://127.0.0.1:7000?addr=nonsense",    // an address without a port
		"redis-cluster://127.0.0.1:7000?unknown_option=1", // not an option
	} {
		if rdb, err := redisconn.Open(bad); !errors.Is(err, redisconn.ErrURL) {
			if rdb != nil {
				rdb.Close()
			}
			t.Errorf("%s: %v, want ErrURL", bad, err)
		}
	}
}

// TestSentinelAndCluster opens a redis-sentinel:// URL (a master and a
// redis-sentinel of the test's own) and a redis-cluster:// URL (a cluster
// of one node of the test's own) and does the replicas' work through each
// — a quota take, a job's slot leased, renewed and released, the day's
// abuse salt — which lands on the Redis behind it.
func TestSentinelAndCluster(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (url string, behind *redistest.Server)
	}{
		{"sentinel", func(t *testing.T) (string, *redistest.Server) {
			s := redistest.StartSentinel(t)
			return s.URL(), s.Master
		}},
		{"cluster", func(t *testing.T) (string, *redistest.Server) {
			s := redistest.StartCluster(t)
			return s.ClusterURL(), s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a cluster is up 2 s after its start (Redis's own delay)
			url, behind := tc.start(t)
			sharedWork(t, redistest.Client(t, url), behind)
		})
	}
}

// sharedWork does a replica's work through rdb and checks that it landed
// on the Redis behind it.
func sharedWork(t *testing.T, rdb redis.UniversalClient, behind *redistest.Server) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)

	lim := guard.NewRedisLimiter(rdb, prefix)
	tk, err := lim.Take(ctx, "q", guard.Allowance{Burst: 3, PerMinute: 60}, 2, time.Now())
	if err != nil || !tk.OK || tk.Remaining != 1 {
		t.Fatalf("take: %+v %v", tk, err)
	}

	sems := guard.NewRedisSemaphores(rdb, prefix, 0)
	defer sems.Close()
	if ok, err := sems.AcquireLease(ctx, "slots", "job-1", 1, time.Minute); !ok || err != nil {
		t.Fatalf("acquiring: %v %v", ok, err)
	}
	if ok, err := sems.AcquireLease(ctx, "slots", "job-2", 1, time.Minute); ok || err != nil {
		t.Fatalf("a second slot of one: %v %v", ok, err)
	}
	if ok, err := sems.RenewLease(ctx, "slots", "job-1", 2*time.Minute); !ok || err != nil {
		t.Fatalf("renewing: %v %v", ok, err)
	}
	if hs, err := sems.Holders(ctx, "slots"); err != nil || len(hs) != 1 || hs[0].ID != "job-1" {
		t.Fatalf("holders: %+v %v", hs, err)
	}
	if err := sems.ReleaseLease(ctx, "slots", "job-1"); err != nil {
		t.Fatal(err)
	}
	if n, err := sems.Held(ctx, "slots"); n != 0 || err != nil {
		t.Fatalf("held after release: %d %v", n, err)
	}

	salts := abuse.NewRedisSalts(rdb, prefix)
	now := time.Now().UTC()
	first, err := salts.DaySalt(ctx, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := salts.DaySalt(ctx, now, nil); err != nil || again != first {
		t.Fatalf("the day's salt changed: %v", err)
	}

	direct := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", behind.Port), DisableIdentity: true})
	defer direct.Close()
	for _, key := range []string{prefix + "q", prefix + "abuse:salt:" + now.Format(time.DateOnly)} {
		// One key a command: a cluster's keys of two hash slots are not
		// asked together.
		if n, err := direct.Exists(ctx, key).Result(); n != 1 || err != nil {
			t.Fatalf("%q is not on the Redis behind the URL: %v", key, err)
		}
	}
}

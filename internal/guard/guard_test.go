package guard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is an injected clock tests advance by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newGuard is New for a test; under TestAgainstRedis (sharedStore set) a
// guard without a limiter of its own gets a RedisLimiter and
// RedisSemaphores under a key prefix of its own, so that every test here
// also runs against the shared implementation.
func newGuard(t *testing.T, cfg Config) *Guard {
	t.Helper()
	if sharedStore != nil && cfg.Limiter == nil && cfg.Semaphores == nil {
		cfg.Limiter, cfg.Semaphores = sharedStore(t)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// smallTable has one class with distinct allowances per column.
func smallTable() Table {
	return Table{DefaultClass: "work", Classes: map[string]Class{
		"work": {
			Anonymous: Allowance{Burst: 2, PerMinute: 60},
			Session:   Allowance{Burst: 4, PerMinute: 60},
			User:      Allowance{Burst: 6, PerMinute: 60},
			App:       Allowance{Burst: 8, PerMinute: 60},
			Sandbox:   Allowance{Burst: 1, PerMinute: 60},
		},
	}}
}

func anon(ip string) Caller {
	a := netip.MustParseAddr(ip)
	return Caller{Tier: Anonymous, Key: "ip:" + AddrKey(a), IP: a}
}

// admitted counts how many of n unit-cost requests are let through.
func admitted(g *Guard, c Caller, req Request, n int) int {
	ok := 0
	for range n {
		d, release := g.Admit(context.Background(), c, req)
		release()
		if d.Allowed {
			ok++
		}
	}
	return ok
}

func TestTierAllowances(t *testing.T) {
	clk := newClock()
	g := newGuard(t, Config{Mode: Enforce, Quotas: smallTable(), Now: clk.Now})
	req := Request{Tool: "t", QuotaClass: "work", Cost: 1, Anonymous: true}
	for _, tc := range []struct {
		name   string
		caller Caller
		want   int
	}{
		{"anonymous", anon("192.0.2.1"), 2},
		{"session", Caller{Tier: Session, Key: "s:abc", Principal: "abc"}, 4},
		{"user", Caller{Tier: User, Key: "p:ann", Principal: "ann"}, 6},
		{"app", Caller{Tier: App, Key: "p:app1", Principal: "app1"}, 8},
		{"sandbox app", Caller{Tier: App, Key: "p:app2", Principal: "app2", Sandbox: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := admitted(g, tc.caller, req, 20); got != tc.want {
				t.Fatalf("admitted %d of 20, want %d", got, tc.want)
			}
		})
	}
}

func TestRetryAfterThenAllowed(t *testing.T) {
	clk := newClock()
	tbl := smallTable()
	tbl.Classes["work"] = Class{Anonymous: Allowance{Burst: 3, PerMinute: 2}}
	g := newGuard(t, Config{Mode: Enforce, Quotas: tbl, Now: clk.Now})
	c := anon("198.51.100.7")
	req := Request{QuotaClass: "work", Cost: 3, Anonymous: true}
	d, _ := g.Admit(context.Background(), c, req)
	if !d.Allowed || first(d.Limits.Policy) != `"work";q=3;w=90;qu="cost-units"` || first(d.Limits.Limit) != `"work";r=0;t=90` {
		t.Fatalf("first: %+v", d)
	}
	d, _ = g.Admit(context.Background(), c, req)
	if d.Allowed || d.Reason != ReasonQuotaExceeded || !d.Reason.Retryable() {
		t.Fatalf("second: %+v", d)
	}
	// On a refusal the RateLimit item agrees with Retry-After: nothing
	// usable remains and t is the retry (issue 16, item 16).
	if want := fmt.Sprintf(`"work";r=0;t=%d`, d.RetryAfterSeconds); first(d.Limits.Limit) != want {
		t.Fatalf("second: RateLimit %q, want %q", first(d.Limits.Limit), want)
	}
	// 3 units at 2 a minute: 90 s.
	if d.RetryAfterSeconds != 90 || first(d.Limits.Policy) == "" {
		t.Fatalf("retry: %d %v", d.RetryAfterSeconds, d.Limits)
	}
	var r *Refusal
	if !errors.As(d.Err(), &r) || r.Reason != ReasonQuotaExceeded {
		t.Fatalf("Err: %v", d.Err())
	}
	clk.Advance(time.Duration(d.RetryAfterSeconds-1) * time.Second)
	if d, _ := g.Admit(context.Background(), c, req); d.Allowed {
		t.Fatal("admitted before Retry-After")
	}
	clk.Advance(time.Second)
	if d, _ := g.Admit(context.Background(), c, req); !d.Allowed {
		t.Fatalf("after Retry-After: %+v", d)
	}
}

func TestCostExceedsAllowance(t *testing.T) {
	g := newGuard(t, Config{Mode: Enforce, Quotas: smallTable()})
	d, release := g.Admit(context.Background(), anon("192.0.2.9"), Request{QuotaClass: "work", Cost: 3, Anonymous: true})
	release()
	if d.Allowed || d.Reason != ReasonCostExceedsAllowance || d.Reason.Retryable() || d.RetryAfterSeconds != 0 {
		t.Fatalf("%+v", d)
	}
	// The same cost fits a user.
	d, _ = g.Admit(context.Background(), Caller{Tier: User, Key: "p:u"}, Request{QuotaClass: "work", Cost: 3, Anonymous: true})
	if !d.Allowed {
		t.Fatalf("user: %+v", d)
	}
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name    string
		remote  string
		xff     []string
		realIP  string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxy", "203.0.113.5:4000", nil, "", nil, "203.0.113.5"},
		{"spoofed xff from untrusted peer", "203.0.113.5:4000", []string{"1.2.3.4"}, "1.2.3.4", nil, "203.0.113.5"},
		{"spoofed xff, untrusted peer, proxies configured", "203.0.113.5:4000", []string{"10.1.1.1"}, "", trusted, "203.0.113.5"},
		{"trusted proxy appended", "10.0.0.2:80", []string{"198.51.100.9"}, "", trusted, "198.51.100.9"},
		{"client prefix ignored", "10.0.0.2:80", []string{"1.2.3.4, 198.51.100.9"}, "", trusted, "198.51.100.9"},
		{"two trusted hops, two lines", "10.0.0.2:80", []string{"1.2.3.4, 198.51.100.9", "10.0.0.3"}, "", trusted, "198.51.100.9"},
		{"x-real-ip without xff", "10.0.0.2:80", nil, "198.51.100.10", trusted, "198.51.100.10"},
		{"garbage entry stops at last trusted", "10.0.0.2:80", []string{"1.2.3.4, junk"}, "", trusted, "10.0.0.2"},
		{"ipv4-mapped peer", "[::ffff:203.0.113.5]:4000", nil, "", nil, "203.0.113.5"},
		{"ipv6 peer", "[2001:db8::1]:4000", nil, "", nil, "2001:db8::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tc.realIP != "" {
				r.Header.Set("X-Real-IP", tc.realIP)
			}
			if got := ClientIP(presented(r), tc.trusted); got.String() != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSpoofedForwardedForSharesBucket(t *testing.T) {
	g := newGuard(t, Config{Mode: Enforce, Quotas: smallTable()})
	req := Request{QuotaClass: "work", Cost: 1, Anonymous: true}
	ok := 0
	for i := range 10 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.5:4000"
		r.Header.Set("X-Forwarded-For", "192.0.2."+strconv.Itoa(i))
		c, err := g.Resolve(r.Context(), presented(r), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Key != "ip:203.0.113.5" {
			t.Fatalf("key %q", c.Key)
		}
		if d, _ := g.Admit(context.Background(), c, req); d.Allowed {
			ok++
		}
	}
	if ok != 2 {
		t.Fatalf("admitted %d, want the anonymous burst 2", ok)
	}
}

func TestAddressKeys(t *testing.T) {
	g := newGuard(t, Config{Mode: Enforce, Quotas: smallTable()})
	req := Request{QuotaClass: "work", Cost: 1, Anonymous: true}
	ok := 0
	for _, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2:aaaa::9", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::77"} {
		if d, _ := g.Admit(context.Background(), anon(ip), req); d.Allowed {
			ok++
		}
	}
	if ok != 2 {
		t.Fatalf("rotating inside one /64 admitted %d, want 2", ok)
	}
	if d, _ := g.Admit(context.Background(), anon("2001:db8:1:3::1"), req); !d.Allowed {
		t.Fatal("another /64 shares the bucket")
	}
	if AddrKey(netip.MustParseAddr("::ffff:192.0.2.1")) != AddrKey(netip.MustParseAddr("192.0.2.1")) {
		t.Fatal("IPv4-mapped differs from IPv4")
	}
	if got := AddrKey(netip.MustParseAddr("2001:db8:1:2:3:4:5:6")); got != "2001:db8:1:2::/64" {
		t.Fatalf("v6 key %s", got)
	}
}

func TestParallelNeverOverAdmits(t *testing.T) {
	tbl := smallTable()
	tbl.Classes["work"] = Class{Anonymous: Allowance{Burst: 50, PerMinute: 1}}
	g := newGuard(t, Config{Mode: Enforce, Quotas: tbl})
	c := anon("192.0.2.44")
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 500 {
		wg.Go(func() {
			d, release := g.Admit(context.Background(), c, Request{QuotaClass: "work", Cost: 1, Anonymous: true})
			defer release()
			if d.Allowed {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if n := ok.Load(); n > 50 || n == 0 {
		t.Fatalf("admitted %d, want 1..50 (burst)", n)
	}
}

func TestAuthAndCapability(t *testing.T) {
	g := newGuard(t, Config{Mode: Enforce})
	probe := Request{Tool: "port_check", QuotaClass: ClassProbe, Cost: 1, Capability: CapabilityProbe, Egress: true, Target: "example.com"}
	for _, tc := range []struct {
		name   string
		caller Caller
		req    Request
		reason Reason
	}{
		{"anonymous on a non-anonymous tool", anon("192.0.2.1"), Request{QuotaClass: ClassJob, Cost: 1}, ReasonUnauthenticated},
		{"session on a non-anonymous tool", Caller{Tier: Session, Key: "s:x"}, Request{QuotaClass: ClassJob, Cost: 1}, ""},
		{"probe without capability", Caller{Tier: User, Key: "p:u"}, probe, ReasonForbidden},
		{"probe with capability", Caller{Tier: User, Key: "p:v", Capabilities: []string{CapabilityProbe}}, probe, ""},
		{"probe anonymous", anon("192.0.2.2"), probe, ReasonUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, release := g.Admit(context.Background(), tc.caller, tc.req)
			defer release()
			if d.Reason != tc.reason || d.Allowed != (tc.reason == "") {
				t.Fatalf("%+v", d)
			}
		})
	}
}

func TestPerTargetThrottleAcrossCallers(t *testing.T) {
	clk := newClock()
	g := newGuard(t, Config{Mode: Enforce, Now: clk.Now})
	req := func(target string) Request {
		return Request{Tool: "http_headers", QuotaClass: ClassFetch, Cost: 1, Anonymous: true, Egress: true, Target: target, PerTargetPerMinute: 2}
	}
	a, b := anon("192.0.2.1"), Caller{Tier: User, Key: "p:bob"}
	if d, _ := g.Admit(context.Background(), a, req("Example.COM.")); !d.Allowed {
		t.Fatalf("a: %+v", d)
	}
	if d, _ := g.Admit(context.Background(), b, req("https://example.com:8443/x")); !d.Allowed {
		t.Fatalf("b: %+v", d)
	}
	d, _ := g.Admit(context.Background(), b, req("example.com"))
	if d.Allowed || d.Reason != ReasonThrottled || d.RetryAfterSeconds != 30 {
		t.Fatalf("third: %+v", d)
	}
	if !strings.Contains(strings.Join(d.Limits.Policy, ","), `"target";q=2;w=60;qu="request"`) ||
		!slices.Contains(d.Limits.Limit, `"target";r=0;t=30`) {
		t.Fatalf("limits %v", d.Limits)
	}
	if d, _ := g.Admit(context.Background(), b, req("example.org")); !d.Allowed {
		t.Fatal("another target is throttled")
	}
	clk.Advance(30 * time.Second)
	if d, _ := g.Admit(context.Background(), a, req("example.com")); !d.Allowed {
		t.Fatalf("after retry: %+v", d)
	}
}

func TestReportMode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller Caller
		req    Request
		reason Reason
	}{
		{"unauthenticated", anon("192.0.2.1"), Request{QuotaClass: ClassJob, Cost: 1}, ReasonUnauthenticated},
		{"forbidden", Caller{Tier: User, Key: "p:u"}, Request{QuotaClass: ClassProbe, Cost: 1, Capability: CapabilityProbe}, ReasonForbidden},
		{"cost", anon("192.0.2.3"), Request{QuotaClass: ClassRun, Cost: 1000, Anonymous: true}, ReasonCostExceedsAllowance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enforce := newGuard(t, Config{Mode: Enforce})
			d, release := enforce.Admit(context.Background(), tc.caller, tc.req)
			release()
			if d.Allowed || d.Reported || d.Reason != tc.reason {
				t.Fatalf("enforce: %+v", d)
			}
			report := newGuard(t, Config{})
			d, release = report.Admit(context.Background(), tc.caller, tc.req)
			release()
			if !d.Allowed || !d.Reported || d.Reason != tc.reason || d.Err() != nil {
				t.Fatalf("report: %+v", d)
			}
		})
	}
	t.Run("quota", func(t *testing.T) {
		g := newGuard(t, Config{Quotas: smallTable()})
		c := anon("192.0.2.5")
		var reported int
		for range 5 {
			d, release := g.Admit(context.Background(), c, Request{QuotaClass: "work", Cost: 1, Anonymous: true})
			release()
			if !d.Allowed {
				t.Fatalf("report mode refused: %+v", d)
			}
			if d.Reported {
				if d.Reason != ReasonQuotaExceeded || d.RetryAfterSeconds == 0 {
					t.Fatalf("%+v", d)
				}
				reported++
			}
		}
		if reported != 3 {
			t.Fatalf("reported %d, want 3", reported)
		}
	})
}

func TestSemaphores(t *testing.T) {
	tbl := smallTable()
	tbl.Classes["work"] = Class{
		Anonymous: Allowance{Burst: 100, PerMinute: 100, ConcurrentPerCaller: 1, ConcurrentPerTier: 2},
		User:      Allowance{Burst: 100, PerMinute: 100, ConcurrentPerCaller: 2},
	}
	g := newGuard(t, Config{Mode: Enforce, Quotas: tbl})
	ctx := context.Background()
	req := Request{QuotaClass: "work", Cost: 1, Anonymous: true}
	a, b, c := anon("192.0.2.1"), anon("192.0.2.2"), anon("192.0.2.3")

	d1, rel1 := g.Admit(ctx, a, req)
	if !d1.Allowed {
		t.Fatalf("a: %+v", d1)
	}
	if d, _ := g.Admit(ctx, a, req); d.Allowed || d.Reason != ReasonConcurrency || d.RetryAfterSeconds == 0 {
		t.Fatalf("a twice: %+v", d)
	}
	_, rel2 := g.Admit(ctx, b, req)
	if d, _ := g.Admit(ctx, c, req); d.Reason != ReasonConcurrency {
		t.Fatalf("tier-wide: %+v", d)
	}
	if n := g.InFlight("work", "anonymous", ""); n != 2 {
		t.Fatalf("in flight %d", n)
	}
	rel1()
	rel1() // idempotent
	if n := g.InFlight("work", "anonymous", ""); n != 1 {
		t.Fatalf("in flight after release %d", n)
	}
	d, rel3 := g.Admit(ctx, c, req)
	if !d.Allowed {
		t.Fatalf("c after release: %+v", d)
	}
	rel2()
	rel3()
	if g.InFlight("work", "anonymous", "") != 0 || g.InFlight("work", "anonymous", a.Key) != 0 {
		t.Fatal("slots left held")
	}
}

func TestRefusalGivesBack(t *testing.T) {
	// A throttled run gives back its quota units and its slot.
	tbl := smallTable()
	tbl.Classes["work"] = Class{User: Allowance{Burst: 2, PerMinute: 1, ConcurrentPerCaller: 5}}
	g := newGuard(t, Config{Mode: Enforce, Quotas: tbl})
	u := Caller{Tier: User, Key: "p:u"}
	req := Request{QuotaClass: "work", Cost: 1, Anonymous: true, Target: "h", PerTargetPerMinute: 1}
	d, _ := g.Admit(context.Background(), u, req)
	if !d.Allowed {
		t.Fatal(d)
	}
	d, _ = g.Admit(context.Background(), u, req)
	if d.Reason != ReasonThrottled {
		t.Fatalf("%+v", d)
	}
	if g.InFlight("work", "user", u.Key) != 1 {
		t.Fatal("the refused run kept its slot")
	}
	req.Target = "other"
	if d, _ := g.Admit(context.Background(), u, req); !d.Allowed {
		t.Fatalf("quota unit was not given back: %+v", d)
	}
}

type fakeCreds struct{}

func (fakeCreds) Token(_ context.Context, tok string) (Identity, error) {
	switch tok {
	case "user":
		return Identity{Tier: User, Principal: "ann"}, nil
	case "app":
		return Identity{Tier: App, Principal: "app1", Capabilities: []string{CapabilityProbe}, Sandbox: true}, nil
	case "busy":
		return Identity{}, fmt.Errorf("%w: database is locked", ErrUnavailable)
	}
	return Identity{}, errors.New("unknown token")
}

func (fakeCreds) Session(_ context.Context, v string) (Identity, error) {
	if v == "s1" {
		return Identity{Tier: Session, Principal: "s1"}, nil
	}
	return Identity{}, errors.New("unknown session")
}

func TestResolve(t *testing.T) {
	g := newGuard(t, Config{})
	for _, tc := range []struct {
		name    string
		auth    string
		cookies map[string]string
		tier    Tier
		key     string
		sandbox bool
		err     bool
	}{
		{"anonymous", "", nil, Anonymous, "ip:203.0.113.5", false, false},
		{"bearer user", "Bearer user", nil, User, "p:ann", false, false},
		{"bearer sandbox app", "bearer app", nil, App, "p:app1", true, false},
		{"token cookie", "", map[string]string{"ov_token": "user"}, User, "p:ann", false, false},
		{"session cookie", "", map[string]string{"ov_tools_jobs": "s1"}, Session, "s:s1", false, false},
		{"bad token", "Bearer nope", nil, 0, "", false, true},
		{"basic auth", "Basic dXNlcg==", nil, 0, "", false, true},
		{"bad session", "", map[string]string{"ov_tools_jobs": "zz"}, 0, "", false, true},
		{"store busy", "Bearer busy", nil, 0, "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = "203.0.113.5:1234"
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			for k, v := range tc.cookies {
				r.AddCookie(&http.Cookie{Name: k, Value: v})
			}
			c, err := g.Resolve(r.Context(), presented(r), fakeCreds{})
			if tc.err {
				// A store that cannot answer is not a bad credential.
				busy := tc.auth == "Bearer busy"
				if errors.Is(err, ErrInvalidCredentials) == busy || errors.Is(err, ErrUnavailable) != busy {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Tier != tc.tier || c.Key != tc.key || c.Sandbox != tc.sandbox || c.IP.String() != "203.0.113.5" {
				t.Fatalf("%+v", c)
			}
		})
	}
}

func TestChallengeHook(t *testing.T) {
	var called atomic.Int64
	g := newGuard(t, Config{Mode: Enforce, Challenge: challengeFunc(func(_ context.Context, c Caller, _ Request) error {
		called.Add(1)
		if c.Tier == Anonymous {
			return errors.New("solve the challenge")
		}
		return nil
	})})
	d, _ := g.Admit(context.Background(), anon("192.0.2.1"), Request{Anonymous: true, Cost: 1})
	if d.Reason != ReasonChallenge || d.Reason.Retryable() {
		t.Fatalf("%+v", d)
	}
	d, _ = g.Admit(context.Background(), Caller{Tier: User, Key: "p:u"}, Request{Anonymous: true, Cost: 1})
	if !d.Allowed || called.Load() != 2 {
		t.Fatalf("%+v", d)
	}
}

type challengeFunc func(context.Context, Caller, Request) error

func (f challengeFunc) Check(ctx context.Context, c Caller, r Request) error { return f(ctx, c, r) }

func TestParseTable(t *testing.T) {
	const js = `{"classes": {"tools-job": {
		"anonymous": {"burst": 1, "per_minute": 1, "concurrent_per_caller": 1, "concurrent_per_tier": 2},
		"session": {"burst": 2, "per_minute": 1},
		"user": {"burst": 3, "per_minute": 1},
		"app": {"burst": 4, "per_minute": 1},
		"sandbox": {"burst": 0, "per_minute": 0}}}}`
	tbl, err := ParseTable(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if a, col, _ := tbl.Lookup(ClassJob, Caller{Tier: App}); a.Burst != 4 || col != "app" {
		t.Fatalf("job/app %+v %s", a, col)
	}
	if a, col, _ := tbl.Lookup(ClassJob, Caller{Tier: App, Sandbox: true}); a.Burst != 0 || col != "sandbox" {
		t.Fatalf("job/sandbox %+v", a)
	}
	if a, _, _ := tbl.Lookup(ClassRun, Caller{}); a != DefaultTable().Classes[ClassRun].Anonymous {
		t.Fatalf("defaults not kept: %+v", a)
	}
	if a, _, _ := tbl.Lookup("tools-unknown", Caller{}); a != DefaultTable().Classes[ClassRun].Anonymous {
		t.Fatalf("unknown class: %+v", a)
	}
	for _, bad := range []string{
		`{"classes": {"x": {"anonymous": {"burst": 1, "per_minute": 1}}}}`,
		`{"classes": {}, "default_class": "nope"}`,
		`{"clases": {}}`,
		`{"classes": {"x": {"anonymous": {"burst": 1}, "session": {}, "user": {}, "app": {}, "sandbox": {}}}}`,
		`{"classes": {"x": {"anonymous": {"burst": -1, "per_minute": 1}, "session": {}, "user": {}, "app": {}, "sandbox": {}}}}`,
	} {
		if _, err := ParseTable(strings.NewReader(bad)); !errors.Is(err, ErrInvalidTable) {
			t.Errorf("%s: err %v", bad, err)
		}
	}
	if err := DefaultTable().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryLimiterEvicts(t *testing.T) {
	clk := newClock()
	m := NewMemoryLimiter()
	a := Allowance{Burst: 2, PerMinute: 60}
	for i := range 10 {
		if _, err := m.Take(context.Background(), strconv.Itoa(i), a, 1, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if m.Len() != 10 {
		t.Fatalf("len %d", m.Len())
	}
	clk.Advance(2 * time.Minute)
	if _, err := m.Take(context.Background(), "new", a, 1, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if m.Len() != 1 {
		t.Fatalf("idle buckets kept: %d", m.Len())
	}
}

func TestNormalizeTarget(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.":                 "example.com",
		"example.com:443":              "example.com",
		"https://Example.com:8443/p?q": "example.com",
		"[2001:db8::1]:80":             "2001:db8::1",
		"::ffff:192.0.2.1":             "192.0.2.1",
		"192.0.2.1:22":                 "192.0.2.1",
	} {
		if got := NormalizeTarget(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestParseModeAndPrefixes(t *testing.T) {
	if m, err := ParseMode("enforce"); err != nil || m != Enforce {
		t.Fatal(m, err)
	}
	if _, err := ParseMode("on"); !errors.Is(err, ErrInvalidMode) {
		t.Fatal(err)
	}
	ps, err := ParsePrefixes("10.0.0.0/8, 192.0.2.1 ,2001:db8::/32")
	if err != nil || len(ps) != 3 || ps[1].Bits() != 32 {
		t.Fatal(ps, err)
	}
	if _, err := ParsePrefixes("nope"); err == nil {
		t.Fatal("no error")
	}
}

// presented reads what r presents, as the routes do.
func presented(r *http.Request) Presented {
	return Presented{Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For"),
		RealIP: r.Header.Get("X-Real-IP"), Authorization: r.Header.Get("Authorization"),
		Cookie: func(name string) string {
			ck, err := r.Cookie(name)
			if err != nil {
				return ""
			}
			return ck.Value
		}}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		h    string
		tok  string
		want bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER  abc", "abc", true}, // 1*SP (RFC 9110 §11.4)
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer a b", "", false},
		{"Bearer abc ", "", false},
		{"Basic abc", "", false},
		{"Bearer\tabc", "", false},
		{"Bearer ab\x7f", "", false},
	} {
		tok, ok := Bearer(tc.h)
		if ok != tc.want || tok != tc.tok {
			t.Errorf("Bearer(%q) = %q, %v", tc.h, tok, ok)
		}
	}
}

// TestPerTargetThrottleByAddressAcrossTools: the per-target throttle is
// keyed by the address reached as well as the name typed, and shared by
// every egress tool (issue 16, item 14).
func TestPerTargetThrottleByAddressAcrossTools(t *testing.T) {
	clk := newClock()
	g := newGuard(t, Config{Mode: Enforce, Now: clk.Now})
	addr := netip.MustParseAddr("203.0.113.9")
	req := func(tool, target string, resolved netip.Addr) Request {
		return Request{Tool: tool, QuotaClass: ClassFetch, Cost: 1, Anonymous: true, Egress: true,
			Target: target, TargetAddr: resolved, PerTargetPerMinute: 3}
	}
	c := Caller{Tier: User, Key: "p:bob"}
	for i, r := range []Request{
		req("port_check", "203.0.113.9", netip.Addr{}),         // the address itself
		req("tcp_ping", "a.example", addr),                     // a name of it, another tool
		req("tls_check", "[::ffff:203.0.113.9]", netip.Addr{}), // its mapped form
	} {
		if d, _ := g.Admit(context.Background(), c, r); !d.Allowed {
			t.Fatalf("run %d: %+v", i, d)
		}
	}
	// Another name of the same address, another tool: throttled.
	d, _ := g.Admit(context.Background(), c, req("http_headers", "https://b.example/x", addr))
	if d.Allowed || d.Reason != ReasonThrottled {
		t.Fatalf("another name of the address: %+v", d)
	}
	// The name a.example was used once; with another address it still
	// has its own bucket, and its new address is fresh.
	if d, _ := g.Admit(context.Background(), c, req("tcp_ping", "a.example", netip.MustParseAddr("198.51.100.1"))); !d.Allowed {
		t.Fatalf("a.example at another address: %+v", d)
	}
	// A name whose address is unknown counts by its name alone.
	for i := range 3 {
		if d, _ := g.Admit(context.Background(), c, req("dns_lookup", "c.example", netip.Addr{})); !d.Allowed {
			t.Fatalf("c.example run %d: %+v", i, d)
		}
	}
	if d, _ := g.Admit(context.Background(), c, req("port_check", "C.example.", netip.Addr{})); d.Allowed {
		t.Fatal("c.example: a fourth run within the minute was admitted")
	}
}

// TestPerTargetThrottleBulk: every target of a bulk run counts against its
// own buckets, and one throttled target refuses the run (issue 16, item
// 15).
func TestPerTargetThrottleBulk(t *testing.T) {
	g := newGuard(t, Config{Mode: Enforce, Now: newClock().Now})
	c := Caller{Tier: User, Key: "p:bob"}
	one := Request{Tool: "tls_check", QuotaClass: ClassFetch, Cost: 1, Anonymous: true, Egress: true, Target: "b.example", PerTargetPerMinute: 1}
	if d, _ := g.Admit(context.Background(), c, one); !d.Allowed {
		t.Fatalf("b.example: %+v", d)
	}
	bulk := Request{Tool: "tls_check_bulk", QuotaClass: ClassFetch, Cost: 1, Anonymous: true, Egress: true,
		Target: "a.example", More: []Target{{Name: "b.example"}}, PerTargetPerMinute: 1}
	if d, _ := g.Admit(context.Background(), c, bulk); d.Allowed || d.Reason != ReasonThrottled {
		t.Fatalf("a bulk run with a throttled target: %+v", d)
	}
	// The refusal gave a.example's run back.
	if d, _ := g.Admit(context.Background(), c, Request{Tool: "tls_check", QuotaClass: ClassFetch, Cost: 1, Anonymous: true,
		Egress: true, Target: "a.example", PerTargetPerMinute: 1}); !d.Allowed {
		t.Fatalf("a.example after the refused bulk run: %+v", d)
	}
}

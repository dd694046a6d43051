package server_test

// Issue 16, items 11–17: callers, guard and abuse log.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/server"
)

// TestLegacyDeprecationSetting: the legacy routes send ADR-027's
// "Deprecation: true" by default and RFC 9745's "@<unix seconds>" when the
// server is configured so (issue 16, item 17).
func TestLegacyDeprecationSetting(t *testing.T) {
	for _, tc := range []struct {
		name, setting, want string
	}{
		{name: "default", want: "true"},
		{name: "rfc9745", setting: "@1790121600", want: "@1790121600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startConfigured(t, nil, false, func(cfg *server.Config) { cfg.Deprecation = tc.setting })
			status, h, body := r.do("GET", "/api/dev/nothing/here", "", nil)
			if status != http.StatusNotFound {
				t.Fatalf("unknown legacy route: %d %s", status, body)
			}
			if h.Get("Deprecation") != tc.want || h.Get("Sunset") == "" || h.Get("Link") == "" {
				t.Errorf("Deprecation=%q Sunset=%q Link=%q, want Deprecation %q", h.Get("Deprecation"), h.Get("Sunset"), h.Get("Link"), tc.want)
			}
		})
	}
}

// abuseEvents returns the abuse rows' events by tool and reason, failing
// on a row without a caller hash (every request here has an address).
func abuseEvents(t *testing.T, r *rig) map[string]int64 {
	t.Helper()
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, row := range rows {
		if row.Caller == "" {
			t.Errorf("row without a caller: %+v", row)
		}
		got[row.Tool+" "+row.Reason] += row.Count
	}
	return got
}

// TestAbuseRules: runs that trip an abuse rule are recorded (issue 16,
// item 13): a probe aimed at a refused address, a burst of bad
// credentials from one caller, quota refusals in a row; the anonymous 401
// of a job tool (run route and legacy route) is in the log; bad-credential
// rows carry the caller hash.
func TestAbuseRules(t *testing.T) {
	clock := &guardClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: smallTable(1), Now: clock.Now}
	})
	ctx := context.Background()
	bob, err := r.srv.Accounts().CreateUserToken(ctx, "bob", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}

	// A probe at loopback (no allow-list): refused by the tool, and the
	// run trips the refused-target rule.
	status, _, body := r.send("POST", "/api/v1/tools/port_check/run", cred{bearer: bob},
		[]byte(`{"input":{"operation":"check","host":"127.0.0.1","ports":[80]}}`))
	if status != http.StatusOK {
		t.Fatalf("probe at loopback: %d %s", status, body)
	}

	// Bad credentials, one more than the burst.
	for i := range run.RuleCredentialBurstCount + 1 {
		status, h, body := r.send("POST", "/api/v1/tools/hash/run", cred{bearer: fmt.Sprintf("tht_nope%d", i)},
			[]byte(`{"input":{"operation":"digest","text":"a","algorithm":"sha256"}}`))
		problemCode(t, "bad token", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	}

	// Anonymous callers of a job tool: the run route and the legacy
	// upload route.
	status, h, body := r.send("POST", "/api/v1/tools/pdf_protect/run", cred{}, []byte(`{"input":{}}`))
	problemCode(t, "anonymous job tool", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	status, h, body = r.send("POST", "/api/process", cred{}, []byte(`{"tool":"protect"}`))
	problemCode(t, "anonymous legacy job tool", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")

	// Quota refusals in a row: 2 runs fit the anonymous allowance, then
	// the streak's threshold and one more are refused.
	for i := range 2 + run.RuleQuotaStreakCount + 1 {
		status, _, body := r.send("POST", "/api/v1/tools/hash/run", cred{},
			[]byte(`{"input":{"operation":"digest","text":"a","algorithm":"sha256"}}`))
		if want := i >= 2; want != (status == http.StatusTooManyRequests) {
			t.Fatalf("anonymous run %d: %d %s", i, status, body)
		}
	}

	got := abuseEvents(t, r)
	for key, want := range map[string]int64{
		"port_check " + run.RuleProbeRefusedTarget: 1,
		" unauthenticated":                         int64(run.RuleCredentialBurstCount + 1),
		" " + run.RuleCredentialBurst:              2,
		"pdf_protect unauthenticated":              2, // the run route and /api/process
		"hash quota_exceeded":                      int64(run.RuleQuotaStreakCount + 1),
		"hash " + run.RuleQuotaStreak:              2,
	} {
		if got[key] != want {
			t.Errorf("abuse events %q = %d, want %d (all: %v)", key, got[key], want, got)
		}
	}
}

// TestPerTargetThrottleByAddress: over the live server, the per-target
// throttle counts an address and its names together, across every probe
// tool and caller (issue 16, item 14): 127.0.0.1 by port_check and
// localhost by tcp_ping share one limit.
func TestPerTargetThrottleByAddress(t *testing.T) {
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce}
		c.ProbeAllow = "127.0.0.0/8"
	})
	ctx := context.Background()
	bob, err := r.srv.Accounts().CreateUserToken(ctx, "bob", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}
	dave, err := r.srv.Accounts().CreateUserToken(ctx, "dave", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}
	port := `{"input":{"operation":"check","host":%q,"ports":[9]}}`
	ping := `{"input":{"operation":"ping","host":%q,"port":9,"count":1}}`
	runs := []struct {
		tool, body, host, token string
	}{
		{"port_check", port, "127.0.0.1", bob},
		{"tcp_ping", ping, "localhost", dave},
	}
	admitted := 0
	for i := 0; i < 20; i++ {
		run := runs[i%2]
		status, h, body := r.send("POST", "/api/v1/tools/"+run.tool+"/run", cred{bearer: run.token}, []byte(fmt.Sprintf(run.body, run.host)))
		if status == http.StatusTooManyRequests {
			problemCode(t, "throttled", status, h, body, http.StatusTooManyRequests, "tools.caller.throttled")
			break
		}
		if status != http.StatusOK {
			t.Fatalf("run %d (%s %s): %d %s", i, run.tool, run.host, status, body)
		}
		admitted++
	}
	// netprobe.PerTargetPerMinute runs, shared by the address and its name.
	if admitted != 6 {
		t.Errorf("admitted %d runs against 127.0.0.1 and localhost, want 6 in all", admitted)
	}
}

// TestBrowserSession: an anonymous browser's first job submission is
// issued a session cookie of the ADR's name (or the configured one),
// HttpOnly and SameSite=Strict, not Secure over plain HTTP, and the
// request and the next ones run as that session; a client that is not a
// browser is not issued one (issue 16, item 11).
func TestBrowserSession(t *testing.T) {
	for _, tc := range []struct{ name, setting, cookie string }{
		{name: "default", cookie: "ov_tools_jobs"},
		{name: "configured", setting: "my_session", cookie: "my_session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startConfigured(t, bundled(t), true, func(c *server.Config) {
				c.Guard = server.GuardConfig{Mode: guard.Enforce}
				c.SessionCookie = tc.setting
			})
			job := []byte(`{"type":"pdf","input":{"tool":"render"}}`)
			// Not a browser: no session, and the job tool needs one.
			status, h, body := r.send("POST", "/api/v1/jobs", cred{}, job)
			problemCode(t, "anonymous script", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
			if h.Get("Set-Cookie") != "" {
				t.Errorf("a session issued to a script: %q", h.Get("Set-Cookie"))
			}
			browser := cred{header: http.Header{"Sec-Fetch-Site": {"same-origin"}}}
			status, h, body = r.send("POST", "/api/v1/jobs", browser, job)
			if status == http.StatusUnauthorized {
				t.Fatalf("a browser's first submission: %d %s", status, body)
			}
			resp := http.Response{Header: h}
			var got *http.Cookie
			for _, ck := range resp.Cookies() {
				if ck.Name == tc.cookie {
					got = ck
				}
			}
			if got == nil || got.Value == "" || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Secure ||
				got.Path != "/" || got.Expires.IsZero() {
				t.Fatalf("session cookie %+v (Set-Cookie %q)", got, h.Values("Set-Cookie"))
			}
			// The next request presents it: the session tier's allowance.
			status, h, body = r.send("POST", "/api/v1/tools/hash/run", cred{header: http.Header{"Cookie": {tc.cookie + "=" + got.Value}}},
				[]byte(`{"input":{"operation":"digest","text":"a","algorithm":"sha256"}}`))
			if status != http.StatusOK || !strings.Contains(h.Get("RateLimit-Policy"), `"tools-run";q=120`) {
				t.Errorf("a run with the session: %d %q %s", status, h.Get("RateLimit-Policy"), body)
			}
		})
	}
}

// TestLegacyNetRoutes: the probes answer their old GET
// /api/net/<endpoint>/:target routes with the deprecation headers,
// /api/process/multi exists, and a bad token's 401 on a legacy route
// carries Deprecation, Sunset and Link (issue 16, item 12).
func TestLegacyNetRoutes(t *testing.T) {
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Guard = server.GuardConfig{Mode: guard.Enforce}
		c.ProbeAllow = "127.0.0.0/8"
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	bob, err := r.srv.Accounts().CreateUserToken(context.Background(), "bob", []string{auth.CapabilityNetProbe})
	if err != nil {
		t.Fatal(err)
	}
	deprecated := func(name string, h http.Header, successor string) {
		t.Helper()
		if h.Get("Deprecation") != "true" || h.Get("Sunset") != "Thu, 31 Dec 2026 23:59:59 GMT" ||
			h.Get("Link") != "<"+successor+">; rel=\"successor-version\"" {
			t.Errorf("%s: Deprecation=%q Sunset=%q Link=%q", name, h.Get("Deprecation"), h.Get("Sunset"), h.Get("Link"))
		}
	}

	status, h, body := r.send("GET", fmt.Sprintf("/api/net/ports/127.0.0.1?ports=%d", port), cred{bearer: bob}, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"open"`) {
		t.Errorf("legacy port check: %d %s", status, body)
	}
	deprecated("legacy port check", h, "/api/v1/tools/port_check/run")

	status, h, body = r.send("GET", fmt.Sprintf("/api/net/ping/localhost?port=%d&count=1", port), cred{bearer: bob}, nil)
	if status != http.StatusOK {
		t.Errorf("legacy ping: %d %s", status, body)
	}
	deprecated("legacy ping", h, "/api/v1/tools/tcp_ping/run")

	// A value the schema refuses is the run route's problem.
	status, h, body = r.send("GET", "/api/net/ports/127.0.0.1?ports=http", cred{bearer: bob}, nil)
	problemCode(t, "legacy port check, bad ports", status, h, body, http.StatusUnprocessableEntity, "tools.run.invalid_input")
	deprecated("legacy port check, bad ports", h, "/api/v1/tools/port_check/run")

	// A bad token: 401, still deprecated.
	status, h, body = r.send("GET", "/api/net/ports/127.0.0.1?ports=80", cred{bearer: "tht_nope"}, nil)
	problemCode(t, "legacy bad token", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	deprecated("legacy bad token", h, "/api/v1/tools")

	// /api/process/multi is a route of the PDF tools.
	status, h, body = r.send("POST", "/api/process/multi", cred{}, []byte(`{"tool":"protect"}`))
	problemCode(t, "legacy multi", status, h, body, http.StatusUnauthorized, "tools.caller.unauthenticated")
	deprecated("legacy multi", h, "/api/v1/tools")
}

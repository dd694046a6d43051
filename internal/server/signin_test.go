package server_test

// Issue 17, item 1: browser sign-in with a user token (docs/hub-auth.md).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/server"
)

// browser is a request as the hub's pages send it: the session and CSRF
// cookies, and the headers a same-origin fetch carries.
type browser struct {
	session, csrf string
	// header is sent as given: Sec-Fetch-Site, Origin, X-CSRF-Token.
	header map[string]string
}

// sendBrowser sends method path with body as b and returns the answer.
func (r *rig) sendBrowser(method, path string, b browser, body []byte) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range b.header {
		req.Header.Set(k, v)
	}
	if b.session != "" {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: b.session})
	}
	if b.csrf != "" {
		req.AddCookie(&http.Cookie{Name: "toolhost_csrf", Value: b.csrf})
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp, out
}

type signInDoc struct {
	Tier, User, Expires string
	CSRFToken           string `json:"csrf_token"`
}

// signIn signs in with token from a same-origin page and returns the
// answer's cookies by name and its document.
func (r *rig) signIn(token string) (map[string]*http.Cookie, signInDoc) {
	r.t.Helper()
	resp, body := r.sendBrowser("POST", "/api/v1/auth/session",
		browser{header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": r.url}},
		[]byte(`{"token":"`+token+`"}`))
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	var d signInDoc
	if err := json.Unmarshal(body, &d); err != nil {
		r.t.Fatalf("sign-in: %v in %s", err, body)
	}
	cookies := map[string]*http.Cookie{}
	for _, c := range resp.Cookies() {
		cookies[c.Name] = c
	}
	return cookies, d
}

// codeOf is the code of a problem document.
func codeOf(t *testing.T, body []byte) string {
	t.Helper()
	var p struct{ Code string }
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("not a problem document: %s", body)
	}
	return p.Code
}

// TestSignInCookies: signing in with a user token sets the session cookie
// (HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP) and the
// readable CSRF cookie equal to the answer's csrf_token; GET says who is
// signed in; a bad token, an app token, a disabled user's token, a bad
// body and a cross-site sign-in are refused.
func TestSignInCookies(t *testing.T) {
	r := start(t, nil)
	ctx := context.Background()
	cookies, d := r.signIn(r.token)
	sess, csrf := cookies[auth.SessionCookie], cookies["toolhost_csrf"]
	if sess == nil || csrf == nil {
		t.Fatalf("cookies %v", cookies)
	}
	if !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/" || sess.Secure || sess.Expires.IsZero() ||
		!strings.HasPrefix(sess.Value, auth.SessionPrefix) {
		t.Errorf("session cookie %+v", sess)
	}
	if csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode || csrf.Path != "/" || csrf.Value == "" || csrf.Value != d.CSRFToken {
		t.Errorf("CSRF cookie %+v, csrf_token %q", csrf, d.CSRFToken)
	}
	if d.Tier != "user" || d.User != "alice" || d.Expires == "" {
		t.Errorf("sign-in answer %+v", d)
	}
	resp, body := r.sendBrowser("GET", "/api/v1/auth/session", browser{session: sess.Value}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"user":"alice"`) || !strings.Contains(string(body), `"tier":"user"`) {
		t.Errorf("who am I: %d %s", resp.StatusCode, body)
	}
	if resp, body := r.sendBrowser("GET", "/api/v1/auth/session", browser{}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("who am I without a cookie: %d %s", resp.StatusCode, body)
	}

	app, err := r.srv.Accounts().CreateAppToken(ctx, "ci", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	carol, err := r.srv.Accounts().CreateToken(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.srv.Accounts().DisableUser(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   string
		status int
		code   string
	}{
		{"bad token", same, `{"token":"th_nope"}`, 401, "tools.caller.unauthenticated"},
		{"unknown token", same, `{"token":"th_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, 401, "tools.caller.unauthenticated"},
		{"app token", same, `{"token":"` + app + `"}`, 401, "tools.caller.unauthenticated"},
		{"disabled user", same, `{"token":"` + carol + `"}`, 401, "tools.caller.unauthenticated"},
		{"no token", same, `{}`, 400, "tools.run.invalid_request"},
		{"unknown member", same, `{"token":"` + r.token + `","x":1}`, 400, "tools.run.invalid_request"},
		{"not JSON", same, `token=` + r.token, 400, "tools.run.invalid_request"},
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, `{"token":"` + r.token + `"}`, 403, "auth.csrf"},
		{"foreign origin", map[string]string{"Origin": "https://evil.example"}, `{"token":"` + r.token + `"}`, 403, "auth.csrf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := r.sendBrowser("POST", "/api/v1/auth/session", browser{header: tc.header}, []byte(tc.body))
			if resp.StatusCode != tc.status || codeOf(t, body) != tc.code {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			if tc.status == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
				t.Errorf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
			}
			if len(resp.Cookies()) != 0 {
				t.Errorf("a refused sign-in set cookies: %v", resp.Cookies())
			}
		})
	}
	// A script without browser headers may sign in.
	resp, body = r.sendBrowser("POST", "/api/v1/auth/session", browser{}, []byte(`{"token":"`+r.token+`"}`))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("sign-in without browser headers: %d %s", resp.StatusCode, body)
	}
}

// TestSignInCompute: the seed-000 routes take the signed-in cookie as the
// user's bearer token; compute (a state-changing request) needs the same
// origin and the CSRF header equal to the cookie, and is refused 403
// auth.csrf without; the run route likewise, in its own dialect.
func TestSignInCompute(t *testing.T) {
	r := start(t, bundled(t))
	cookies, d := r.signIn(r.token)
	sess := cookies[auth.SessionCookie].Value
	batch := encode(t, map[string]any{"request_id": "req-1", "items": []any{
		r.item("c-1", "hash", map[string]any{"operation": "digest", "text": "abc", "algorithm": "sha256"})}})

	if resp, body := r.sendBrowser("GET", "/api/v1/tools/catalog", browser{session: sess}, nil); resp.StatusCode != 200 {
		t.Fatalf("catalog with the cookie: %d %s", resp.StatusCode, body)
	}
	good := map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": d.CSRFToken}
	resp, body := r.sendBrowser("POST", "/api/v1/tools/compute", browser{session: sess, csrf: d.CSRFToken, header: good}, batch)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"success_count":1`) ||
		!strings.Contains(string(body), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("compute with the cookie and the CSRF header: %d %s", resp.StatusCode, body)
	}
	// Origin equal to Host stands for Sec-Fetch-Site.
	resp, body = r.sendBrowser("POST", "/api/v1/tools/compute", browser{session: sess, csrf: d.CSRFToken,
		header: map[string]string{"Origin": r.url, "X-CSRF-Token": d.CSRFToken}}, batch)
	if resp.StatusCode != 200 {
		t.Fatalf("compute with Origin: %d %s", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		name string
		b    browser
	}{
		{"no CSRF header", browser{session: sess, csrf: d.CSRFToken, header: map[string]string{"Sec-Fetch-Site": "same-origin"}}},
		{"wrong CSRF header", browser{session: sess, csrf: "x", header: map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": "x"}}},
		{"no CSRF cookie", browser{session: sess, header: good}},
		{"cross-site Origin", browser{session: sess, csrf: d.CSRFToken, header: map[string]string{"Origin": "https://evil.example", "X-CSRF-Token": d.CSRFToken}}},
		{"cross-site fetch", browser{session: sess, csrf: d.CSRFToken, header: map[string]string{"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": d.CSRFToken}}},
		{"no origin at all", browser{session: sess, csrf: d.CSRFToken, header: map[string]string{"X-CSRF-Token": d.CSRFToken}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := r.sendBrowser("POST", "/api/v1/tools/compute", tc.b, batch)
			if resp.StatusCode != 403 || codeOf(t, body) != "auth.csrf" {
				t.Fatalf("compute: %d %s, want 403 auth.csrf", resp.StatusCode, body)
			}
			resp, body = r.sendBrowser("POST", "/api/v1/tools/hash/run", tc.b,
				[]byte(`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`))
			if resp.StatusCode != 403 || codeOf(t, body) != "auth.csrf" {
				t.Fatalf("run: %d %s, want 403 auth.csrf", resp.StatusCode, body)
			}
		})
	}
	resp, body = r.sendBrowser("POST", "/api/v1/tools/hash/run", browser{session: sess, csrf: d.CSRFToken, header: good},
		[]byte(`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`))
	if resp.StatusCode != 200 {
		t.Fatalf("run with the cookie and the CSRF header: %d %s", resp.StatusCode, body)
	}
	// A bearer token needs no CSRF header, cookie or not.
	status, _, body := r.do("POST", "/api/v1/tools/compute", r.token, batch)
	if status != 200 {
		t.Fatalf("compute with a bearer token: %d %s", status, body)
	}
	// An anonymous browser session is not an account's credential.
	anon, _, err := r.srv.Accounts().CreateSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := r.sendBrowser("GET", "/api/v1/tools/catalog", browser{session: anon}, nil); resp.StatusCode != 401 {
		t.Fatalf("catalog with an anonymous session: %d %s", resp.StatusCode, body)
	}
}

// TestSignOut: after sign-out the cookie is refused (401) everywhere and
// both cookies are cleared; revoking the token a session was signed in
// with ends the session too.
func TestSignOut(t *testing.T) {
	r := start(t, nil)
	cookies, d := r.signIn(r.token)
	sess := cookies[auth.SessionCookie].Value
	good := map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": d.CSRFToken}

	// Another site cannot sign the browser out.
	resp, body := r.sendBrowser("DELETE", "/api/v1/auth/session", browser{session: sess, csrf: d.CSRFToken,
		header: map[string]string{"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": d.CSRFToken}}, nil)
	if resp.StatusCode != 403 || codeOf(t, body) != "auth.csrf" {
		t.Fatalf("cross-site sign-out: %d %s", resp.StatusCode, body)
	}
	resp, body = r.sendBrowser("DELETE", "/api/v1/auth/session", browser{session: sess, csrf: d.CSRFToken, header: good}, nil)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("sign-out: %d %s", resp.StatusCode, body)
	}
	cleared := 0
	for _, c := range resp.Cookies() {
		if (c.Name == auth.SessionCookie || c.Name == "toolhost_csrf") && c.MaxAge < 0 && c.Value == "" {
			cleared++
		}
	}
	if cleared != 2 {
		t.Errorf("sign-out cookies %v", resp.Cookies())
	}
	if resp, body := r.sendBrowser("GET", "/api/v1/tools/catalog", browser{session: sess}, nil); resp.StatusCode != 401 {
		t.Errorf("catalog after sign-out: %d %s", resp.StatusCode, body)
	}
	if resp, body := r.sendBrowser("GET", "/api/v1/auth/session", browser{session: sess}, nil); resp.StatusCode != 401 {
		t.Errorf("who am I after sign-out: %d %s", resp.StatusCode, body)
	}
	if resp, body := r.sendBrowser("POST", "/api/v1/tools/compute", browser{session: sess, csrf: d.CSRFToken, header: good}, []byte(`{}`)); resp.StatusCode != 401 {
		t.Errorf("compute after sign-out: %d %s", resp.StatusCode, body)
	}
	// Signing out again clears the cookies and succeeds.
	if resp, body := r.sendBrowser("DELETE", "/api/v1/auth/session", browser{session: sess}, nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("second sign-out: %d %s", resp.StatusCode, body)
	}

	// Revocation of the token ends its sessions at once in this process.
	cookies, _ = r.signIn(r.token)
	sess = cookies[auth.SessionCookie].Value
	if err := r.srv.Accounts().RevokeToken(context.Background(), r.token); err != nil {
		t.Fatal(err)
	}
	if resp, body := r.sendBrowser("GET", "/api/v1/tools/catalog", browser{session: sess}, nil); resp.StatusCode != 401 {
		t.Errorf("catalog after the token's revocation: %d %s", resp.StatusCode, body)
	}
}

// TestSignInSecureBehindTLS: behind a trusted proxy that says
// X-Forwarded-Proto: https, both cookies are Secure; the same header from
// an untrusted peer changes nothing.
func TestSignInSecureBehindTLS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted bool
	}{{"trusted proxy", true}, {"untrusted peer", false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := startConfigured(t, nil, false, func(c *server.Config) {
				if tc.trusted {
					c.Guard.Trusted = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				}
			})
			resp, body := r.sendBrowser("POST", "/api/v1/auth/session",
				browser{header: map[string]string{"X-Forwarded-Proto": "https"}}, []byte(`{"token":"`+r.token+`"}`))
			if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 2 {
				t.Fatalf("sign-in: %d %v %s", resp.StatusCode, resp.Cookies(), body)
			}
			for _, c := range resp.Cookies() {
				if c.Secure != tc.trusted {
					t.Errorf("cookie %s Secure=%v, want %v", c.Name, c.Secure, tc.trusted)
				}
			}
		})
	}
}

// TestSignInThrottledAfterABurst: once RuleCredentialBurstCount tokens
// that do not resolve have come from one address within a minute, its
// sign-ins are refused 429 tools.caller.throttled with a Retry-After
// within the minute — a valid token's too, so that a guess learns
// nothing — and set no cookie; the refusals are abuse-logged. Bad
// bearer tokens on other routes count toward the same burst.
func TestSignInThrottledAfterABurst(t *testing.T) {
	r := start(t, nil)
	same := browser{header: map[string]string{"Sec-Fetch-Site": "same-origin"}}
	status, _, body := r.do("GET", "/api/v1/tools/catalog", "th_nope", nil)
	if status != http.StatusUnauthorized {
		t.Fatalf("a bad bearer token on the catalogue: %d %s", status, body)
	}
	for i := 1; i < run.RuleCredentialBurstCount; i++ {
		resp, body := r.sendBrowser("POST", "/api/v1/auth/session", same, []byte(`{"token":"th_nope"}`))
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad sign-in %d: %d %s", i, resp.StatusCode, body)
		}
	}
	for _, token := range []string{"th_nope", r.token} {
		resp, body := r.sendBrowser("POST", "/api/v1/auth/session", same, []byte(`{"token":"`+token+`"}`))
		if resp.StatusCode != http.StatusTooManyRequests || codeOf(t, body) != "tools.caller.throttled" {
			t.Fatalf("a sign-in after the burst: %d %s", resp.StatusCode, body)
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
		if len(resp.Cookies()) != 0 {
			t.Errorf("a throttled sign-in set cookies: %v", resp.Cookies())
		}
	}
	// The token itself still works where it is a bearer token.
	if status, _, body := r.do("GET", "/api/v1/tools/catalog", r.token, nil); status != http.StatusOK {
		t.Errorf("the catalogue with the token: %d %s", status, body)
	}
	if err := r.srv.Abuse().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := r.srv.Abuse().List(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int64{}
	for _, e := range rows {
		reasons[e.Reason] += e.Count
	}
	if reasons["throttled"] != 2 || reasons[run.RuleCredentialBurst] == 0 {
		t.Errorf("abuse reasons %v", reasons)
	}
}

package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The open API answers CORS (issue 16 item 27): a listed origin is echoed
// with credentials, "*" allows any origin without them, a preflight of
// the registry and run routes is 204 with the methods and headers, and
// the seed-000 routes and unlisted origins get no CORS headers.
func TestCORS(t *testing.T) {
	r := startHygiene(t)
	serve := func(origins ...string) string {
		r.api.cfg.CORSOrigins = origins
		srv := httptest.NewServer(r.api.Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	send := func(base, method, path string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	listed := serve("https://app.example")

	resp := send(listed, "GET", Prefix+"/tools", "Origin", "https://app.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "ETag") || !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
		t.Errorf("a listed origin: %d %v", resp.StatusCode, resp.Header)
	}
	pre := send(listed, "OPTIONS", Prefix+"/tools/some_tool/run", "Origin", "https://app.example",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
	if pre.StatusCode != http.StatusNoContent || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") || pre.Header.Get("Access-Control-Max-Age") == "" ||
		pre.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("a preflight: %d %v", pre.StatusCode, pre.Header)
	}
	for _, tt := range []struct{ name, method, path, origin string }{
		{"an unlisted origin", "GET", Prefix + "/tools", "https://evil.example"},
		{"a seed-000 route", "GET", Prefix + "/tools/catalog", "https://app.example"},
		{"the probes", "GET", "/healthz", "https://app.example"},
	} {
		if resp := send(listed, tt.method, tt.path, "Origin", tt.origin); resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", tt.name, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	if pre := send(listed, "OPTIONS", Prefix+"/tools", "Origin", "https://evil.example", "Access-Control-Request-Method", "GET"); pre.StatusCode == http.StatusNoContent {
		t.Errorf("the preflight of an unlisted origin: %d", pre.StatusCode)
	}

	any := serve("*")
	resp = send(any, "GET", "/openapi.json", "Origin", "https://anyone.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("*: Access-Control-Allow-Origin %q, Access-Control-Allow-Credentials %q (never with *)",
			resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials"))
	}
	if resp := send(serve(), "GET", Prefix+"/tools", "Origin", "https://app.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("no origins configured, yet CORS headers")
	}
}

func TestParseOrigin(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"any", "*", "*", true},
		{"https", "https://App.Example", "https://app.example", true},
		{"port", "http://localhost:5173", "http://localhost:5173", true},
		{"trailing slash", "https://app.example/", "https://app.example", true},
		{"path", "https://app.example/x", "", false},
		{"scheme", "ftp://app.example", "", false},
		{"bare host", "app.example", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOrigin(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseOrigin(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}

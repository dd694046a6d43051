package server_test

// Issue 17: the hub served by the server's engine (internal/hub), from a
// fake dist so that the test needs no Node.

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolhost/toolhost/internal/server"
)

// TestHubRoutes: the app's routes answer index.html (no-cache, with an
// ETag and a 304 for it), hashed assets are immutable, top-level files are
// served, and nothing of the API falls back to the app: /api, /v1,
// /openapi.json, /healthz and unknown paths keep their own answers.
func TestHubRoutes(t *testing.T) {
	index := `<!doctype html><title>hub</title><script type="module" src="/assets/index-abc123.js"></script>`
	dist := fstest.MapFS{
		"index.html":             {Data: []byte(index)},
		"assets/index-abc123.js": {Data: []byte("console.log('hub')")},
		"favicon.svg":            {Data: []byte("<svg/>")},
	}
	r := startConfigured(t, nil, false, func(c *server.Config) { c.HubFS = dist })

	for _, p := range []string{"/", "/tools", "/tools/hash", "/signin", "/settings", "/settings/about", "/settings/about/diagnostics"} {
		status, h, body := r.do("GET", p, "", nil)
		if status != 200 || string(body) != index || h.Get("Cache-Control") != "no-cache" ||
			!strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("ETag") == "" {
			t.Errorf("GET %s: %d %v %q", p, status, h, body)
		}
	}
	status, h, _ := r.do("GET", "/", "", nil)
	req, _ := http.NewRequest("GET", r.url+"/tools/hash", nil)
	req.Header.Set("If-None-Match", h.Get("ETag"))
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status != 200 || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}

	status, h, body := r.do("GET", "/assets/index-abc123.js", "", nil)
	if status != 200 || string(body) != "console.log('hub')" || h.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		!strings.Contains(h.Get("Content-Type"), "javascript") {
		t.Errorf("asset: %d %v %q", status, h, body)
	}
	if status, h, _ := r.do("GET", "/favicon.svg", "", nil); status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/svg") {
		t.Errorf("favicon: %d %v", status, h)
	}
	for _, p := range []string{"/assets/nope.js", "/assets/../index.html"} {
		if status, h, _ := r.do("GET", p, "", nil); status != 404 || h.Get("Cache-Control") == "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: %d %v", p, status, h)
		}
	}
	if status, _, body := r.do("HEAD", "/tools", "", nil); status != 200 || len(body) != 0 {
		t.Errorf("HEAD /tools: %d %q", status, body)
	}

	// The API's routes win and nothing else falls back to index.html.
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/api/v1/tools", 200}, {"/openapi.json", 200}, {"/healthz", 200},
		{"/api/v1/nope", 404}, {"/v1/tools", 404}, {"/api", 404}, {"/nope", 404}, {"/tools/hash/run", 404},
	} {
		status, _, body := r.do("GET", tc.path, "", nil)
		if status != tc.status || strings.Contains(string(body), "<title>hub</title>") {
			t.Errorf("GET %s: %d %.80q, want %d and not the app", tc.path, status, body, tc.status)
		}
	}
	// A POST to an app route is not the app's.
	if status, _, body := r.do("POST", "/tools", "", []byte(`{}`)); status == 200 || strings.Contains(string(body), "<title>hub</title>") {
		t.Errorf("POST /tools: %d %q", status, body)
	}
}

// TestHubNotBuilt: a dist without index.html (a build without Node)
// answers the app's routes 503 with a page naming hub.not_built and make
// hub; the API is unchanged.
func TestHubNotBuilt(t *testing.T) {
	r := startConfigured(t, nil, false, func(c *server.Config) { c.HubFS = fstest.MapFS{".gitkeep": {}} })
	for _, p := range []string{"/", "/tools/hash", "/assets/index.js"} {
		status, h, body := r.do("GET", p, "", nil)
		if status != http.StatusServiceUnavailable || h.Get("X-Toolhost-Code") != "hub.not_built" ||
			!strings.Contains(string(body), "hub.not_built") || !strings.Contains(string(body), "make hub") {
			t.Errorf("GET %s: %d %v %q", p, status, h, body)
		}
	}
	if status, _, body := r.do("GET", "/api/v1/tools", "", nil); status != 200 {
		t.Errorf("API without the hub: %d %s", status, body)
	}
}

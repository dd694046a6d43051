// Package hub serves the hub, Toolhost's web front end (issue 17): the
// Svelte app built by `make hub` from internal/hub/ui into internal/hub/dist
// and embedded in the binary with go:embed. It speaks net/http only; the
// API mounts [Hub.Routes] on its gin engine after its own routes, so the
// API's routes always win.
//
// The app's routes (/, /tools, /tools/<tool_code>, /signin, /settings/…)
// answer index.html with Cache-Control: no-cache (and an ETag), so that a
// new build is picked up at the next load; /assets/… are Vite's hashed
// files, immutable for a year; other top-level files of dist (favicon…)
// an hour. Nothing else falls back to index.html: /api, /v1, /openapi.json,
// /metrics and the probes stay the API's.
//
// A binary built without Node has a dist holding only .gitkeep: then every
// route of the hub answers 503 with a short page naming the code
// hub.not_built and the fix, `make hub`.
package hub

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed all:dist
var embedded embed.FS

// CodeNotBuilt is the code of the answer of a hub built without its web
// app (503).
const CodeNotBuilt = "hub.not_built"

// CodeNotFound is the code of a missing asset (404).
const CodeNotFound = "hub.not_found"

// AppRoutes are the app's client-side routes, as gin patterns: each
// answers index.html.
var AppRoutes = []string{"/", "/tools", "/tools/:tool_code", "/signin", "/settings", "/settings/*path"}

// assetsRoute is the pattern of Vite's hashed files.
const assetsRoute = "/assets/*filepath"

// Option configures [New].
type Option func(*Hub)

// WithFS serves fsys, whose root holds index.html and assets/, instead of
// the embedded dist: for tests, and for serving a build from disk.
func WithFS(fsys fs.FS) Option { return func(h *Hub) { h.fsys = fsys } }

// Hub is the web app's handler. It is safe for concurrent use; its files
// are read once, by New.
type Hub struct {
	fsys  fs.FS
	index []byte // nil when not built
	etag  string
	// files are the top-level files besides index.html, by name.
	files map[string][]byte
}

// New returns the hub over the embedded dist (or WithFS's). A dist
// without index.html is not an error: the hub then answers
// CodeNotBuilt.
func New(opts ...Option) (*Hub, error) {
	h := &Hub{files: map[string][]byte{}}
	for _, o := range opts {
		o(h)
	}
	if h.fsys == nil {
		sub, err := fs.Sub(embedded, "dist")
		if err != nil {
			return nil, err
		}
		h.fsys = sub
	}
	index, err := fs.ReadFile(h.fsys, "index.html")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, nil
	case err != nil:
		return nil, err
	}
	sum := sha256.Sum256(index)
	h.index, h.etag = index, `"`+hex.EncodeToString(sum[:16])+`"`
	entries, err := fs.ReadDir(h.fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "index.html" || strings.HasPrefix(name, ".") {
			continue
		}
		b, err := fs.ReadFile(h.fsys, name)
		if err != nil {
			return nil, err
		}
		h.files[name] = b
	}
	return h, nil
}

// Built reports whether the web app was built into dist.
func (h *Hub) Built() bool { return h.index != nil }

// Routes are the GET patterns the hub answers, in gin's syntax: the app's
// routes, /assets/*filepath, and /<name> for each other top-level file of
// dist. The API registers those its own routes do not take.
func (h *Hub) Routes() []string {
	out := append(slices.Clone(AppRoutes), assetsRoute)
	for name := range h.files {
		out = append(out, "/"+name)
	}
	slices.Sort(out)
	return out
}

// ServeHTTP answers a GET or HEAD of one of Routes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	if h.index == nil {
		notBuilt(w)
		return
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/assets/"):
		// Only a clean path under assets/: no dot segments, no escape.
		name := strings.TrimPrefix(p, "/")
		if path.Clean(p) != p || !fs.ValidPath(name) {
			notFound(w)
			return
		}
		b, err := fs.ReadFile(h.fsys, name)
		if err != nil {
			notFound(w)
			return
		}
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
		serve(w, r, name, b)
	case h.files[strings.TrimPrefix(p, "/")] != nil:
		name := strings.TrimPrefix(p, "/")
		hd.Set("Cache-Control", "public, max-age=3600")
		serve(w, r, name, h.files[name])
	default:
		hd.Set("Cache-Control", "no-cache")
		hd.Set("ETag", h.etag)
		// The app is not to be framed by another site.
		hd.Set("Content-Security-Policy", "frame-ancestors 'none'; base-uri 'self'; object-src 'none'")
		hd.Set("X-Frame-Options", "DENY")
		serve(w, r, "index.html", h.index)
	}
}

// serve answers b as the file name: its type from the extension,
// conditional requests and ranges by http.ServeContent.
func serve(w http.ResponseWriter, r *http.Request, name string, b []byte) {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		w.Header().Set("Content-Type", t)
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Toolhost: the hub was not built</title></head>
<body><h1>The hub was not built</h1>
<p><code>` + CodeNotBuilt + `</code>: this binary was built without its web front end.
Run <code>make hub</code> (needs Node and npm), then build again.</p>
<p>The API is served as usual: <a href="/openapi.json">/openapi.json</a>, <code>/api/v1/tools</code>.</p>
</body></html>
`

// notBuilt answers CodeNotBuilt: 503, a page saying what to do.
func notBuilt(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Toolhost-Code", CodeNotBuilt)
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(notBuiltPage))
}

// notFound answers a missing asset: 404, plain text with CodeNotFound.
func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Toolhost-Code", CodeNotFound)
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(CodeNotFound + ": no such file of the hub\n"))
}

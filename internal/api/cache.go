package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// Conditional and compressed answers (issue 16 item 28): the registry
// documents — the catalogue, the tool list, descriptors, schemas, the
// contracts and /openapi.json — change only with the snapshot generation
// (or the binary), so they carry a strong ETag over their bytes and
// Cache-Control: no-cache (store, but revalidate: a new generation must
// be seen at once), and a request whose If-None-Match names the ETag gets
// 304 with no body. Every JSON answer of at least minGzipBytes is gzipped
// for a client that accepts it, with Vary: Accept-Encoding.

// minGzipBytes is the smallest JSON body that is compressed: below it the
// gzip framing costs more than it saves.
const minGzipBytes = 1024

// gzipWriters are the compressors of writeBody, reset per answer.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// writeBody writes body with status and contentType, gzipped when it is
// large enough and the request accepts gzip.
func writeBody(c *gin.Context, status int, contentType string, body []byte) {
	if len(body) < minGzipBytes {
		c.Data(status, contentType, body)
		return
	}
	c.Writer.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(c.Request.Header.Values("Accept-Encoding")) {
		c.Data(status, contentType, body)
		return
	}
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	gzipWriters.Put(zw)
	c.Header("Content-Encoding", "gzip")
	if etag := c.Writer.Header().Get("ETag"); etag != "" {
		c.Header("ETag", gzipETag(etag))
	}
	c.Data(status, contentType, buf.Bytes())
}

// acceptsGzip reports whether Accept-Encoding values take gzip (RFC 9110
// §12.5.3): gzip, x-gzip or * with a q above 0.
func acceptsGzip(values []string) bool {
	star := false
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			ok := true
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "q") {
					if q, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil && q <= 0 {
						ok = false
					}
				}
			}
			switch name {
			case "gzip", "x-gzip":
				return ok
			case "*":
				star = ok
			}
		}
	}
	return star
}

// gzipETag is the ETag of the gzipped representation of an answer whose
// identity ETag is etag: another representation, another strong tag.
func gzipETag(etag string) string {
	return strings.TrimSuffix(etag, `"`) + `-gz"`
}

// documentETag is the strong ETag of body.
func documentETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// notModified reports whether the request's If-None-Match names etag (or
// its gzip twin), with the weak comparison RFC 9110 §13.1.2 asks for.
func notModified(r *http.Request, etag string) bool {
	gz := gzipETag(etag)
	for _, v := range r.Header.Values("If-None-Match") {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag || tag == gz {
				return true
			}
		}
	}
	return false
}

// writeCached writes a registry document (a value encoded as writeJSON
// does, or raw bytes) with its ETag and Cache-Control; private is for an
// answer that depends on the caller's account (the seed-000 catalogue). A
// matching If-None-Match is answered 304 without a body.
func writeCached(c *gin.Context, contentType string, v any, private bool) {
	body, ok := v.([]byte)
	if !ok {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			writeJSON(c, http.StatusOK, contentType, v) // its internal_error answer
			return
		}
		body = bytes.TrimRight(buf.Bytes(), "\n")
	}
	etag := documentETag(body)
	h := c.Writer.Header()
	if private {
		h.Set("Cache-Control", "private, no-cache")
	} else {
		h.Set("Cache-Control", "public, no-cache")
	}
	if notModified(c.Request, etag) {
		if len(body) >= minGzipBytes {
			h.Add("Vary", "Accept-Encoding")
		}
		h.Set("ETag", etag)
		c.Status(http.StatusNotModified)
		c.Writer.WriteHeaderNow()
		return
	}
	h.Set("ETag", etag)
	writeBody(c, http.StatusOK, contentType+"; charset=utf-8", body)
}

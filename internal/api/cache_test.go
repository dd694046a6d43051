package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
)

// The registry documents carry a strong ETag and Cache-Control, answer a
// matching If-None-Match with 304 and no body, and every large JSON
// answer is gzipped for a client that accepts it, with Vary:
// Accept-Encoding (issue 16 item 28).
func TestConditionalAndGzip(t *testing.T) {
	r := startHygiene(t)
	_, body := r.do("GET", Prefix+"/tools", false, "Accept-Encoding", "identity")
	var list contracts.ToolList
	if err := json.Unmarshal(body, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools list: %v %s", err, body)
	}
	id := list.Tools[0].ID
	tests := []struct {
		name, path, cache string
		auth              bool
	}{
		{"tool list", Prefix + "/tools", "public, no-cache", false},
		{"descriptor", Prefix + "/tools/" + id, "public, no-cache", false},
		{"schema", Prefix + "/tools/" + id + "/schema", "public, no-cache", false},
		{"contract", contracts.Route + contracts.ToolV1 + ".json", "public, no-cache", false},
		{"openapi", "/openapi.json", "public, no-cache", false},
		{"catalogue", Prefix + "/tools/catalog", "private, no-cache", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, plainBody := r.do("GET", tt.path, tt.auth, "Accept-Encoding", "identity")
			etag := plain.Header.Get("ETag")
			if plain.StatusCode != 200 || etag == "" || !strings.HasPrefix(etag, `"`) || plain.Header.Get("Cache-Control") != tt.cache {
				t.Fatalf("%d, ETag %q, Cache-Control %q\n%.200s", plain.StatusCode, etag, plain.Header.Get("Cache-Control"), plainBody)
			}
			if plain.Header.Get("Content-Encoding") != "" {
				t.Errorf("identity asked, Content-Encoding %q", plain.Header.Get("Content-Encoding"))
			}
			again, againBody := r.do("GET", tt.path, tt.auth, "Accept-Encoding", "identity", "If-None-Match", `"other", `+etag)
			if again.StatusCode != http.StatusNotModified || len(againBody) != 0 || again.Header.Get("ETag") != etag {
				t.Errorf("If-None-Match: %d, %d bytes, ETag %q", again.StatusCode, len(againBody), again.Header.Get("ETag"))
			}
			if stale, _ := r.do("GET", tt.path, tt.auth, "If-None-Match", `"stale"`, "Accept-Encoding", "identity"); stale.StatusCode != 200 {
				t.Errorf("a stale If-None-Match: %d", stale.StatusCode)
			}
			if len(plainBody) < minGzipBytes {
				return
			}
			if !strings.Contains(strings.Join(plain.Header.Values("Vary"), ","), "Accept-Encoding") {
				t.Errorf("Vary %q", plain.Header.Values("Vary"))
			}
			gz, gzBody := r.do("GET", tt.path, tt.auth, "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
			if gz.Header.Get("Content-Encoding") != "gzip" || len(gzBody) >= len(plainBody) {
				t.Fatalf("gzip asked: Content-Encoding %q, %d bytes of %d", gz.Header.Get("Content-Encoding"), len(gzBody), len(plainBody))
			}
			zr, err := gzip.NewReader(bytes.NewReader(gzBody))
			if err != nil {
				t.Fatal(err)
			}
			unzipped, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(unzipped, plainBody) {
				t.Errorf("the gzipped body is not the identity body: %v", err)
			}
			if gz.Header.Get("ETag") == etag || gz.Header.Get("ETag") == "" {
				t.Errorf("the gzipped representation's ETag %q (identity %q)", gz.Header.Get("ETag"), etag)
			}
			if nm, _ := r.do("GET", tt.path, tt.auth, "Accept-Encoding", "gzip", "If-None-Match", gz.Header.Get("ETag")); nm.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match of the gzip ETag: %d", nm.StatusCode)
			}
			if refused, _ := r.do("GET", tt.path, tt.auth, "Accept-Encoding", "gzip;q=0"); refused.Header.Get("Content-Encoding") != "" {
				t.Errorf("gzip;q=0 got Content-Encoding %q", refused.Header.Get("Content-Encoding"))
			}
		})
	}
}

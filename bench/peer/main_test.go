package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestRunHash checks the peer's answers over a real loopback server: the
// digest of a known text, byte for byte the shape Toolhost writes (the id
// aside), a fresh id per answer, and the refusals.
func TestRunHash(t *testing.T) {
	srv := httptest.NewServer(newEngine())
	defer srv.Close()
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/v1/tools/hash/run", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	id := regexp.MustCompile(`^\{"id":"([0-9a-f]{32})",`)
	const fox = `{"input":{"operation":"digest","text":"The quick brown fox jumps over the lazy dog","algorithm":"sha256"}}`
	const want = `","tool":"hash","status":"succeeded","result":{"digest":"d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"}}`
	seen := map[string]bool{}
	for range 2 {
		status, body := post(fox)
		m := id.FindStringSubmatch(body)
		if status != http.StatusOK || m == nil || body[len(m[0])-2:] != want {
			t.Fatalf("answer = %d %s, want 200 {\"id\":\"<hex>%s", status, body, want)
		}
		if seen[m[1]] {
			t.Errorf("id %s given twice", m[1])
		}
		seen[m[1]] = true
	}
	for _, tt := range []struct {
		name, body string
		status     int
	}{
		{"not JSON", `{"input":`, http.StatusBadRequest},
		{"another algorithm", `{"input":{"operation":"digest","text":"abc","algorithm":"md5"}}`, http.StatusUnprocessableEntity},
		{"no text", `{"input":{"operation":"digest","algorithm":"sha256"}}`, http.StatusUnprocessableEntity},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if status, body := post(tt.body); status != tt.status {
				t.Errorf("status = %d (%s), want %d", status, body, tt.status)
			}
		})
	}
}

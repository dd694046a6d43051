package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
)

// doBody sends method path with body as JSON and returns the answer and
// its body.
func (r *hygieneRig) doBody(method, path string, body []byte, header ...string) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp, b
}

// The problem documents of issue 16 item 29: titles are RFC 9110's
// current reason phrases, a refusal has one type URI whichever route (and
// dialect) answers it — the 401 of a seed-000 route and of an ADR-027
// route here, a bad token's 401 says error="invalid_token" (and a
// missing one's does not), and a wrong method on a known route is 405.
func TestProblemDocuments(t *testing.T) {
	r := startHygiene(t)
	type doc struct {
		Type, Title, Code string
		Status            int
	}
	decode := func(t *testing.T, resp *http.Response, body []byte) doc {
		t.Helper()
		var d doc
		if err := json.Unmarshal(body, &d); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Fatalf("%d %s: not a problem document: %v %s", resp.StatusCode, resp.Header.Get("Content-Type"), err, body)
		}
		if d.Status != resp.StatusCode {
			t.Errorf("status %d in a %d answer", d.Status, resp.StatusCode)
		}
		return d
	}
	big := []byte(`{"input":{"text":"` + strings.Repeat("a", 8<<20) + `"}}`)

	t.Run("413 title and its type", func(t *testing.T) {
		resp, body := r.doBody("POST", Prefix+"/tools/compute", big, "Authorization", "Bearer "+r.token)
		d := decode(t, resp, body)
		if d.Status != 413 || d.Title != "Content Too Large" {
			t.Errorf("%d %q, want 413 Content Too Large", d.Status, d.Title)
		}
		// The seed-000 code, the ADR-027 refusal's type.
		if d.Code != "payload_too_large" || d.Type != ProblemType+contracts.ProblemPayloadTooLarge {
			t.Errorf("code %s, type %s", d.Code, d.Type)
		}
	})

	t.Run("422 title", func(t *testing.T) {
		if got := problemTitle(http.StatusUnprocessableEntity); got != "Unprocessable Content" {
			t.Errorf("422 title %q", got)
		}
	})

	t.Run("401 challenges", func(t *testing.T) {
		tests := []struct {
			name, path, authorization, challenge string
		}{
			{"seed-000 without a token", Prefix + "/tools/catalog", "", `Bearer realm="toolhost"`},
			{"seed-000 with a bad token", Prefix + "/tools/catalog", "Bearer nope", `Bearer realm="toolhost", error="invalid_token"`},
			{"seed-000 with a malformed header", Prefix + "/tools/catalog", "Basic Zm9vOmJhcg==", `Bearer realm="toolhost", error="invalid_token"`},
			{"ADR-027 with a bad token", Prefix + "/tools", "Bearer nope", `Bearer realm="toolhost", error="invalid_token"`},
		}
		types := map[string]bool{}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var header []string
				if tt.authorization != "" {
					header = []string{"Authorization", tt.authorization}
				}
				resp, body := r.do("GET", tt.path, false, header...)
				d := decode(t, resp, body)
				if d.Status != 401 || resp.Header.Get("WWW-Authenticate") != tt.challenge {
					t.Errorf("%d, WWW-Authenticate %q; want 401, %q", d.Status, resp.Header.Get("WWW-Authenticate"), tt.challenge)
				}
				types[d.Type] = true
			})
		}
		if len(types) != 1 {
			t.Errorf("the 401s have %d types: %v", len(types), types)
		}
	})

	t.Run("405 on known routes", func(t *testing.T) {
		for _, tt := range []struct{ method, path string }{
			{"GET", Prefix + "/jobs"},
			{"DELETE", Prefix + "/jobs/x"},
			{"GET", Prefix + "/jobs/x/cancel"},
			{"GET", Prefix + "/tools/compute"},
			{"POST", Prefix + "/tools"},
			{"POST", "/openapi.json"},
			{"PUT", contracts.Route + contracts.RunV1 + ".json"},
		} {
			resp, body := r.do(tt.method, tt.path, false)
			if d := decode(t, resp, body); d.Status != 405 || resp.Header.Get("Allow") == "" || d.Title != "Method Not Allowed" {
				t.Errorf("%s %s: %d %q, Allow %q", tt.method, tt.path, d.Status, d.Title, resp.Header.Get("Allow"))
			}
		}
	})
}

package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/toolhost/toolhost/internal/server"
)

// /openapi.json names the cookies this server reads (serve
// --session-cookie), not the defaults: a generated client that sends the
// documented cookie is recognised.
func TestOpenAPINamesConfiguredCookies(t *testing.T) {
	r := startConfigured(t, nil, false, func(c *server.Config) { c.SessionCookie = "hub_session" })
	status, _, body := r.do("GET", "/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("/openapi.json: %d", status)
	}
	var doc struct {
		Components struct {
			SecuritySchemes map[string]struct {
				In, Name string
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Components.SecuritySchemes["sessionCookie"]; s.In != "cookie" || s.Name != "hub_session" {
		t.Errorf("sessionCookie scheme = %+v, want the cookie hub_session", s)
	}
	if s := doc.Components.SecuritySchemes["tokenCookie"]; s.Name != "ov_token" {
		t.Errorf("tokenCookie scheme = %+v, want the default ov_token", s)
	}
}

package run

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/guard"
)

// An anonymous caller owns its jobs under an HMAC of its key, never its
// address; a signed-in caller under its principal key.
func TestJobOwner(t *testing.T) {
	a := &App{ownerKey: []byte("0123456789abcdef0123456789abcdef")}
	owner := func(caller string) string { return a.owner(Origin{Caller: guard.Caller{Key: caller}}) }
	tests := []struct {
		name, caller string
		same         bool
	}{
		{name: "signed in", caller: "user:1", same: true},
		{name: "anonymous IPv4", caller: "anonymous:192.0.2.7"},
		{name: "anonymous IPv6", caller: "anonymous:2001:db8::1"},
		{name: "anonymous guard key", caller: "ip:192.0.2.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := owner(tt.caller)
			if tt.same {
				if got != tt.caller {
					t.Errorf("owner %q, want %q", got, tt.caller)
				}
				return
			}
			addr := strings.TrimPrefix(strings.TrimPrefix(tt.caller, anonymousOwner), "ip:")
			if !strings.HasPrefix(got, anonymousOwner) || strings.Contains(got, addr) || got != owner(tt.caller) {
				t.Errorf("owner %q of %q", got, tt.caller)
			}
		})
	}
	if owner("anonymous:192.0.2.7") == owner("anonymous:192.0.2.8") {
		t.Error("two addresses share an owner")
	}
}

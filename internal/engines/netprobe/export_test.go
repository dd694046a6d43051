package netprobe

import (
	"net"
	"testing"
)

// SetResolver points every probe at r until the test ends. Tests that use
// it must not run in parallel.
func SetResolver(t testing.TB, r *net.Resolver) {
	old := defaultResolver
	defaultResolver = r
	t.Cleanup(func() { defaultResolver = old })
}

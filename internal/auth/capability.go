package auth

import (
	"fmt"
	"regexp"
	"slices"
)

// CapabilityNetProbe lets a token run the network probe tools (port_check,
// tcp_ping, dns_lookup, tls_check, http_headers), which send traffic to a
// host the caller chooses. It is only ever granted explicitly, to one token
// at a time: never by default, never to a sandbox token.
const CapabilityNetProbe = "tools.net.probe"

// known are the capabilities a token may be granted, sorted.
var known = []string{CapabilityNetProbe}

var capabilityName = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,63}$`)

// Capabilities returns the capability names this package knows, sorted. The
// slice is the caller's.
func Capabilities() []string { return slices.Clone(known) }

// CheckCapability returns nil when name is a capability a token may be
// granted, an error wrapping ErrInvalidCapability when name is malformed,
// and one wrapping ErrUnknownCapability when it is well formed but unknown.
// The error names the capability.
func CheckCapability(name string) error {
	if !capabilityName.MatchString(name) {
		return fmt.Errorf("%w: %q", ErrInvalidCapability, name)
	}
	if _, found := slices.BinarySearch(known, name); !found {
		return fmt.Errorf("%w: %q", ErrUnknownCapability, name)
	}
	return nil
}

// normalizeCapabilities checks every name and returns them sorted without
// repeats; nil when there are none.
func normalizeCapabilities(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	for _, n := range names {
		if err := CheckCapability(n); err != nil {
			return nil, err
		}
	}
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out), nil
}

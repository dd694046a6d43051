package netprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"toolhost/internal/native"
	"toolhost/internal/toolerr"
)

// AllowEnv is the environment variable holding the operator's allow-list:
// comma-separated CIDRs ("127.0.0.0/8,10.1.0.0/16") whose addresses the
// probes may reach although they are in a refused range. The worker reads
// it at each item; a worker started by the supervisor sees it only when
// the server passes it on (supervisor.Config.Env). The metadata addresses
// are refused even when it covers them.
const AllowEnv = "TOOLHOST_PROBE_ALLOW"

// metadata are the cloud metadata addresses, refused whatever the
// allow-list says: AWS, GCP, Azure, OpenStack and DigitalOcean
// (169.254.169.254), AWS over IPv6 (fd00:ec2::254), AWS ECS task metadata
// (169.254.170.2), Oracle Cloud (192.0.0.192) and Alibaba Cloud
// (100.100.100.200).
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("192.0.0.192"),
	netip.MustParseAddr("100.100.100.200"),
}

// refusedRange is a range of addresses the probes refuse by default, with
// the reason a refusal gives.
type refusedRange struct {
	prefix netip.Prefix
	reason string
}

// refusedRanges are the ranges the netip predicates do not cover: shared
// address space, reserved, benchmarking and documentation ranges, and the
// IPv6 prefixes that embed or translate IPv4 addresses.
var refusedRanges = []refusedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "a reserved address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a translated (NAT64) address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a translated (NAT64) address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a tunnelled (Teredo) address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("2002::/16"), "a tunnelled (6to4) address"},
}

// guard decides which addresses a probe may reach.
type guard struct {
	allow []netip.Prefix
}

// guardFromEnv returns the guard of the allow-list in AllowEnv. A list
// that does not parse is the operator's fault: execution_failed, with a
// message that names the variable, not its value.
func guardFromEnv() (*guard, error) {
	allow, err := parseAllowList(os.Getenv(AllowEnv))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", AllowEnv, err)
	}
	return &guard{allow: allow}, nil
}

// parseAllowList parses comma-separated CIDRs; spaces around each are
// ignored and an empty list allows nothing.
func parseAllowList(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("entry %d is not a CIDR: %w", i, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// check reports whether a probe may connect to ip and, when it may not,
// the reason ("a loopback address"). An IPv4-mapped IPv6 address is
// checked as its IPv4 address; a metadata address is refused even when the
// allow-list covers it. check is safe for concurrent use.
func (g *guard) check(ip netip.Addr) (reason string, ok bool) {
	ip = ip.Unmap().WithZone("")
	for _, m := range metadata {
		if ip == m {
			return "a cloud metadata address", false
		}
	}
	for _, p := range g.allow {
		if p.Contains(ip) {
			return "", true
		}
	}
	switch {
	case !ip.IsValid():
		return "not an address", false
	case ip.IsUnspecified():
		return "an unspecified address", false
	case ip.IsLoopback():
		return "a loopback address", false
	case ip.IsPrivate():
		return "a private address", false
	case ip.IsLinkLocalUnicast():
		return "a link-local address", false
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address", false
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "a broadcast address", false
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) {
			return r.reason, false
		}
	}
	if !ip.IsGlobalUnicast() {
		return "not a global unicast address", false
	}
	return "", true
}

// refusal is the tool error of a target the guard refuses. It names the
// kind of address, never the address or the name.
func refusal(reason string) *toolerr.Error {
	return refuse(toolerr.InvalidParameters, "the target is refused: it resolves to %s; probes reach public addresses only", reason)
}

// probeContext is what a probe runs with: the item's native context (for
// checkpoints, from the probe's own goroutine), a context that ends with
// the engine window, and the guard.
type probeContext struct {
	native   *native.Context
	ctx      context.Context
	deadline time.Time
	guard    *guard
	resolver *net.Resolver
}

func newProbeContext(ctx *native.Context, w native.Window, g *guard) (*probeContext, context.CancelFunc) {
	c, cancel := context.WithDeadline(ctx.Context(), w.Deadline)
	return &probeContext{native: ctx, ctx: c, deadline: w.Deadline, guard: g, resolver: net.DefaultResolver}, cancel
}

// target is a resolved, checked target: the name the caller gave (for SNI
// and the Host header) and the one address that is dialed.
type target struct {
	host string
	addr netip.Addr
}

// resolve resolves host (a name or an IP literal) and returns the first
// address the guard allows. It refuses a host none of whose addresses is
// allowed, naming the reason of the first refused one.
func (pc *probeContext) resolve(host string) (target, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if err := checkHost(host); err != nil {
		return target{}, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return target{}, refuse(toolerr.InvalidParameters, "host: an address with a zone is refused")
		}
		addrs = []netip.Addr{ip}
	} else {
		addrs, err = pc.resolver.LookupNetIP(pc.ctx, "ip", host)
		if err != nil {
			return target{}, lookupError(pc, err)
		}
	}
	reason := "no address"
	for i, a := range addrs {
		r, ok := pc.guard.check(a)
		if ok {
			return target{host: host, addr: a.Unmap()}, nil
		}
		if i == 0 {
			reason = r
		}
	}
	return target{}, refusal(reason)
}

// checkHost refuses a host that is neither an IP address nor a DNS name
// of letters, digits, hyphens and underscores in labels of at most 63
// bytes, 253 bytes in all.
func checkHost(host string) error {
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if host == "" || len(host) > 253 {
		return refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
			}
		}
	}
	return nil
}

// lookupError maps a resolver error: a name that does not exist is the
// caller's (invalid_parameters), a window that ran out execution_limit,
// anything else (no network, a failing server) execution_failed.
func lookupError(pc *probeContext, err error) error {
	if pc.ctx.Err() != nil {
		e := toolerr.New(toolerr.ExecutionLimit)
		e.Message = "the lookup did not finish within the engine window"
		return e
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return refuse(toolerr.InvalidParameters, "host: the name does not resolve")
	}
	if errors.As(err, &dnsErr) && dnsErr.IsTimeout {
		return refuse(toolerr.ExecutionFailed, "the name could not be resolved: the DNS server did not answer in time")
	}
	return refuse(toolerr.ExecutionFailed, "the name could not be resolved")
}

// dialer returns a dialer whose every connection is checked by the guard
// once more in its Control hook, on the address actually being connected.
func (pc *probeContext) dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: -1,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dialing %s: %w", address, errNotChecked)
			}
			if _, ok := pc.guard.check(ap.Addr()); !ok {
				return fmt.Errorf("dialing: %w", errNotChecked)
			}
			return nil
		},
	}
}

// errNotChecked is what the dialer's Control hook refuses a connection
// with: its address is not one the guard allows. resolve has checked the
// address already, so it means a bug.
var errNotChecked = errors.New("netprobe: the dialed address is refused")

// dial connects to t's address on port within timeout (and the window).
func (pc *probeContext) dial(ctx context.Context, t target, port int, timeout time.Duration) (net.Conn, error) {
	return pc.dialer(timeout).DialContext(ctx, "tcp", net.JoinHostPort(t.addr.String(), strconv.Itoa(port)))
}

// connState classifies a connect error: "closed" when the host answered
// with a reset (connection refused), "filtered" otherwise (a timeout, an
// unreachable host or network, no answer).
func connState(err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "closed"
	}
	return "filtered"
}

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

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// AllowEnv is the environment variable holding the operator's allow-list:
// comma-separated CIDRs or single addresses ("127.0.0.0/8,10.1.0.0/16,
// 2001:db8::1") whose addresses the probes may reach although they are in a
// refused range. The server checks it at startup ([ParseAllowList]) and
// refuses to start when it does not parse; the worker reads it again at
// each item (a worker started by the supervisor sees it only when the
// server passes it on, supervisor.Config.Env). An entry matches the address
// as dialed — an IPv4-mapped address as its IPv4 address — never an IPv4
// address reached through a translated or tunnelled IPv6 form, and the
// metadata addresses are refused even when an entry covers them.
const AllowEnv = "TOOLHOST_PROBE_ALLOW"

// metadata are the cloud metadata addresses, refused whatever the
// allow-list says, dialed directly or embedded in an IPv6 form: AWS, GCP,
// Azure, OpenStack and DigitalOcean (169.254.169.254), AWS over IPv6
// (fd00:ec2::254), AWS ECS task metadata (169.254.170.2), Oracle Cloud
// (192.0.0.192) and Alibaba Cloud (100.100.100.200).
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

// refused4 are the IPv4 ranges of the IANA IPv4 Special-Purpose Address
// Registry that are not globally reachable, plus multicast and the
// deprecated 6to4 relay anycast prefix, most specific first (the first
// match gives the reason). The registry's globally reachable entries
// (AS112 192.31.196.0/24 and 192.175.48.0/24, AMT 192.52.193.0/24) stay
// reachable; every other address of 192.0.0.0/24 (PCP and TURN anycast
// included) is refused with its block.
var refused4 = []refusedRange{
	{netip.MustParsePrefix("0.0.0.0/32"), "an unspecified address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "a reserved address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "a broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
}

// v6Range is a range of the IPv6 address space the guard treats apart: an
// IANA IPv6 special-purpose range, or a form that embeds an IPv4 address.
type v6Range struct {
	prefix netip.Prefix
	reason string
	// embedded returns the IPv4 address an address of the range carries;
	// nil when the range embeds none.
	embedded func(a [16]byte) netip.Addr
	// transit marks a form that reaches its embedded IPv4 address across
	// the Internet (6to4, the NAT64 well-known prefix): an address of the
	// range is allowed when its embedded IPv4 address is.
	transit bool
}

// low32 is the IPv4 address in the last 32 bits: IPv4-compatible,
// IPv4-translated (RFC 2765) and NAT64 well-known-prefix (RFC 6052)
// addresses.
func low32(a [16]byte) netip.Addr { return netip.AddrFrom4([4]byte(a[12:16])) }

// sixToFour is the IPv4 address in bits 16 to 48 of a 6to4 address
// (RFC 3056).
func sixToFour(a [16]byte) netip.Addr { return netip.AddrFrom4([4]byte(a[2:6])) }

// teredo is the client's IPv4 address of a Teredo address (RFC 4380): the
// last 32 bits, inverted.
func teredo(a [16]byte) netip.Addr {
	return netip.AddrFrom4([4]byte{^a[12], ^a[13], ^a[14], ^a[15]})
}

// special6 are the IPv6 ranges of the IANA IPv6 Special-Purpose Address
// Registry and the IPv6 address space the guard refuses, and the forms that
// embed IPv4, most specific first (the first match decides). IPv4-mapped
// addresses (::ffff:0:0/96) are not here: the guard checks them as the IPv4
// address they are dialed as. Every address outside 2000::/3 that no entry
// names is refused as reserved; the whole IETF protocol assignments block
// 2001::/23 is refused (Teredo, benchmarking, ORCHID and the anycast
// services in it), including its globally reachable entries, which no
// probe has a use for.
var special6 = []v6Range{
	{prefix: netip.MustParsePrefix("::/128"), reason: "an unspecified address"},
	{prefix: netip.MustParsePrefix("::1/128"), reason: "a loopback address"},
	{prefix: netip.MustParsePrefix("::ffff:0:0:0/96"), reason: "an IPv4-translated address", embedded: low32},
	{prefix: netip.MustParsePrefix("::/96"), reason: "an IPv4-compatible address", embedded: low32},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), reason: "a NAT64 address", embedded: low32, transit: true},
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), reason: "a local-use NAT64 address"},
	{prefix: netip.MustParsePrefix("100::/64"), reason: "a discard address"},
	{prefix: netip.MustParsePrefix("2001::/32"), reason: "a Teredo address", embedded: teredo},
	{prefix: netip.MustParsePrefix("2001:2::/48"), reason: "a benchmarking address"},
	{prefix: netip.MustParsePrefix("2001:10::/28"), reason: "an ORCHID address"},
	{prefix: netip.MustParsePrefix("2001:20::/28"), reason: "an ORCHID address"},
	{prefix: netip.MustParsePrefix("2001::/23"), reason: "a reserved address"},
	{prefix: netip.MustParsePrefix("2001:db8::/32"), reason: "a documentation address"},
	{prefix: netip.MustParsePrefix("2002::/16"), reason: "a 6to4 address", embedded: sixToFour, transit: true},
	{prefix: netip.MustParsePrefix("3fff::/20"), reason: "a documentation address"},
	{prefix: netip.MustParsePrefix("5f00::/16"), reason: "a segment routing (SRv6) address"},
	{prefix: netip.MustParsePrefix("fc00::/7"), reason: "a private address"},
	{prefix: netip.MustParsePrefix("fe80::/10"), reason: "a link-local address"},
	{prefix: netip.MustParsePrefix("fec0::/10"), reason: "a site-local address"},
	{prefix: netip.MustParsePrefix("ff00::/8"), reason: "a multicast address"},
}

// globalUnicast6 is the IPv6 global unicast space (RFC 4291, IANA IPv6
// Address Space): the rest is reserved or special.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// guard decides which addresses a probe may reach. It is safe for
// concurrent use.
type guard struct {
	allow []netip.Prefix
}

// guardFromEnv returns the guard of the allow-list in AllowEnv. A list
// that does not parse is the operator's fault (the server refuses to start
// with one): execution_failed, with a message that names the variable and
// the entry's position, not its value, which is the operator's, not the
// caller's, to read.
func guardFromEnv() (*guard, error) {
	allow, err := ParseAllowList(os.Getenv(AllowEnv))
	if err != nil {
		var ae *AllowListError
		n := 0
		if errors.As(err, &ae) {
			n = ae.Index + 1
		}
		return nil, native.Refuse(toolerr.ExecutionFailed, "the operator's allow-list %s does not parse (entry %d): no probe runs until it is fixed", AllowEnv, n)
	}
	return &guard{allow: allow}, nil
}

// AllowListError is the error of an allow-list entry that is neither an
// IP address nor a CIDR. It matches ErrAllowList with errors.Is.
type AllowListError struct {
	// Index is the entry's position in the list, from 0.
	Index int
	// Entry is the entry as written, spaces trimmed.
	Entry string
	// Err is the parser's error.
	Err error
}

func (e *AllowListError) Error() string {
	return fmt.Sprintf("%s entry %d (%q) is neither an IP address nor a CIDR: %v", AllowEnv, e.Index+1, e.Entry, e.Err)
}

// Is reports whether target is ErrAllowList.
func (e *AllowListError) Is(target error) bool { return target == ErrAllowList }

// Unwrap returns the parser's error.
func (e *AllowListError) Unwrap() error { return e.Err }

// ParseAllowList parses an allow-list: comma-separated CIDRs or single
// addresses (a /32 or /128), spaces around each ignored; an empty list
// allows nothing. A CIDR with host bits set is masked (10.1.2.3/16 is
// 10.1.0.0/16), an IPv4-mapped entry (::ffff:10.0.0.0/104) is its IPv4
// prefix, and an address with a zone is refused. The error is an
// *AllowListError naming the first bad entry.
func ParseAllowList(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := parseAllowEntry(f)
		if err != nil {
			return nil, &AllowListError{Index: i, Entry: f, Err: err}
		}
		out = append(out, p)
	}
	return out, nil
}

// parseAllowEntry parses one allow-list entry.
func parseAllowEntry(f string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(f, "/") {
		var err error
		if p, err = netip.ParsePrefix(f); err != nil {
			return netip.Prefix{}, err
		}
	} else {
		a, err := netip.ParseAddr(f)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a.Zone() != "" {
			return netip.Prefix{}, errors.New("an address with a zone")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// check reports whether a probe may connect to ip and, when it may not,
// the reason ("a loopback address", "an IPv4-compatible address embedding
// a link-local address"). check is the one decision of the package: it
// runs on every address resolve picks and again, in the dialer's Control
// hook, on the address actually connected to.
//
// In order: an IPv4-mapped address is checked as its IPv4 address (it is
// dialed as one); a metadata address, dialed or embedded in an IPv6 form,
// is refused; an address an allow-list entry covers is allowed; an IPv4
// address is refused in a refused4 range; an IPv6 address is refused in a
// special6 range — except 6to4 and NAT64 well-known-prefix addresses,
// allowed when their embedded IPv4 address passes the IPv4 ranges (the
// allow-list does not apply to it) — and outside 2000::/3.
func (g *guard) check(ip netip.Addr) (reason string, ok bool) {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return "not an address", false
	}
	ip = ip.Unmap()
	var r *v6Range
	var v4 netip.Addr
	if ip.Is6() {
		r = lookup6(ip)
		if r != nil && r.embedded != nil {
			v4 = r.embedded(ip.As16())
		}
	}
	if isMetadata(ip) || isMetadata(v4) {
		return "a cloud metadata address", false
	}
	for _, p := range g.allow {
		if p.Contains(ip) {
			return "", true
		}
	}
	if ip.Is4() {
		if reason, refused := check4(ip); refused {
			return reason, false
		}
		return "", true
	}
	if r == nil {
		if !globalUnicast6.Contains(ip) {
			return "a reserved address", false
		}
		return "", true
	}
	if v4.IsValid() {
		if reason, refused := check4(v4); refused {
			return r.reason + " embedding " + reason, false
		}
	}
	if r.transit {
		return "", true
	}
	return r.reason, false
}

// check4 returns the reason of the refused4 range holding ip, if any.
func check4(ip netip.Addr) (reason string, refused bool) {
	for _, r := range refused4 {
		if r.prefix.Contains(ip) {
			return r.reason, true
		}
	}
	return "", false
}

// lookup6 returns the first special6 range holding ip, or nil.
func lookup6(ip netip.Addr) *v6Range {
	for i := range special6 {
		if special6[i].prefix.Contains(ip) {
			return &special6[i]
		}
	}
	return nil
}

// isMetadata reports whether ip is a cloud metadata address.
func isMetadata(ip netip.Addr) bool {
	for _, m := range metadata {
		if ip == m {
			return true
		}
	}
	return false
}

// refusal is the tool error of a target the guard refuses. It names the
// kind of address, never the address or the name.
//
// Its one issue, target_refused (run.IssueTargetRefused), lets the
// application layer record the run as one that trips an abuse rule
// without reading the message.
func refusal(reason string) *toolerr.Error {
	e := native.Refuse(toolerr.InvalidParameters, "the target is refused: it resolves to %s; probes reach public addresses only", reason)
	e.Issues, e.IssueCount = []toolerr.Issue{toolerr.NewIssue(IssueTargetRefused)}, 1
	return e
}

// IssueTargetRefused is the issue code of a refused target; the same
// string as run.IssueTargetRefused (the engines do not import run).
const IssueTargetRefused = "target_refused"

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
	return &probeContext{native: ctx, ctx: c, deadline: w.Deadline, guard: g, resolver: defaultResolver}, cancel
}

// defaultResolver is the resolver of every probe: the host's. The package's
// tests point it at a DNS server of their own on loopback (export_test.go).
var defaultResolver = net.DefaultResolver

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
			return target{}, native.Refuse(toolerr.InvalidParameters, "host: an address with a zone is refused")
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
		return native.Refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return native.Refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
		}
		for _, c := range []byte(label) {
			if plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'; !plain {
				return native.Refuse(toolerr.InvalidParameters, "host: not a DNS name or an IP address")
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
		return native.Refuse(toolerr.InvalidParameters, "host: the name does not resolve")
	}
	if errors.As(err, &dnsErr) && dnsErr.IsTimeout {
		return native.Refuse(toolerr.ExecutionFailed, "the name could not be resolved: the DNS server did not answer in time")
	}
	return native.Refuse(toolerr.ExecutionFailed, "the name could not be resolved")
}

// dialer returns a dialer whose every connection is checked by the guard
// once more in its Control hook, on the address the socket is about to
// connect to: Control runs after socket(2) and before connect(2), so a
// refused address never gets a SYN, whatever name or path led to it.
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

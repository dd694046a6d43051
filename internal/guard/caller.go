package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// Tier is a caller's standing, lowest first: a higher tier gets a larger
// allowance. The zero value is [Anonymous].
type Tier int

// The tiers, lowest first.
const (
	// Anonymous is a caller with no credentials, keyed by client address.
	Anonymous Tier = iota
	// Session is a browser session cookie issued by the server.
	Session
	// User is an account token, as a bearer token or a cookie.
	User
	// App is a client-credentials token issued to an application.
	App
)

var tierNames = [...]string{Anonymous: "anonymous", Session: "session", User: "user", App: "app"}

// String returns the tier's name: anonymous, session, user or app.
func (t Tier) String() string {
	if t < Anonymous || t > App {
		return fmt.Sprintf("tier(%d)", int(t))
	}
	return tierNames[t]
}

// MarshalText encodes the tier as its name.
func (t Tier) MarshalText() ([]byte, error) {
	if t < Anonymous || t > App {
		return nil, fmt.Errorf("guard: unknown tier %d", int(t))
	}
	return []byte(tierNames[t]), nil
}

// UnmarshalText decodes a tier from its name.
func (t *Tier) UnmarshalText(b []byte) error {
	for i, n := range tierNames {
		if string(b) == n {
			*t = Tier(i)
			return nil
		}
	}
	return fmt.Errorf("guard: unknown tier %q", b)
}

// Caller is who a request comes from, resolved once per request by
// [Guard.Resolve]. It holds no raw credential.
type Caller struct {
	// Tier is the caller's standing.
	Tier Tier
	// Key is the quota key: "p:" and the principal for a token, "s:" and
	// the session for a session, "ip:" and the client address for an
	// anonymous caller (an IPv6 address by its /64, an IPv4-mapped IPv6
	// address as IPv4). Callers with equal keys share buckets.
	Key string
	// Principal is the user, app or session identifier; empty when
	// anonymous.
	Principal string
	// Capabilities are those the credential was granted, such as
	// tools.net.probe.
	Capabilities []string
	// Sandbox marks a sandbox app token, which has an allowance of its own.
	Sandbox bool
	// SignedIn marks a user resolved from the session cookie of a browser
	// that signed in with the user's token (docs/hub-auth.md): the routes
	// then check its state-changing requests for CSRF.
	SignedIn bool
	// IP is the client address as [ClientIP] derived it; the zero Addr when
	// the peer address could not be parsed. It is for the abuse log's HMAC
	// only: never store or log it raw.
	IP netip.Addr
}

// Has reports whether the caller holds the capability.
func (c Caller) Has(capability string) bool {
	return slices.Contains(c.Capabilities, capability)
}

// Identity is what a credential resolves to.
type Identity struct {
	// Tier is User or App for a token; Session for a session cookie, or
	// User for the cookie of a signed-in session.
	Tier Tier
	// Principal identifies the user, app or session; it must not be empty.
	Principal string
	// Capabilities granted to the token.
	Capabilities []string
	// Sandbox marks a sandbox app token.
	Sandbox bool
}

// Credentials resolves what a request presents. The auth package implements
// it; the guard never sees how tokens are stored. Both methods return an
// error (any error; the guard wraps it in [ErrInvalidCredentials]) for a
// credential that is unknown, malformed, expired or disabled, and an error
// wrapping [ErrUnavailable] when the store cannot answer now. They run on
// every request that presents a credential, so they should answer a known
// one from memory and bound their database statements.
type Credentials interface {
	// Token resolves an account or app token, from a bearer header or the
	// token cookie. The identity's tier must be User or App.
	Token(ctx context.Context, token string) (Identity, error)
	// Session resolves the value of the session cookie.
	Session(ctx context.Context, value string) (Identity, error)
}

// Presented is what a request presents to [Guard.Resolve]: its peer, its
// forwarding headers and its credentials, as the routes read them off the
// transport. The guard never sees the request itself.
type Presented struct {
	// Peer is the connection's remote address ("host:port").
	Peer string
	// ForwardedFor holds the X-Forwarded-For header lines, in order;
	// RealIP the X-Real-IP header. Both are believed only from a trusted
	// peer (see [ClientIP]).
	ForwardedFor []string
	RealIP       string
	// Authorization is the Authorization header; empty when absent.
	Authorization string
	// Cookie returns the value of the named cookie, "" when absent; nil
	// when the request has none.
	Cookie func(name string) string
}

// cookie returns the named cookie of p, "" when there is none.
func (p Presented) cookie(name string) string {
	if name == "" || p.Cookie == nil {
		return ""
	}
	return p.Cookie(name)
}

// Resolve derives the caller of a request that presents p. Credentials are
// tried in order: an "Authorization: Bearer" header, the token cookie, the
// session cookie; none gives an anonymous caller keyed by [ClientIP],
// without calling creds. A credential that does not resolve is an error
// wrapping [ErrInvalidCredentials] (the API answers 401), never a silent
// downgrade to anonymous; one the store could not check now is creds'
// error wrapping [ErrUnavailable] (503). On an error the Caller holds only
// the client address, for the abuse log. creds may be nil, in which case
// every request is anonymous. Resolve is safe for concurrent use.
func (g *Guard) Resolve(ctx context.Context, p Presented, creds Credentials) (Caller, error) {
	ip := ClientIP(p, g.cfg.Trusted)
	c := Caller{Tier: Anonymous, Key: "ip:" + AddrKey(ip), IP: ip}
	if creds == nil {
		return c, nil
	}
	var (
		id      Identity
		err     error
		session bool
	)
	switch {
	case p.Authorization != "":
		tok, ok := Bearer(p.Authorization)
		if !ok {
			return Caller{IP: ip}, fmt.Errorf("%w: malformed Authorization header", ErrInvalidCredentials)
		}
		id, err = creds.Token(ctx, tok)
	case p.cookie(g.cfg.TokenCookie) != "":
		id, err = creds.Token(ctx, p.cookie(g.cfg.TokenCookie))
	case p.cookie(g.cfg.SessionCookie) != "":
		session = true
		id, err = creds.Session(ctx, p.cookie(g.cfg.SessionCookie))
	default:
		return c, nil
	}
	switch {
	case errors.Is(err, ErrUnavailable):
		return Caller{IP: ip}, err
	case err != nil:
		return Caller{IP: ip}, fmt.Errorf("%w: %w", ErrInvalidCredentials, err)
	}
	if id.Principal == "" {
		return Caller{IP: ip}, fmt.Errorf("%w: credential has no principal", ErrInvalidCredentials)
	}
	switch {
	case session && id.Tier == User:
		// A signed-in session is its user's caller, keyed as the user's
		// tokens are, so that they share the user's allowance.
		c.Tier, c.Key, c.SignedIn = User, "p:"+id.Principal, true
	case session:
		c.Tier, c.Key = Session, "s:"+id.Principal
	case id.Tier == User || id.Tier == App:
		c.Tier, c.Key = id.Tier, "p:"+id.Principal
	default:
		return Caller{IP: ip}, fmt.Errorf("%w: token resolved to tier %s", ErrInvalidCredentials, id.Tier)
	}
	c.Principal = id.Principal
	c.Capabilities = slices.Clone(id.Capabilities)
	c.Sandbox = id.Sandbox && id.Tier == App && !session
	return c, nil
}

// Bearer returns the token of an Authorization header value of the Bearer
// scheme (RFC 6750 §2.1; the scheme is case-insensitive and one or more
// spaces may follow it, RFC 9110 §11.4). The token is one run of visible
// ASCII: a header with anything after it, or a control or non-ASCII byte,
// is malformed. It is the one bearer parser of the process.
func Bearer(h string) (string, bool) {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimLeft(rest, " ")
	if tok == "" {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] >= 0x7f {
			return "", false
		}
	}
	return tok, true
}

// TrustedPeer reports whether the connection's remote address peer
// ("host:port") is one of the trusted proxies, whose forwarding headers
// (X-Forwarded-For, X-Request-Id) the process believes.
func (g *Guard) TrustedPeer(peer string) bool {
	a := parseAddr(peer)
	return a.IsValid() && isTrusted(a, g.cfg.Trusted)
}

// ClientIP returns the client address of a request that presents p. The peer is the
// answer unless it lies in one of the trusted proxy prefixes; none are
// trusted by default. From a trusted peer, X-Forwarded-For is read right to
// left across all its header lines, skipping entries that are themselves
// trusted proxies: the first entry that is not trusted is the address the
// nearest untrusted hop connected from, and is the answer. Entries left of
// it were written by the client and are never used. When a trusted peer
// sent no X-Forwarded-For, its X-Real-IP is used; when an entry does not
// parse, the last trusted hop is the answer. Addresses are returned
// unmapped (IPv4-mapped IPv6 as IPv4) and without zone. The zero Addr means
// the peer address did not parse.
func ClientIP(p Presented, trusted []netip.Prefix) netip.Addr {
	peer := parseAddr(p.Peer)
	if !peer.IsValid() || !isTrusted(peer, trusted) {
		return peer
	}
	last := peer
	xff := p.ForwardedFor
	if len(xff) == 0 {
		if a := parseAddr(p.RealIP); a.IsValid() {
			return a
		}
		return peer
	}
	var entries []string
	for _, line := range xff {
		entries = append(entries, strings.Split(line, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		a := parseAddr(entries[i])
		if !a.IsValid() {
			return last
		}
		if !isTrusted(a, trusted) {
			return a
		}
		last = a
	}
	return last
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) || (p.Addr().Is4In6() && netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0)).Contains(a)) {
			return true
		}
	}
	return false
}

// parseAddr parses "addr", "addr:port", "[v6]:port" or "[v6]", unmapped and
// without zone; the zero Addr when it does not parse.
func parseAddr(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// AddrKey returns the quota key of a client address: an IPv4 address (or
// IPv4-mapped IPv6 address) as dotted IPv4, an IPv6 address as its /64
// prefix, "unknown" for the zero Addr. Addresses rotating inside one /64
// share the key.
func AddrKey(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

// ParsePrefixes parses a comma-separated list of CIDR prefixes or bare
// addresses (as for --trusted-proxy); a bare address is a single host.
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("parsing trusted proxy %q: %w", f, err)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

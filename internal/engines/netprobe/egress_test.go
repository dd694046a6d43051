package netprobe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/native"
)

// The guard's table: every IANA special-purpose range of both families,
// every IPv6 form that embeds IPv4 (checked on the embedded address too),
// the metadata addresses however they are written, and public addresses
// that must pass.
func TestGuardCheck(t *testing.T) {
	loopback := &guard{allow: mustAllow(t, "127.0.0.0/8")}
	everything := &guard{allow: mustAllow(t, "0.0.0.0/0, ::/0")}
	tests := []struct {
		name, addr string
		g          *guard
		ok         bool
		reason     string
	}{
		// Public addresses pass, in every form that reaches them.
		{name: "public IPv4", addr: "93.184.215.14", ok: true},
		{name: "Google DNS", addr: "8.8.8.8", ok: true},
		{name: "Cloudflare DNS", addr: "1.1.1.1", ok: true},
		{name: "public IPv6", addr: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", ok: true},
		{name: "Google DNS IPv6", addr: "2001:4860:4860::8888", ok: true},
		{name: "IPv4-mapped public", addr: "::ffff:8.8.8.8", ok: true},
		{name: "6to4 of a public IPv4", addr: "2002:808:808::1", ok: true},
		{name: "NAT64 of a public IPv4", addr: "64:ff9b::8.8.8.8", ok: true},
		{name: "AS112 (globally reachable)", addr: "192.31.196.1", ok: true},
		{name: "just past 3fff::/20", addr: "3fff:1000::1", ok: true},
		{name: "just past 198.18.0.0/15", addr: "198.20.0.1", ok: true},

		// IPv4 special-purpose ranges.
		{name: "loopback", addr: "127.0.0.1", reason: "a loopback address"},
		{name: "loopback elsewhere in /8", addr: "127.1.2.3", reason: "a loopback address"},
		{name: "private 10/8", addr: "10.0.0.1", reason: "a private address"},
		{name: "private 172.16/12", addr: "172.31.255.255", reason: "a private address"},
		{name: "private 192.168/16", addr: "192.168.0.1", reason: "a private address"},
		{name: "link-local", addr: "169.254.1.1", reason: "a link-local address"},
		{name: "metadata", addr: "169.254.169.254", reason: "a cloud metadata address"},
		{name: "ECS metadata", addr: "169.254.170.2", reason: "a cloud metadata address"},
		{name: "Oracle metadata", addr: "192.0.0.192", reason: "a cloud metadata address"},
		{name: "Alibaba metadata", addr: "100.100.100.200", reason: "a cloud metadata address"},
		{name: "CGNAT", addr: "100.64.0.1", reason: "a shared (CGNAT) address"},
		{name: "CGNAT end", addr: "100.127.255.254", reason: "a shared (CGNAT) address"},
		{name: "unspecified", addr: "0.0.0.0", reason: "an unspecified address"},
		{name: "this network", addr: "0.1.2.3", reason: "a reserved address"},
		{name: "IETF protocol assignments", addr: "192.0.0.9", reason: "a reserved address"},
		{name: "6to4 relay anycast", addr: "192.88.99.1", reason: "a 6to4 relay address"},
		{name: "benchmarking", addr: "198.18.0.1", reason: "a benchmarking address"},
		{name: "benchmarking end", addr: "198.19.255.255", reason: "a benchmarking address"},
		{name: "TEST-NET-1", addr: "192.0.2.1", reason: "a documentation address"},
		{name: "TEST-NET-2", addr: "198.51.100.7", reason: "a documentation address"},
		{name: "TEST-NET-3", addr: "203.0.113.200", reason: "a documentation address"},
		{name: "multicast", addr: "224.0.0.1", reason: "a multicast address"},
		{name: "multicast SSDP", addr: "239.255.255.250", reason: "a multicast address"},
		{name: "reserved", addr: "240.0.0.1", reason: "a reserved address"},
		{name: "broadcast", addr: "255.255.255.255", reason: "a broadcast address"},

		// IPv6 special-purpose ranges and address space.
		{name: "IPv6 unspecified", addr: "::", reason: "an unspecified address"},
		{name: "IPv6 loopback", addr: "::1", reason: "a loopback address"},
		{name: "IPv6 unique local fc", addr: "fc00::1", reason: "a private address"},
		{name: "IPv6 unique local fd", addr: "fd12::1", reason: "a private address"},
		{name: "AWS IPv6 metadata", addr: "fd00:ec2::254", reason: "a cloud metadata address"},
		{name: "IPv6 link-local", addr: "fe80::1", reason: "a link-local address"},
		{name: "IPv6 link-local with a zone", addr: "fe80::1%eth0", reason: "a link-local address"},
		{name: "site-local", addr: "fec0::1", reason: "a site-local address"},
		{name: "site-local end", addr: "feff:ffff::1", reason: "a site-local address"},
		{name: "IPv6 multicast", addr: "ff02::1", reason: "a multicast address"},
		{name: "IPv6 global multicast", addr: "ff0e::1", reason: "a multicast address"},
		{name: "discard-only", addr: "100::1", reason: "a discard address"},
		{name: "past discard-only, reserved", addr: "100:0:0:1::1", reason: "a reserved address"},
		{name: "IPv6 benchmarking", addr: "2001:2::1", reason: "a benchmarking address"},
		{name: "ORCHID", addr: "2001:10::1", reason: "an ORCHID address"},
		{name: "ORCHIDv2", addr: "2001:20::1", reason: "an ORCHID address"},
		{name: "IETF protocol assignments (PCP anycast)", addr: "2001:1::1", reason: "a reserved address"},
		{name: "IPv6 documentation", addr: "2001:db8::1", reason: "a documentation address"},
		{name: "IPv6 documentation 3fff::/20", addr: "3fff:fff::1", reason: "a documentation address"},
		{name: "SRv6 SIDs", addr: "5f00::1", reason: "a segment routing (SRv6) address"},
		{name: "outside 2000::/3", addr: "4000::1", reason: "a reserved address"},
		{name: "reserved ::/8", addr: "::1:0:0:0:1", reason: "a reserved address"},

		// IPv4-mapped: checked as the IPv4 address it is dialed as.
		{name: "IPv4-mapped private", addr: "::ffff:10.0.0.1", reason: "a private address"},
		{name: "IPv4-mapped loopback", addr: "::ffff:127.0.0.1", reason: "a loopback address"},
		{name: "IPv4-mapped metadata", addr: "::ffff:169.254.169.254", reason: "a cloud metadata address"},
		// IPv4-compatible (deprecated): refused, naming the embedded kind.
		{name: "IPv4-compatible loopback", addr: "::127.0.0.1", reason: "an IPv4-compatible address embedding a loopback address"},
		{name: "IPv4-compatible loopback, hex", addr: "::7f00:1", reason: "an IPv4-compatible address embedding a loopback address"},
		{name: "IPv4-compatible metadata", addr: "::169.254.169.254", reason: "a cloud metadata address"},
		{name: "IPv4-compatible private", addr: "::10.0.0.1", reason: "an IPv4-compatible address embedding a private address"},
		{name: "IPv4-compatible public", addr: "::8.8.8.8", reason: "an IPv4-compatible address"},
		// IPv4-translated (RFC 2765).
		{name: "IPv4-translated metadata", addr: "::ffff:0:a9fe:a9fe", reason: "a cloud metadata address"},
		{name: "IPv4-translated private", addr: "::ffff:0:a00:1", reason: "an IPv4-translated address embedding a private address"},
		{name: "IPv4-translated loopback", addr: "::ffff:0:127.0.0.1", reason: "an IPv4-translated address embedding a loopback address"},
		{name: "IPv4-translated public", addr: "::ffff:0:808:808", reason: "an IPv4-translated address"},
		// NAT64 (RFC 6052 well-known prefix, RFC 8215 local use).
		{name: "NAT64 of loopback", addr: "64:ff9b::7f00:1", reason: "a NAT64 address embedding a loopback address"},
		{name: "NAT64 of metadata", addr: "64:ff9b::169.254.169.254", reason: "a cloud metadata address"},
		{name: "NAT64 of private", addr: "64:ff9b::192.168.1.1", reason: "a NAT64 address embedding a private address"},
		{name: "NAT64 local use", addr: "64:ff9b:1::808:808", reason: "a local-use NAT64 address"},
		// 6to4 (RFC 3056): the IPv4 address in bits 16 to 48.
		{name: "6to4 of private", addr: "2002:a00:1::1", reason: "a 6to4 address embedding a private address"},
		{name: "6to4 of loopback", addr: "2002:7f00:1::1", reason: "a 6to4 address embedding a loopback address"},
		{name: "6to4 of metadata", addr: "2002:a9fe:a9fe::1", reason: "a cloud metadata address"},
		{name: "6to4 of documentation", addr: "2002:c000:204::1", reason: "a 6to4 address embedding a documentation address"},
		{name: "6to4 of unspecified", addr: "2002::1", reason: "a 6to4 address embedding an unspecified address"},
		// Teredo (RFC 4380): the client's IPv4 address inverted in the
		// last 32 bits; refused whatever it embeds.
		{name: "Teredo RFC example (192.0.2.45)", addr: "2001:0:4136:e378:8000:63bf:3fff:fdd2", reason: "a Teredo address embedding a documentation address"},
		{name: "Teredo of loopback", addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", reason: "a Teredo address embedding a loopback address"},
		{name: "Teredo of metadata", addr: "2001:0:4136:e378:8000:63bf:5601:5601", reason: "a cloud metadata address"},
		{name: "Teredo of public", addr: "2001:0:4136:e378:8000:63bf:f7f7:f7f7", reason: "a Teredo address"},

		// The allow-list matches the address dialed, never an embedded one.
		{name: "allowed loopback", addr: "127.0.0.1", g: loopback, ok: true},
		{name: "allowed mapped loopback", addr: "::ffff:127.0.0.1", g: loopback, ok: true},
		{name: "allow-list does not cover ::1", addr: "::1", g: loopback, reason: "a loopback address"},
		{name: "allow-list does not cover compatible", addr: "::127.0.0.1", g: loopback, reason: "an IPv4-compatible address embedding a loopback address"},
		{name: "allow-list does not cover translated", addr: "::ffff:0:7f00:1", g: loopback, reason: "an IPv4-translated address embedding a loopback address"},
		{name: "allow-list does not cover NAT64", addr: "64:ff9b::7f00:1", g: loopback, reason: "a NAT64 address embedding a loopback address"},
		{name: "allow-list does not cover 6to4", addr: "2002:7f00:1::1", g: loopback, reason: "a 6to4 address embedding a loopback address"},
		{name: "IPv6 allow entry", addr: "fec0::1", g: &guard{allow: mustAllow(t, "fec0::/10")}, ok: true},
		{name: "mapped allow entry is its IPv4 prefix", addr: "127.0.0.1", g: &guard{allow: mustAllow(t, "::ffff:127.0.0.0/104")}, ok: true},
		{name: "allow-list never covers metadata", addr: "169.254.169.254", g: everything, reason: "a cloud metadata address"},
		{name: "allow-list never covers translated metadata", addr: "::ffff:0:a9fe:a9fe", g: everything, reason: "a cloud metadata address"},
		{name: "allow-list never covers 6to4 metadata", addr: "2002:a9fe:a9fe::1", g: everything, reason: "a cloud metadata address"},
		{name: "allow-list never covers IPv6 metadata", addr: "fd00:ec2::254", g: everything, reason: "a cloud metadata address"},
		{name: "allow everything", addr: "::127.0.0.1", g: everything, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.g
			if g == nil {
				g = &guard{}
			}
			reason, ok := g.check(netip.MustParseAddr(tt.addr))
			if ok != tt.ok || reason != tt.reason {
				t.Errorf("check(%s) = %q, %v; want %q, %v", tt.addr, reason, ok, tt.reason, tt.ok)
			}
		})
	}
}

// The zero address (what a failed parse would leave) is refused.
func TestGuardCheckInvalid(t *testing.T) {
	if reason, ok := (&guard{allow: mustAllow(t, "0.0.0.0/0,::/0")}).check(netip.Addr{}); ok || reason != "not an address" {
		t.Fatalf("check(invalid) = %q, %v", reason, ok)
	}
}

func mustAllow(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, err := ParseAllowList(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseAllowList(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		bad      int // the 1-based entry of the error, 0 when none
		entry    string
	}{
		{name: "empty", in: ""},
		{name: "one", in: "127.0.0.0/8", want: []string{"127.0.0.0/8"}},
		{name: "several with spaces", in: " 127.0.0.0/8 , ::1/128,,", want: []string{"127.0.0.0/8", "::1/128"}},
		{name: "masked", in: "10.1.2.3/16", want: []string{"10.1.0.0/16"}},
		{name: "bare IPv4 address", in: "127.0.0.1", want: []string{"127.0.0.1/32"}},
		{name: "bare IPv6 address", in: "[::1]", bad: 1, entry: "[::1]"},
		{name: "bare IPv6 address without brackets", in: "2001:db8::1", want: []string{"2001:db8::1/128"}},
		{name: "mapped prefix", in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{name: "name", in: "localhost", bad: 1, entry: "localhost"},
		{name: "second entry bad", in: "10.0.0.0/8, 10.0.0.0/33", bad: 2, entry: "10.0.0.0/33"},
		{name: "zone", in: "fe80::1%eth0", bad: 1, entry: "fe80::1%eth0"},
		{name: "semicolons", in: "10.0.0.0/8;127.0.0.0/8", bad: 1, entry: "10.0.0.0/8;127.0.0.0/8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAllowList(tt.in)
			if tt.bad > 0 {
				var ae *AllowListError
				if !errors.As(err, &ae) || !errors.Is(err, ErrAllowList) {
					t.Fatalf("err = %v, want an *AllowListError", err)
				}
				if ae.Index+1 != tt.bad || ae.Entry != tt.entry {
					t.Fatalf("error names entry %d %q, want %d %q", ae.Index+1, ae.Entry, tt.bad, tt.entry)
				}
				if msg := err.Error(); !strings.Contains(msg, AllowEnv) || !strings.Contains(msg, tt.entry) {
					t.Errorf("message %q does not name %s and the entry", msg, AllowEnv)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].String() != tt.want[i] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// acceptCounter is a TCP listener on 127.0.0.1 (and on ::1 at the same
// port where it can) that counts the connections it accepts.
type acceptCounter struct {
	port     int
	accepted atomic.Int64
}

func newAcceptCounter(t *testing.T) *acceptCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &acceptCounter{port: l.Addr().(*net.TCPAddr).Port}
	ls := []net.Listener{l}
	if l6, err := net.Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(c.port))); err == nil {
		ls = append(ls, l6)
	}
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				c.accepted.Add(1)
				conn.Close()
			}
		}()
	}
	t.Cleanup(func() {
		for _, l := range ls {
			l.Close()
		}
		wg.Wait()
	})
	return c
}

// refusedForms are literals of loopback, metadata and the other refused
// ranges in every IPv6 form that embeds IPv4, and the cases.
var refusedForms = []string{
	"127.0.0.1", "::1", "::ffff:127.0.0.1",
	"::127.0.0.1", "::7f00:1", "::ffff:0:127.0.0.1", "::ffff:0:7f00:1",
	"64:ff9b::127.0.0.1", "64:ff9b:1::7f00:1", "2002:7f00:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe",
	"::169.254.169.254", "::ffff:0:a9fe:a9fe", "::ffff:0:a00:1", "2002:a9fe:a9fe::1",
	"fec0::1", "2001:2::1", "fe80::1", "fc00::1", "100::1", "2001:db8::1", "3fff::1", "2001:20::1", "5f00::1",
	"0.0.0.0", "::", "198.18.0.1", "192.0.2.1", "100.64.0.1", "240.0.0.1", "192.88.99.1",
}

// The dialer's Control hook refuses every refused form, even one a probe
// did not resolve through resolve — the last line against a rebinding or
// a bug — before connect(2): the listener never accepts. With the
// allow-list covering 127.0.0.1, the plain and the mapped literal do
// connect, so the counter would see a connection that got through.
func TestDialerControlRefusesEveryForm(t *testing.T) {
	ac := newAcceptCounter(t)
	nctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), 8*time.Second)
	w, err := nctx.ClaimEngineWindow(0)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(g *guard, host string) error {
		pc, cancel := newProbeContext(nctx, w, g)
		defer cancel()
		c, err := pc.dialer(time.Second).DialContext(pc.ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(ac.port)))
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, host := range refusedForms {
		t.Run(host, func(t *testing.T) {
			if err := dial(&guard{}, host); !errors.Is(err, errNotChecked) {
				t.Fatalf("dial %s: err = %v, want errNotChecked", host, err)
			}
		})
	}
	loopback := &guard{allow: mustAllow(t, "127.0.0.0/8")}
	for _, host := range []string{"::127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::127.0.0.1", "2002:7f00:1::1"} {
		if err := dial(loopback, host); !errors.Is(err, errNotChecked) {
			t.Errorf("dial %s with 127.0.0.0/8 allowed: err = %v, want errNotChecked", host, err)
		}
	}
	if n := ac.accepted.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections through refused forms", n)
	}
	for _, host := range []string{"127.0.0.1", "::ffff:127.0.0.1"} {
		if err := dial(loopback, host); err != nil {
			t.Fatalf("dial %s with 127.0.0.0/8 allowed: %v", host, err)
		}
	}
	waitAccepted(t, ac, 2)
}

// waitAccepted waits (at most 5 s) until ac has accepted n connections.
func waitAccepted(t *testing.T, ac *acceptCounter, n int64) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ac.accepted.Load() < n && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ac.accepted.Load(); got != n {
		t.Fatalf("the listener accepted %d connections, want %d", got, n)
	}
}

func TestCheckHost(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true}, {"_dmarc.example.com", true}, {"127.0.0.1", true}, {"::1", true},
		{"", false}, {"a..b", false}, {"-a.com", false}, {"a b.com", false}, {"a/b", false},
	} {
		if err := checkHost(tt.host); (err == nil) != tt.ok {
			t.Errorf("checkHost(%q) = %v, want ok %v", tt.host, err, tt.ok)
		}
	}
}

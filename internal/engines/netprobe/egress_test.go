package netprobe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"toolhost/internal/native"
)

func TestGuardCheck(t *testing.T) {
	loopback := &guard{allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	tests := []struct {
		name, addr string
		g          *guard
		ok         bool
		reason     string
	}{
		{name: "public IPv4", addr: "93.184.215.14", ok: true},
		{name: "public IPv6", addr: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", ok: true},
		{name: "loopback", addr: "127.0.0.1", reason: "a loopback address"},
		{name: "loopback elsewhere in /8", addr: "127.1.2.3", reason: "a loopback address"},
		{name: "IPv6 loopback", addr: "::1", reason: "a loopback address"},
		{name: "private 10/8", addr: "10.0.0.1", reason: "a private address"},
		{name: "private 172.16/12", addr: "172.31.255.255", reason: "a private address"},
		{name: "private 192.168/16", addr: "192.168.0.1", reason: "a private address"},
		{name: "IPv6 unique local", addr: "fd12::1", reason: "a private address"},
		{name: "link-local", addr: "169.254.1.1", reason: "a link-local address"},
		{name: "IPv6 link-local", addr: "fe80::1", reason: "a link-local address"},
		{name: "metadata", addr: "169.254.169.254", reason: "a cloud metadata address"},
		{name: "AWS IPv6 metadata", addr: "fd00:ec2::254", reason: "a cloud metadata address"},
		{name: "Alibaba metadata", addr: "100.100.100.200", reason: "a cloud metadata address"},
		{name: "CGNAT", addr: "100.64.0.1", reason: "a shared (CGNAT) address"},
		{name: "unspecified", addr: "0.0.0.0", reason: "an unspecified address"},
		{name: "IPv6 unspecified", addr: "::", reason: "an unspecified address"},
		{name: "this network", addr: "0.1.2.3", reason: "a reserved address"},
		{name: "multicast", addr: "224.0.0.1", reason: "a multicast address"},
		{name: "IPv6 multicast", addr: "ff02::1", reason: "a multicast address"},
		{name: "broadcast", addr: "255.255.255.255", reason: "a broadcast address"},
		{name: "reserved", addr: "240.0.0.1", reason: "a reserved address"},
		{name: "documentation", addr: "192.0.2.1", reason: "a documentation address"},
		{name: "IPv4-mapped private", addr: "::ffff:10.0.0.1", reason: "a private address"},
		{name: "IPv4-mapped metadata", addr: "::ffff:169.254.169.254", reason: "a cloud metadata address"},
		{name: "NAT64 of loopback", addr: "64:ff9b::7f00:1", reason: "a translated (NAT64) address"},
		{name: "6to4", addr: "2002:a00:1::1", reason: "a tunnelled (6to4) address"},
		{name: "allowed loopback", addr: "127.0.0.1", g: loopback, ok: true},
		{name: "allowed mapped loopback", addr: "::ffff:127.0.0.1", g: loopback, ok: true},
		{name: "allow-list does not cover ::1", addr: "::1", g: loopback, reason: "a loopback address"},
		{name: "allow-list never covers metadata", addr: "169.254.169.254",
			g: &guard{allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}, reason: "a cloud metadata address"},
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

func TestParseAllowList(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      bool
	}{
		{name: "empty", in: ""},
		{name: "one", in: "127.0.0.0/8", want: []string{"127.0.0.0/8"}},
		{name: "several with spaces", in: " 127.0.0.0/8 , ::1/128,,", want: []string{"127.0.0.0/8", "::1/128"}},
		{name: "masked", in: "10.1.2.3/16", want: []string{"10.1.0.0/16"}},
		{name: "bare address", in: "127.0.0.1", err: true},
		{name: "garbage", in: "localhost", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAllowList(tt.in)
			if (err != nil) != tt.err {
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

// The dialer's Control hook refuses an address the guard refuses, even
// one a probe did not resolve through resolve: the last line against a
// rebinding bug.
func TestDialerControlRefuses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	nctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), 8*time.Second)
	w, err := nctx.ClaimEngineWindow(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		g    *guard
		ok   bool
	}{
		{name: "refused", g: &guard{}},
		{name: "allowed", g: &guard{allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pc, cancel := newProbeContext(nctx, w, tt.g)
			defer cancel()
			c, err := pc.dialer(time.Second).DialContext(pc.ctx, "tcp", l.Addr().String())
			if tt.ok {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				c.Close()
				return
			}
			if !errors.Is(err, errNotChecked) {
				t.Fatalf("dial err = %v, want errNotChecked", err)
			}
		})
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

package netprobe_test

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// accepts is a TCP listener on 127.0.0.1 (and ::1 at the same port where
// it can) counting the connections that reach Accept.
type accepts struct {
	port int
	n    atomic.Int64
}

func listenCounting(t *testing.T) *accepts {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &accepts{port: l.Addr().(*net.TCPAddr).Port}
	ls := []net.Listener{l}
	if l6, err := net.Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(a.port))); err == nil {
		ls = append(ls, l6)
	}
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				a.n.Add(1)
				c.Close()
			}
		}()
	}
	t.Cleanup(func() {
		for _, l := range ls {
			l.Close()
		}
		wg.Wait()
	})
	return a
}

// dnsServer is a DNS server on loopback UDP answering A and AAAA queries
// from a table: a name gets first on its first query of a type, then on
// every later one (a rebinding server). Unknown names are NXDOMAIN.
type dnsServer struct {
	conn net.PacketConn
	mu   sync.Mutex
	recs map[string]dnsRecord
	seen map[string]int // queries by "name type"
}

type dnsRecord struct{ first, then []netip.Addr }

// startDNS starts the server and points every probe's resolver at it
// until the test ends.
func startDNS(t *testing.T, recs map[string]dnsRecord) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn, recs: recs, seen: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := s.answer(buf[:n]); resp != nil {
				conn.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	addr := conn.LocalAddr().String()
	netprobe.SetResolver(t, &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}})
	return s
}

// queries returns how many queries of type typ ("A", "AAAA") name got.
func (s *dnsServer) queries(name, typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name+" "+typ]
}

// answer builds the response to one query, or nil for a packet that is
// not one.
func (s *dnsServer) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	var labels []string
	off := 12
	for off < len(q) && q[off] != 0 {
		l := int(q[off])
		if l > 63 || off+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[off+1:off+1+l]))
		off += 1 + l
	}
	off++ // the root label
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off : off+2])
	question := q[12 : off+4]
	name := strings.ToLower(strings.Join(labels, "."))
	typ := map[uint16]string{1: "A", 28: "AAAA"}[qtype]

	s.mu.Lock()
	rec, known := s.recs[name]
	nth := s.seen[name+" "+typ]
	s.seen[name+" "+typ]++
	s.mu.Unlock()

	addrs := rec.first
	if nth > 0 && rec.then != nil {
		addrs = rec.then
	}
	var answers [][]byte
	for _, a := range addrs {
		if (typ == "A" && a.Is4()) || (typ == "AAAA" && a.Is6()) {
			answers = append(answers, a.AsSlice())
		}
	}
	flags := uint16(0x8180) // a response, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	resp := make([]byte, 12, 512)
	copy(resp[0:2], q[0:2])
	binary.BigEndian.PutUint16(resp[2:], flags)
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers)))
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xc0, 12) // the question's name
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // IN
		resp = binary.BigEndian.AppendUint32(resp, 0) // TTL
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// embeddedLiterals are the refused literals of issue 11 and every IPv6
// form that embeds the loopback, metadata or a private IPv4 address.
var embeddedLiterals = []string{
	"127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::",
	"::127.0.0.1", "::7f00:1", "::169.254.169.254",
	"::ffff:0:a9fe:a9fe", "::ffff:0:a00:1", "::ffff:0:127.0.0.1",
	"64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::7f00:1",
	"2002:7f00:1::1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:80ff:fffe",
	"fec0::1", "2001:2::1", "fc00::1", "fe80::1", "100::1", "2001:db8::1", "3fff::1", "2001:20::1",
	"198.18.0.1", "192.0.2.1", "100.64.0.1", "240.0.0.1", "224.0.0.1",
}

// probesAt returns each connecting probe's call at host and port.
func probesAt(host string, port int) []struct {
	code string
	p    params
} {
	return []struct {
		code string
		p    params
	}{
		{"port_check", params{"host": host, "ports": []int{port}}},
		{"tcp_ping", params{"host": host, "port": port, "count": 1}},
		{"tls_check", params{"host": host, "port": port}},
		{"http_headers", params{"url": "http://" + urlHost(host) + ":" + strconv.Itoa(port) + "/"}},
	}
}

// Through the real probes: every refused literal, in every form that
// embeds IPv4, and every name resolving to one, is refused before
// connect() — the listener on 127.0.0.1 never accepts. With 127.0.0.1 on
// the allow-list, the plain literal does connect (the test can fail), and
// the embedded forms of the same address stay refused.
func TestEmbeddedFormsRefusedBeforeConnect(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "")
	ac := listenCounting(t)
	recs := map[string]dnsRecord{
		"compat-loopback.test":    {first: addrs("::127.0.0.1")},
		"compat-metadata.test":    {first: addrs("::169.254.169.254")},
		"translated-meta.test":    {first: addrs("::ffff:0:a9fe:a9fe")},
		"translated-priv.test":    {first: addrs("::ffff:0:a00:1")},
		"site-local.test":         {first: addrs("fec0::1")},
		"benchmarking.test":       {first: addrs("2001:2::1")},
		"nat64-loopback.test":     {first: addrs("64:ff9b::7f00:1")},
		"sixtofour-loopback.test": {first: addrs("2002:7f00:1::1")},
		"all-refused.test":        {first: addrs("127.0.0.1", "::127.0.0.1", "::ffff:0:7f00:1", "fec0::1", "10.0.0.1")},
	}
	startDNS(t, recs)
	var out map[string]any
	for _, host := range embeddedLiterals {
		t.Run(host, func(t *testing.T) {
			for _, c := range probesAt(host, ac.port) {
				err := compute(t, c.code, c.p, &out)
				wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
			}
		})
	}
	for name := range recs {
		t.Run(name, func(t *testing.T) {
			for _, c := range probesAt(name, ac.port) {
				err := compute(t, c.code, c.p, &out)
				wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
			}
			err := compute(t, "dns_lookup", params{"name": name}, &out)
			wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
		})
	}
	// The message names the kind of address, embedded one included.
	err := compute(t, "tcp_ping", params{"host": "compat-loopback.test", "port": ac.port, "count": 1}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "it resolves to an IPv4-compatible address embedding a loopback address")
	err = compute(t, "tcp_ping", params{"host": "::ffff:0:a9fe:a9fe", "port": ac.port, "count": 1}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "it resolves to a cloud metadata address")
	if n := ac.n.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections from refused targets", n)
	}

	// The control: 127.0.0.1 allowed, the plain literal connects.
	t.Setenv(netprobe.AllowEnv, "127.0.0.1")
	var ping struct {
		Address   string
		Connected int
	}
	if err := compute(t, "tcp_ping", params{"host": "127.0.0.1", "port": ac.port, "count": 1}, &ping); err != nil {
		t.Fatal(err)
	}
	if ping.Connected != 1 {
		t.Fatalf("allowed 127.0.0.1: %+v", ping)
	}
	for _, host := range []string{"::127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::127.0.0.1", "2002:7f00:1::1", "compat-loopback.test"} {
		err := compute(t, "tcp_ping", params{"host": host, "port": ac.port, "count": 1}, &out)
		wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
	}
	waitAccepts(t, ac, 1)
}

// A name is probed on its first allowed address, and only on it: the
// address dialed is the one checked, with no second resolution, so a
// rebinding server that answers an internal address after the first query
// is never asked again.
func TestRebindingNeverReResolves(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "127.0.0.1")
	ac := listenCounting(t)
	dns := startDNS(t, map[string]dnsRecord{
		"rebind.test": {first: addrs("127.0.0.1"), then: addrs("10.0.0.1", "::ffff:0:a9fe:a9fe")},
		"mixed.test":  {first: addrs("::127.0.0.1", "fec0::1", "127.0.0.1")},
	})
	var ping struct {
		Address   string
		Connected int
	}
	if err := compute(t, "tcp_ping", params{"host": "rebind.test", "port": ac.port, "count": 3}, &ping); err != nil {
		t.Fatal(err)
	}
	if ping.Address != "127.0.0.1" || ping.Connected != 3 {
		t.Fatalf("rebind.test: %+v", ping)
	}
	if q := dns.queries("rebind.test", "A"); q != 1 {
		t.Fatalf("rebind.test was asked %d times for A, want once", q)
	}
	waitAccepts(t, ac, 3)
	// The second resolution answers the internal addresses: refused.
	var out map[string]any
	err := compute(t, "tcp_ping", params{"host": "rebind.test", "port": ac.port, "count": 1}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
	// A name with refused and allowed addresses is probed on the allowed.
	if err := compute(t, "tcp_ping", params{"host": "mixed.test", "port": ac.port, "count": 1}, &ping); err != nil {
		t.Fatal(err)
	}
	if ping.Address != "127.0.0.1" || ping.Connected != 1 {
		t.Fatalf("mixed.test: %+v", ping)
	}
	waitAccepts(t, ac, 4)
}

// waitAccepts waits (at most 5 s) until a has accepted n connections, and
// fails when it accepted another number.
func waitAccepts(t *testing.T, a *accepts, n int64) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); a.n.Load() < n && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := a.n.Load(); got != n {
		t.Fatalf("the listener accepted %d connections, want %d", got, n)
	}
}

// The legacy spellings of 127.0.0.1 that inet_aton accepts are not IP
// literals to the probes: they go to the host's resolver as names, and
// whatever address comes back is checked. Either way nothing connects.
func TestLegacyIPv4SpellingsNeverConnect(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "")
	ac := listenCounting(t)
	var out map[string]any
	for _, host := range []string{"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.0.0.1.", "localhost."} {
		t.Run(host, func(t *testing.T) {
			err := compute(t, "tcp_ping", params{"host": host, "port": ac.port, "count": 1}, &out)
			if err == nil {
				t.Fatalf("tcp_ping %s: no error, result %v", host, out)
			}
			if _, ok := toolerr.CodeOf(err); !ok {
				t.Fatalf("tcp_ping %s: %v, want a tool error", host, err)
			}
		})
	}
	if n := ac.n.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections", n)
	}
}

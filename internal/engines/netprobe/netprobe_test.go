package netprobe_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// loopback is the allow-list the tests that probe their own servers set.
const loopback = "127.0.0.0/8"

// service is a declared service as the platform sees it: its checked
// definition, its effective policy on the default platform, and its
// compiled schemas.
type service struct {
	def     *tooldef.Definition
	eff     policy.Effective
	in, out *schema.Validator
	op      string
}

// services decodes the package declaration as the registry does.
func services(t *testing.T) map[string]*service {
	t.Helper()
	decl, err := tooldef.Decode(netprobe.Package().Declaration, tooldef.Options{})
	if err != nil {
		t.Fatalf("tooldef.Decode: %v", err)
	}
	out := map[string]*service{}
	for _, d := range decl.Services {
		if d.Refusal != nil {
			t.Fatalf("service %s refused: %v", d.ToolCode, d.Refusal)
		}
		def := d.Definition
		if len(def.Operations) != 1 {
			t.Fatalf("service %s has %d operations, want 1", def.ToolCode, len(def.Operations))
		}
		eff, err := policy.Clamp(policy.DefaultPlatform(), def.Operations[0].Policy)
		if err != nil {
			t.Fatalf("service %s: clamping its policy: %v", def.ToolCode, err)
		}
		in, err := schema.Compile(def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		outSchema, err := schema.Compile(def.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		out[def.ToolCode] = &service{def: def, eff: eff, in: in, out: outSchema, op: def.Operations[0].Policy.Name}
	}
	return out
}

func TestDeclaration(t *testing.T) {
	p := netprobe.Package()
	if p.Name != "netprobe" || len(p.Engines) != 0 || p.Compute == nil || len(p.MissingEngines()) != 0 {
		t.Fatalf("package %q engines %v", p.Name, p.Engines)
	}
	svcs := services(t)
	tests := []struct {
		name, code, op string
	}{
		{name: "port check", code: "port_check", op: "check"},
		{name: "tcp ping", code: "tcp_ping", op: "ping"},
		{name: "dns lookup", code: "dns_lookup", op: "lookup"},
		{name: "tls check", code: "tls_check", op: "check"},
		{name: "http headers", code: "http_headers", op: "fetch"},
		{name: "traceroute", code: "traceroute", op: "trace"},
		{name: "mtr", code: "mtr", op: "report"},
		{name: "latency", code: "latency", op: "measure"},
		{name: "tls check bulk", code: "tls_check_bulk", op: "check"},
		{name: "http headers bulk", code: "http_headers_bulk", op: "check"},
	}
	if len(svcs) != len(tests) {
		t.Fatalf("%d services, want %d", len(svcs), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := svcs[tt.code]
			if s == nil {
				t.Fatalf("no service %s", tt.code)
			}
			d := s.def
			if d.Category != "network" || d.IconKey != tt.code || d.UI.ComponentKey != tt.code ||
				d.Documentation.Path != "tools/"+tt.code || d.ContractVersion != "1.0.0" || d.ImplementationVersion != "1.0.0" {
				t.Errorf("metadata: %+v", d)
			}
			for _, lang := range tooldef.Languages {
				if d.I18n[lang].Name == "" || d.I18n[lang].Description == "" {
					t.Errorf("no %s text", lang)
				}
			}
			if _, err := os.Stat(filepath.Join("..", "..", "..", "docs", d.Documentation.Path+".md")); err != nil {
				t.Errorf("documentation page: %v", err)
			}
			if s.op != tt.op {
				t.Errorf("operation %q, want %q", s.op, tt.op)
			}
			// ADR-027: a sync probe for callers holding tools.net.probe.
			pl := d.Platform
			if pl.Execution != contracts.ExecutionSync || !pl.API || pl.Job != nil || pl.Anonymous || !pl.Egress ||
				pl.Capability != netprobe.Capability || pl.QuotaClass != netprobe.QuotaClass || pl.Cost < 1 ||
				pl.PerTargetPerMinute != netprobe.PerTargetPerMinute || len(pl.Hosts) != 0 || pl.OutputFiles {
				t.Errorf("platform %+v", pl)
			}
			// The descriptor the catalogue publishes passes tools.tool@1
			// and checkDescriptor's probe rules.
			desc := catalog.Tool(&registry.Service{Definition: d, Effective: map[string]policy.Effective{s.op: s.eff},
				Source: "builtin/netprobe"})
			if err := contracts.Validate(contracts.ToolV1, desc); err != nil {
				t.Errorf("tools.tool@1: %v", err)
			}
			if fs := contractstest.CheckDescriptor(desc); len(fs) > 0 {
				t.Errorf("checkDescriptor: %v", fs)
			}
			if !contractstest.IsProbe(&desc) || desc.Auth.Anonymous || !desc.Egress || desc.Limits.PerTargetPerMinute != netprobe.PerTargetPerMinute {
				t.Errorf("descriptor %+v", desc)
			}
			// The engine window can be claimed with time to spare.
			if slack := s.eff.SoftTimeoutMS - s.eff.EngineTimeoutMS; slack < 1000 {
				t.Errorf("soft %d ms − engine %d ms leaves %d ms", s.eff.SoftTimeoutMS, s.eff.EngineTimeoutMS, slack)
			}
		})
	}
	// tcp_ping and the TCP path probes say what they measure.
	for _, code := range []string{"tcp_ping", "traceroute", "mtr", "latency"} {
		for _, lang := range tooldef.Languages {
			if desc := svcs[code].def.I18n[lang].Description; !strings.Contains(desc, "TCP") || !strings.Contains(desc, "ICMP") {
				t.Errorf("%s %s description %q does not say TCP connect, not ICMP", code, lang, desc)
			}
		}
	}
}

// params is a parameters document.
type params map[string]any

// compute runs one item as the worker does: the parameters validated
// against the input schema, Compute through a native.Context with the
// effective budgets, the result validated against the output schema. It
// returns the result decoded into out.
func compute(t *testing.T, code string, p params, out any) error {
	t.Helper()
	s := services(t)[code]
	if s == nil {
		t.Fatalf("no service %s", code)
	}
	p["operation"] = s.op
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := wire.Decode(body, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.in.Validate(doc, toolerr.InvalidParameters); err != nil {
		return err
	}
	now := time.Now()
	ctx := native.NewContext(context.Background(), "test", now.Add(time.Duration(s.eff.SoftTimeoutMS)*time.Millisecond),
		time.Duration(s.eff.EngineTimeoutMS)*time.Millisecond)
	res, err := netprobe.Package().Compute(ctx, native.Call{ToolCode: code, Operation: s.op, Parameters: body})
	if err != nil {
		return err
	}
	if len(res) > int(s.eff.MaxResultBytes) {
		t.Fatalf("result of %d bytes passed the %d-byte cap", len(res), s.eff.MaxResultBytes)
	}
	rdoc, err := wire.Decode(res, wire.Limits{})
	if err != nil {
		t.Fatalf("result is not strict JSON: %v", err)
	}
	if err := s.out.Validate(rdoc, toolerr.InvalidOutput); err != nil {
		t.Fatalf("result fails the output schema: %v %+v\n%s", err, err, res)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

// wantToolError checks that err is a *toolerr.Error with code and, when
// message is not empty, a message containing it.
func wantToolError(t *testing.T, err error, code toolerr.Code, message string) {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a *toolerr.Error %s", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("code %s (%q), want %s", te.Code, te.Message, code)
	}
	if !strings.Contains(te.Message, message) {
		t.Fatalf("message %q, want it to contain %q", te.Message, message)
	}
}

// listen starts a TCP listener on loopback that accepts and closes
// connections until the test ends, and returns its port.
func listen(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l.Addr().(*net.TCPAddr).Port
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestPortCheck(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	open, closed := listen(t), closedPort(t)
	var out struct {
		Host, Address string
		Ports         []struct {
			Port      int
			State     string
			ConnectMS int64 `json:"connect_ms"`
		}
	}
	if err := compute(t, "port_check", params{"host": "127.0.0.1", "ports": []int{open, closed}}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Address != "127.0.0.1" || len(out.Ports) != 2 {
		t.Fatalf("result %+v", out)
	}
	if out.Ports[0].Port != open || out.Ports[0].State != "open" || out.Ports[1].Port != closed || out.Ports[1].State != "closed" {
		t.Errorf("ports %+v", out.Ports)
	}
}

func TestPortCheckLimits(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	ports := func(n int) []int {
		var p []int
		for i := range n {
			p = append(p, 40000+i)
		}
		return p
	}
	var out struct{ Ports []struct{ State string } }
	// Twenty ports are allowed (all closed on loopback, answered at once).
	if err := compute(t, "port_check", params{"host": "127.0.0.1", "ports": ports(20)}, &out); err != nil {
		t.Fatalf("20 ports: %v", err)
	}
	if len(out.Ports) != 20 {
		t.Errorf("%d results for 20 ports", len(out.Ports))
	}
	// The schema refuses a twenty-first.
	err := compute(t, "port_check", params{"host": "127.0.0.1", "ports": ports(21)}, &out)
	if code, _ := toolerr.CodeOf(err); code != toolerr.InvalidParameters {
		t.Fatalf("21 ports: %v, want invalid_parameters", err)
	}
	// Compute refuses it too, past the schema.
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), 8*time.Second)
	body, _ := json.Marshal(params{"operation": "check", "host": "127.0.0.1", "ports": ports(21)})
	_, err = netprobe.Package().Compute(ctx, native.Call{ToolCode: "port_check", Operation: "check", Parameters: body})
	wantToolError(t, err, toolerr.InvalidParameters, "at most 20 ports")
	// A repeated port.
	err = compute(t, "port_check", params{"host": "127.0.0.1", "ports": []int{80, 80}}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "repeated")
}

func TestTCPPing(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	port := listen(t)
	var out struct {
		Address, Method       string
		Port, Sent, Connected int
		MinMS, AvgMS, MaxMS   float64 `json:"-"`
		Attempts              []struct {
			Seq   int
			State string
		}
	}
	if err := compute(t, "tcp_ping", params{"host": "localhost", "port": port, "count": 3}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Method != "tcp_connect" || out.Address != "127.0.0.1" || out.Sent != 3 || out.Connected != 3 || len(out.Attempts) != 3 {
		t.Fatalf("result %+v", out)
	}
	for i, a := range out.Attempts {
		if a.Seq != i+1 || a.State != "open" {
			t.Errorf("attempt %d: %+v", i, a)
		}
	}
	// A closed port: every attempt closed, none connected.
	if err := compute(t, "tcp_ping", params{"host": "127.0.0.1", "port": closedPort(t), "count": 2}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Connected != 0 || out.Sent != 2 || out.Attempts[0].State != "closed" {
		t.Errorf("closed port: %+v", out)
	}
	// The count is bounded by the schema.
	err := compute(t, "tcp_ping", params{"host": "127.0.0.1", "port": port, "count": 11}, &out)
	if code, _ := toolerr.CodeOf(err); code != toolerr.InvalidParameters {
		t.Fatalf("count 11: %v, want invalid_parameters", err)
	}
}

func TestDNSLookup(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	var out struct {
		Name    string
		Answers []struct {
			Type, Status string
			Records      []string
		}
	}
	if err := compute(t, "dns_lookup", params{"name": "localhost", "types": []string{"AAAA", "A"}}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Answers) != 2 || out.Answers[0].Type != "A" || out.Answers[1].Type != "AAAA" {
		t.Fatalf("answers %+v", out.Answers)
	}
	if a := out.Answers[0]; a.Status != "ok" || !slices.Contains(a.Records, "127.0.0.1") {
		t.Errorf("A %+v", a)
	}
	// An IP address is not a name.
	err := compute(t, "dns_lookup", params{"name": "127.0.0.1"}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "not a DNS name")
}

func TestTLSCheck(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	var out struct {
		Address, Protocol string
		CipherSuite       string `json:"cipher_suite"`
		ServerName        string `json:"server_name"`
		Verified          bool
		Findings          []string
		Chain             []struct {
			Subject, Issuer string
			DaysToExpiry    int    `json:"days_to_expiry"`
			NotAfter        string `json:"not_after"`
		}
	}
	if err := compute(t, "tls_check", params{"host": "localhost", "port": p}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Address != "127.0.0.1" || out.ServerName != "localhost" || !strings.HasPrefix(out.Protocol, "TLS 1.") || out.CipherSuite == "" {
		t.Errorf("result %+v", out)
	}
	// httptest's self-signed certificate does not verify: a finding, not
	// an error.
	if out.Verified || len(out.Findings) == 0 || !strings.HasPrefix(out.Findings[0], "verification failed") {
		t.Errorf("verified %v findings %q", out.Verified, out.Findings)
	}
	if len(out.Chain) == 0 || out.Chain[0].DaysToExpiry <= 0 || out.Chain[0].NotAfter == "" {
		t.Errorf("chain %+v", out.Chain)
	}
	// An IP address sends no SNI and is verified against IP SANs.
	if err := compute(t, "tls_check", params{"host": "127.0.0.1", "port": p}, &out); err != nil {
		t.Fatal(err)
	}
	if out.ServerName != "" || out.Address != "127.0.0.1" {
		t.Errorf("IP host: server name %q address %q", out.ServerName, out.Address)
	}
	// A port that does not speak TLS.
	err := compute(t, "tls_check", params{"host": "127.0.0.1", "port": closedPort(t)}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "could not be reached")
}

func TestHTTPHeaders(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	var (
		mu      sync.Mutex
		methods []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.Host)
		mu.Unlock()
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "https://example.com/elsewhere", http.StatusFound)
		case "/get-only":
			if r.Method != http.MethodGet {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("X-Probe", strings.Repeat("v", 2000))
			w.Write([]byte(strings.Repeat("body", 100_000)))
		default:
			w.Header().Set("X-Probe", "yes")
		}
	}))
	t.Cleanup(srv.Close)
	type result struct {
		Method, Location, Protocol string
		Status                     int
		Truncated                  bool
		Headers                    []struct{ Name, Value string }
	}
	get := func(path string) result {
		t.Helper()
		var out result
		if err := compute(t, "http_headers", params{"url": srv.URL + path}, &out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return out
	}
	header := func(r result, name string) string {
		for _, h := range r.Headers {
			if h.Name == name {
				return h.Value
			}
		}
		return ""
	}
	if out := get("/"); out.Method != "HEAD" || out.Status != 200 || header(out, "X-Probe") != "yes" || out.Protocol != "HTTP/1.1" {
		t.Errorf("/: %+v", out)
	}
	if out := get("/moved"); out.Status != 302 || out.Location != "https://example.com/elsewhere" {
		t.Errorf("/moved: %+v (the redirect must be reported, not followed)", out)
	}
	if out := get("/get-only"); out.Method != "GET" || out.Status != 200 || len(header(out, "X-Probe")) != netprobe.MaxValueBytes || !out.Truncated {
		t.Errorf("/get-only: %+v", out)
	}
	// The Host header is the URL's host.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var out result
	if err := compute(t, "http_headers", params{"url": "http://localhost:" + port + "/"}, &out); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if last := methods[len(methods)-1]; last != "HEAD localhost:"+port {
		t.Errorf("request %q, want the Host header localhost:%s", last, port)
	}
}

// Without the allow-list, every internal target is refused before any
// connection, whatever the tool.
func TestRefusedTargets(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "")
	port := listen(t)
	targets := []struct {
		name, host string
	}{
		{name: "loopback", host: "127.0.0.1"},
		{name: "private", host: "10.0.0.1"},
		{name: "metadata", host: "169.254.169.254"},
		{name: "IPv6 loopback", host: "::1"},
		{name: "IPv6 loopback in brackets", host: "[::1]"},
		{name: "IPv4-mapped private", host: "::ffff:192.168.1.1"},
		{name: "IPv4-mapped loopback", host: "::ffff:127.0.0.1"},
		{name: "CGNAT", host: "100.64.0.1"},
		{name: "AWS IPv6 metadata", host: "fd00:ec2::254"},
		{name: "unspecified", host: "0.0.0.0"},
		{name: "name resolving to loopback", host: "localhost"},
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			var out map[string]any
			for _, c := range []struct {
				code string
				p    params
			}{
				{"port_check", params{"host": tt.host, "ports": []int{port}}},
				{"tcp_ping", params{"host": tt.host, "port": port, "count": 1}},
				{"tls_check", params{"host": tt.host, "port": port}},
				{"http_headers", params{"url": "http://" + urlHost(tt.host) + ":" + strconv.Itoa(port) + "/"}},
			} {
				err := compute(t, c.code, c.p, &out)
				wantToolError(t, err, toolerr.InvalidParameters, "the target is refused")
			}
		})
	}
	var out map[string]any
	err := compute(t, "dns_lookup", params{"name": "localhost"}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "the target is refused: it resolves to a loopback address")
}

// The metadata addresses stay refused even when the allow-list covers
// them.
func TestMetadataAlwaysRefused(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "169.254.0.0/16, fd00::/8")
	var out map[string]any
	for _, host := range []string{"169.254.169.254", "fd00:ec2::254"} {
		err := compute(t, "tcp_ping", params{"host": host, "port": 80, "count": 1}, &out)
		wantToolError(t, err, toolerr.InvalidParameters, "a cloud metadata address")
	}
}

// An allow-list that does not parse fails the item (the operator's fault)
// without probing, with a message naming the variable and the entry's
// position but not its value. (The server refuses to start with it: this
// is a worker started otherwise.)
func TestBadAllowList(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, "127.0.0.0/8, localhost")
	var out map[string]any
	err := compute(t, "tcp_ping", params{"host": "127.0.0.1", "port": 80, "count": 1}, &out)
	wantToolError(t, err, toolerr.ExecutionFailed, netprobe.AllowEnv+" does not parse (entry 2)")
	if strings.Contains(err.(*toolerr.Error).Message, "localhost") {
		t.Errorf("message %q quotes the operator's value", err.(*toolerr.Error).Message)
	}
}

func urlHost(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + h + "]"
	}
	return h
}

func TestUnknownService(t *testing.T) {
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := netprobe.Package().Compute(ctx, native.Call{ToolCode: "port_check", Operation: "ping", Parameters: []byte(`{}`)})
	if !errors.Is(err, netprobe.ErrUnknownService) {
		t.Fatalf("err %v, want ErrUnknownService", err)
	}
}

// A context whose soft deadline is too close for the engine window is
// refused with execution_limit before any probe.
func TestNoWindow(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Second), 8*time.Second)
	body, _ := json.Marshal(params{"operation": "ping", "host": "127.0.0.1", "port": 80})
	_, err := netprobe.Package().Compute(ctx, native.Call{ToolCode: "tcp_ping", Operation: "ping", Parameters: body})
	if code, _ := toolerr.CodeOf(err); code != toolerr.ExecutionLimit {
		t.Fatalf("err %v, want execution_limit", err)
	}
}

// TestTCPPathProbes: traceroute, mtr and latency are honest TCP-connect
// probes (issue 16, item 15): method tcp_connect, the destination as the
// only hop, loss and times from real connects to a loopback listener.
func TestTCPPathProbes(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	port := listen(t)
	var path struct {
		M    string `json:"method"`
		H    string `json:"hops_measured"`
		Hops []struct {
			Hop, Sent, Connected int
			Address              string
			LossPct              float64 `json:"loss_pct"`
		}
		Attempts []struct{ State string }
	}
	for _, tc := range []struct {
		code, op string
		count    int
	}{{"traceroute", "trace", 3}, {"mtr", "report", 4}} {
		if err := compute(t, tc.code, params{"operation": tc.op, "host": "localhost", "port": port, "count": tc.count}, &path); err != nil {
			t.Fatalf("%s: %v", tc.code, err)
		}
		if path.M != "tcp_connect" || path.H != "destination_only" || len(path.Hops) != 1 || path.Hops[0].Hop != 1 ||
			path.Hops[0].Address != "127.0.0.1" || path.Hops[0].Sent != tc.count || path.Hops[0].Connected != tc.count ||
			path.Hops[0].LossPct != 0 || len(path.Attempts) != tc.count {
			t.Errorf("%s: %+v", tc.code, path)
		}
	}
	// A closed port: all lost.
	if err := compute(t, "mtr", params{"operation": "report", "host": "127.0.0.1", "port": closedPort(t), "count": 2}, &path); err != nil {
		t.Fatal(err)
	}
	if path.Hops[0].LossPct != 100 || path.Hops[0].Connected != 0 {
		t.Errorf("mtr at a closed port: %+v", path)
	}
	var lat struct {
		Method              string
		Sent, Connected     int
		LossPct             float64 `json:"loss_pct"`
		JitterMS            float64 `json:"jitter_ms"`
		MinMS, AvgMS, MaxMS float64 `json:"-"`
	}
	if err := compute(t, "latency", params{"operation": "measure", "host": "localhost", "port": port, "count": 3}, &lat); err != nil {
		t.Fatal(err)
	}
	if lat.Method != "tcp_connect" || lat.Sent != 3 || lat.Connected != 3 || lat.LossPct != 0 || lat.JitterMS < 0 {
		t.Errorf("latency: %+v", lat)
	}
	// A refused target is refused as tcp_ping's is.
	t.Setenv(netprobe.AllowEnv, "")
	err := compute(t, "traceroute", params{"operation": "trace", "host": "127.0.0.1"}, &path)
	wantToolError(t, err, toolerr.InvalidParameters, "refused")
}

// TestBulkChecks: tls_check_bulk and http_headers_bulk run their probe on
// each target and report each one on its own, a refused target included
// (issue 16, item 15).
func TestBulkChecks(t *testing.T) {
	t.Setenv(netprobe.AllowEnv, loopback)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Probe", "yes")
	}))
	defer srv.Close()
	var out struct {
		Results []struct {
			URL, Host string
			OK        bool
			Result    json.RawMessage
			Error     *struct{ Code, Message string }
		}
	}
	if err := compute(t, "http_headers_bulk", params{"urls": []string{srv.URL + "/a", srv.URL + "/b", "http://10.0.0.1/"}}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 3 || !out.Results[0].OK || !out.Results[1].OK || out.Results[2].OK ||
		out.Results[2].Error == nil || out.Results[2].Error.Code != string(toolerr.InvalidParameters) ||
		!strings.Contains(string(out.Results[0].Result), "X-Probe") && !strings.Contains(strings.ToLower(string(out.Results[0].Result)), "x-probe") {
		t.Fatalf("http_headers_bulk: %+v", out)
	}
	// tls_check on a plain listener fails per host, never the run.
	port := listen(t)
	if err := compute(t, "tls_check_bulk", params{"hosts": []string{"127.0.0.1", "10.0.0.1"}, "port": port}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 || out.Results[0].Host != "127.0.0.1" || out.Results[0].OK || out.Results[0].Error == nil ||
		out.Results[1].OK || out.Results[1].Error.Code != string(toolerr.InvalidParameters) {
		t.Fatalf("tls_check_bulk: %+v", out)
	}
	// Limits: six targets, or a repeated one, are refused.
	err := compute(t, "tls_check_bulk", params{"hosts": []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"}}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "")
	err = compute(t, "http_headers_bulk", params{"urls": []string{srv.URL, srv.URL}}, &out)
	wantToolError(t, err, toolerr.InvalidParameters, "repeated")
}

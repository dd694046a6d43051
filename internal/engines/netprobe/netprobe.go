// Package netprobe is the native tool package of the network probes
// (ADR-027, "Network probes need tools.net.probe"): port_check, tcp_ping,
// dns_lookup, tls_check and http_headers. Each sends traffic to a host the
// caller chose, so each is a probe: egress true, anonymous callers refused,
// the capability tools.net.probe, the quota class tools-probe and a
// per-target throttle of [PerTargetPerMinute] runs a minute.
//
// The probes are pure Go network code: the package runs no executable
// (Engines is empty) and computes inside the item's one claimed engine
// window (native.Context.ClaimEngineWindow), checkpointing between targets.
//
// Egress safety: every address the package connects to is checked after
// resolution, on the exact IP that is dialed, and dialed by that IP (the
// dialer's Control hook checks it once more, before connect), so a name
// that resolves, or re-resolves, to an internal address cannot reach it.
// The IANA special-purpose ranges of both families that are not globally
// reachable (private, loopback, link-local, site-local, unique-local,
// unspecified, CGNAT, benchmarking, documentation, reserved, discard,
// ORCHID), multicast, broadcast and the cloud metadata addresses are
// refused with a tool error (invalid_parameters, not retryable); every
// IPv6 form that embeds an IPv4 address (mapped, compatible, translated,
// NAT64, 6to4, Teredo) is checked on its embedded address as well. The
// operator may allow ranges with the environment variable [AllowEnv]
// (comma-separated CIDRs), checked by the server at startup and read by
// the worker at each item; the metadata addresses stay refused whatever it
// says. docs/egress.md is the reference of the guard,
// docs/tools/port_check.md and its siblings that of the five tools.
package netprobe

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
)

// Name is the package name: "builtin/netprobe" in sources and failures.
const Name = "netprobe"

// The tools-platform fields every probe declares (ADR-027).
const (
	// Capability is the capability a probe run needs.
	Capability = "tools.net.probe"
	// QuotaClass is the quota class of every probe.
	QuotaClass = "tools-probe"
	// PerTargetPerMinute throttles runs against one target across all
	// callers.
	PerTargetPerMinute = 6
)

// Limits of the probes.
const (
	// MaxPorts is the most ports port_check tries in one run.
	MaxPorts = 20
	// MaxPings is the most connects tcp_ping makes in one run.
	MaxPings = 10
	// MaxRecords is the most records dns_lookup reports per record type.
	MaxRecords = 20
	// MaxChain is the most certificates tls_check reports.
	MaxChain = 10
	// MaxHeaders is the most header values http_headers reports.
	MaxHeaders = 100
	// MaxHeaderBytes bounds the response header block http_headers reads.
	MaxHeaderBytes = 64 << 10
	// MaxValueBytes bounds each reported string taken from the network (a
	// header value, a TXT record, a certificate subject).
	MaxValueBytes = 1024
)

// The versions every service declares.
const (
	ContractVersion       = "1.0.0"
	ImplementationVersion = "1.0.0"
	// uiVersion is the version of every service's UI descriptor and
	// documentation page.
	uiVersion = "1.0.0"
)

// category is every service's category (the ADR family).
const category = "network"

var (
	// ErrUnknownService is returned by the package's Compute when the call
	// names a service or an operation the package does not declare.
	ErrUnknownService = errors.New("netprobe: unknown service or operation")
	// ErrAllowList is returned by ParseAllowList (as an *AllowListError)
	// when an entry of the allow-list is neither an IP address nor a CIDR.
	ErrAllowList = errors.New("netprobe: the allow-list does not parse")
	// errNotChecked is returned by the dialer's Control hook when the
	// address being connected to is one the guard refuses; the socket is
	// closed before connect(2). resolve has checked the address already,
	// so it means a bug or a changed allow-list.
	errNotChecked = errors.New("netprobe: the dialed address is refused")
)

// The operation policies. Every probe claims an engine window of
// engineTimeout; the server bound is ingress 2 s + queue 5 s + hard 11 s
// + cleanup 2 s + response reserve 2 s = 22 s ≤ the 25 s request deadline.
const (
	engineTimeout = 8 * time.Second
	// postEngineReserve is what an item needs after the network: encoding
	// a small result and the worker's output validation.
	postEngineReserve = 300 * time.Millisecond
)

func operation(name string) guest.Operation {
	return guest.Operation{
		Name:            name,
		EngineTimeoutMS: engineTimeout.Milliseconds(), SoftTimeoutMS: 9_500, HardTimeoutMS: 11_000,
		RequestTimeoutMS: 25_000, ClientTimeoutMS: 30_000,
		MemoryLimitBytes: 256 << 20,
	}
}

// Package returns the netprobe tool package. The declaration is built once
// and shared by every returned Package: callers must not modify its bytes.
func Package() *native.Package {
	decl, err := declaration()
	if err != nil {
		// The declaration is static: a failure is a programming error,
		// and TestDeclaration catches it.
		panic(fmt.Sprintf("netprobe: declaring the package: %v", err))
	}
	return &native.Package{Name: Name, Declaration: decl, Compute: compute}
}

var declaration = sync.OnceValues(func() ([]byte, error) {
	return guest.Package{
		ContractVersion:       ContractVersion,
		ImplementationVersion: ImplementationVersion,
		Services: []guest.Declaration{
			native.Service[portInput, portOutput]("port_check", category, uiVersion, portTexts, operation(opPort), platform(2, legacy("ports", "host", opPort), legacy("port", "host", opPort))),
			native.Service[pingInput, pingOutput]("tcp_ping", category, uiVersion, pingTexts, operation(opPing), platform(2, legacy("ping", "host", opPing), legacy("tcping", "host", opPing))),
			native.Service[dnsInput, dnsOutput]("dns_lookup", category, uiVersion, dnsTexts, operation(opDNS), platform(1, legacy("dns", "name", opDNS))),
			native.Service[tlsInput, tlsOutput]("tls_check", category, uiVersion, tlsTexts, operation(opTLS), platform(1, legacy("tls", "host", opTLS), legacy("ssl", "host", opTLS))),
			native.Service[httpInput, httpOutput]("http_headers", category, uiVersion, httpTexts, operation(opHTTP), platform(1, legacy("headers", "url", opHTTP))),
			native.Service[traceInput, pathOutput]("traceroute", category, uiVersion, traceTexts, operation(opTrace), platform(2, legacy("traceroute", "host", opTrace))),
			native.Service[mtrInput, pathOutput]("mtr", category, uiVersion, mtrTexts, operation(opMTR), platform(2, legacy("mtr", "host", opMTR))),
			native.Service[latencyInput, latencyOutput]("latency", category, uiVersion, latencyTexts, operation(opLatency), platform(2, legacy("latency", "host", opLatency))),
			native.Service[tlsBulkInput, tlsBulkOutput]("tls_check_bulk", category, uiVersion, tlsBulkTexts, operation(opBulk), platform(MaxBulk)),
			native.Service[httpBulkInput, httpBulkOutput]("http_headers_bulk", category, uiVersion, httpBulkTexts, operation(opBulk), platform(MaxBulk)),
		},
	}.Declaration()
})

// Operation names.
const (
	opPort = "check"
	opPing = "ping"
	opDNS  = "lookup"
	opTLS  = "check"
	opHTTP = "fetch"
)

// platform is the tools-platform block of a probe with the given cost and
// legacy routes.
func platform(cost int, legacy ...guest.LegacyRoute) *guest.Platform {
	return &guest.Platform{
		Legacy:             legacy,
		Execution:          "sync",
		RequireCaller:      true,
		Capability:         Capability,
		QuotaClass:         QuotaClass,
		Cost:               cost,
		Egress:             true,
		PerTargetPerMinute: PerTargetPerMinute,
	}
}

// legacy is the old API's route of a probe, GET /api/net/<endpoint>/:param
// (ADR-027, "Legacy endpoints get deprecation headers"): the path's last
// segment is the input field param (the target), the query gives the
// other fields (?ports=80,443&count=3).
func legacy(endpoint, param, op string) guest.LegacyRoute {
	return guest.LegacyRoute{Method: "GET", Path: "/api/net/" + endpoint + "/:" + param, Operation: op}
}

var portTexts = map[string]guest.Text{
	"en": {Name: "Port check", Description: "Try a TCP connection to up to 20 ports of a public host and report each as open, closed or filtered."},
	"it": {Name: "Controllo porte", Description: "Prova una connessione TCP verso un massimo di 20 porte di un host pubblico e indica per ciascuna se è aperta, chiusa o filtrata."},
	"fr": {Name: "Vérification de ports", Description: "Tente une connexion TCP vers jusqu'à 20 ports d'un hôte public et indique pour chacun s'il est ouvert, fermé ou filtré."},
	"es": {Name: "Comprobación de puertos", Description: "Intenta una conexión TCP a hasta 20 puertos de un host público e indica si cada uno está abierto, cerrado o filtrado."},
}

var pingTexts = map[string]guest.Text{
	"en": {Name: "TCP ping", Description: "Measure the TCP connect time to a port of a public host, up to 10 times. This is a TCP connect time, not an ICMP ping."},
	"it": {Name: "Ping TCP", Description: "Misura il tempo di connessione TCP verso una porta di un host pubblico, fino a 10 volte. È un tempo di connessione TCP, non un ping ICMP."},
	"fr": {Name: "Ping TCP", Description: "Mesure le temps de connexion TCP vers un port d'un hôte public, jusqu'à 10 fois. C'est un temps de connexion TCP, pas un ping ICMP."},
	"es": {Name: "Ping TCP", Description: "Mide el tiempo de conexión TCP a un puerto de un host público, hasta 10 veces. Es un tiempo de conexión TCP, no un ping ICMP."},
}

var dnsTexts = map[string]guest.Text{
	"en": {Name: "DNS lookup", Description: "Look up the A, AAAA, CNAME, MX, TXT and NS records of a public name."},
	"it": {Name: "Ricerca DNS", Description: "Cerca i record A, AAAA, CNAME, MX, TXT e NS di un nome pubblico."},
	"fr": {Name: "Recherche DNS", Description: "Recherche les enregistrements A, AAAA, CNAME, MX, TXT et NS d'un nom public."},
	"es": {Name: "Consulta DNS", Description: "Consulta los registros A, AAAA, CNAME, MX, TXT y NS de un nombre público."},
}

var tlsTexts = map[string]guest.Text{
	"en": {Name: "TLS check", Description: "Connect to a public TLS server and report its certificate chain, expiry, protocol version, cipher suite and whether it verifies."},
	"it": {Name: "Controllo TLS", Description: "Si connette a un server TLS pubblico e riporta la catena di certificati, la scadenza, la versione del protocollo, la suite di cifratura e se il certificato è valido."},
	"fr": {Name: "Vérification TLS", Description: "Se connecte à un serveur TLS public et indique sa chaîne de certificats, leur expiration, la version du protocole, la suite de chiffrement et si la chaîne est valide."},
	"es": {Name: "Comprobación TLS", Description: "Se conecta a un servidor TLS público e indica su cadena de certificados, la caducidad, la versión del protocolo, la suite de cifrado y si se verifica."},
}

var httpTexts = map[string]guest.Text{
	"en": {Name: "HTTP headers", Description: "Request a public http or https URL and report the status and response headers, without following redirects."},
	"it": {Name: "Intestazioni HTTP", Description: "Richiede un URL http o https pubblico e riporta lo stato e le intestazioni della risposta, senza seguire i reindirizzamenti."},
	"fr": {Name: "En-têtes HTTP", Description: "Interroge une URL http ou https publique et indique le statut et les en-têtes de la réponse, sans suivre les redirections."},
	"es": {Name: "Cabeceras HTTP", Description: "Solicita una URL http o https pública e indica el estado y las cabeceras de la respuesta, sin seguir redirecciones."},
}

// compute is the package's Compute: it decodes the parameters strictly
// into the input type of the called service, claims the engine window and
// runs the probe.
func compute(ctx *native.Context, call native.Call) ([]byte, error) {
	switch {
	case call.ToolCode == "port_check" && call.Operation == opPort:
		return run(ctx, call, portCheck)
	case call.ToolCode == "tcp_ping" && call.Operation == opPing:
		return run(ctx, call, tcpPing)
	case call.ToolCode == "dns_lookup" && call.Operation == opDNS:
		return run(ctx, call, dnsLookup)
	case call.ToolCode == "tls_check" && call.Operation == opTLS:
		return run(ctx, call, tlsCheck)
	case call.ToolCode == "http_headers" && call.Operation == opHTTP:
		return run(ctx, call, httpHeaders)
	case call.ToolCode == "traceroute" && call.Operation == opTrace:
		return run(ctx, call, traceroute)
	case call.ToolCode == "mtr" && call.Operation == opMTR:
		return run(ctx, call, mtr)
	case call.ToolCode == "latency" && call.Operation == opLatency:
		return run(ctx, call, latency)
	case call.ToolCode == "tls_check_bulk" && call.Operation == opBulk:
		return run(ctx, call, tlsCheckBulk)
	case call.ToolCode == "http_headers_bulk" && call.Operation == opBulk:
		return run(ctx, call, httpHeadersBulk)
	}
	return nil, fmt.Errorf("computing %s/%s: %w", call.ToolCode, call.Operation, ErrUnknownService)
}

// run decodes the parameters into In, loads the egress guard, claims the
// engine window and runs probe inside it.
func run[In any, PIn interface {
	*In
	native.Input
}, Out any](ctx *native.Context, call native.Call, probe func(*probeContext, *In) (Out, error)) ([]byte, error) {
	in := PIn(new(In))
	if err := call.DecodeParameters(in); err != nil {
		return nil, err
	}
	g, err := guardFromEnv()
	if err != nil {
		return nil, err
	}
	w, err := ctx.ClaimEngineWindow(postEngineReserve)
	if err != nil {
		return nil, err
	}
	pc, cancel := newProbeContext(ctx, w, g)
	defer cancel()
	out, err := probe(pc, (*In)(in))
	if err != nil {
		return nil, err
	}
	if err := ctx.Checkpoint(); err != nil {
		return nil, err
	}
	// No cap of its own: every field is bounded, and the worker checks the
	// operation's result bytes.
	return native.EncodeResult(out, 0)
}

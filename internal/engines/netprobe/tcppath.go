package netprobe

import (
	"math"

	"github.com/toolhost/toolhost/guest"
)

// traceroute, mtr and latency: the names the old pages used for what was
// always a TCP ping (ADR-027: "traceroute, mtr and latency are a TCP
// ping"; "Probe tools that only do a TCP ping describe themselves as
// that"). Each times TCP connects to one port of the destination, as
// tcp_ping does; none sends ICMP or sets a TTL, so none discovers the
// routers between here and the destination, and their descriptors and
// results say so: method tcp_connect, hops_measured destination_only.

// Operation names of the TCP path probes.
const (
	opTrace   = "trace"
	opMTR     = "report"
	opLatency = "measure"
)

// destinationOnly is the hops_measured value of traceroute and mtr.
const destinationOnly = "destination_only"

type traceInput struct {
	Operation string `json:"operation" doc:"trace: time TCP connects to the destination's port. No ICMP or TTL probes are sent: the routers in between are not discovered."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Port      int    `json:"port,omitempty" minimum:"1" maximum:"65535" default:"443" doc:"The TCP port to connect to."`
	Count     int    `json:"count,omitempty" minimum:"1" maximum:"10" default:"3" doc:"How many connects to time, 1 to 10."`
}

func (in *traceInput) SelectedOperation() string { return in.Operation }

type mtrInput struct {
	Operation string `json:"operation" doc:"report: repeat TCP connects to the destination's port and report loss and times. No ICMP or TTL probes are sent: the routers in between are not discovered."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Port      int    `json:"port,omitempty" minimum:"1" maximum:"65535" default:"443" doc:"The TCP port to connect to."`
	Count     int    `json:"count,omitempty" minimum:"1" maximum:"10" default:"10" doc:"How many connects, 1 to 10."`
}

func (in *mtrInput) SelectedOperation() string { return in.Operation }

type latencyInput struct {
	Operation string `json:"operation" doc:"measure: time TCP connects to the port and report their statistics. This is a TCP connect time, not an ICMP echo."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Port      int    `json:"port,omitempty" minimum:"1" maximum:"65535" default:"443" doc:"The TCP port to connect to."`
	Count     int    `json:"count,omitempty" minimum:"1" maximum:"10" default:"5" doc:"How many connects to time, 1 to 10."`
}

func (in *latencyInput) SelectedOperation() string { return in.Operation }

// hopStats are the connect statistics of the one hop measured.
type hopStats struct {
	Hop       int     `json:"hop" minimum:"1" maximum:"1" doc:"Always 1: the destination, the only hop a TCP connect measures."`
	Address   string  `json:"address" doc:"The destination address connected to."`
	Sent      int     `json:"sent" minimum:"0" doc:"How many connects were attempted."`
	Connected int     `json:"connected" minimum:"0" doc:"How many connects completed."`
	LossPct   float64 `json:"loss_pct" minimum:"0" maximum:"100" doc:"The share of connects that did not complete, in percent."`
	MinMS     float64 `json:"min_ms" minimum:"0" doc:"The fastest completed connect in milliseconds; 0 when none completed."`
	AvgMS     float64 `json:"avg_ms" minimum:"0" doc:"The mean of the completed connects in milliseconds; 0 when none completed."`
	MaxMS     float64 `json:"max_ms" minimum:"0" doc:"The slowest completed connect in milliseconds; 0 when none completed."`
}

type pathOutput struct {
	Host         string        `json:"host" doc:"The host as given."`
	Address      string        `json:"address" doc:"The IP address that was connected to."`
	Port         int           `json:"port" minimum:"1" maximum:"65535" doc:"The port."`
	Method       string        `json:"method" enum:"tcp_connect" doc:"Always tcp_connect: the time from sending SYN to the completed TCP handshake; no ICMP echo, no TTL-limited probes."`
	HopsMeasured string        `json:"hops_measured" enum:"destination_only" doc:"Always destination_only: the routers between here and the destination are not discovered, so hops holds the destination alone."`
	Hops         []hopStats    `json:"hops" maxItems:"1" doc:"One entry, the destination."`
	Attempts     []pingAttempt `json:"attempts" doc:"One entry per connect, in order."`
}

type latencyOutput struct {
	Host      string        `json:"host" doc:"The host as given."`
	Address   string        `json:"address" doc:"The IP address that was connected to; name resolution is not included in the times."`
	Port      int           `json:"port" minimum:"1" maximum:"65535" doc:"The port."`
	Method    string        `json:"method" enum:"tcp_connect" doc:"Always tcp_connect: the time from sending SYN to the completed TCP handshake, not an ICMP echo."`
	Sent      int           `json:"sent" minimum:"0" doc:"How many connects were attempted."`
	Connected int           `json:"connected" minimum:"0" doc:"How many connects completed."`
	LossPct   float64       `json:"loss_pct" minimum:"0" maximum:"100" doc:"The share of connects that did not complete, in percent."`
	MinMS     float64       `json:"min_ms" minimum:"0" doc:"The fastest completed connect in milliseconds; 0 when none completed."`
	AvgMS     float64       `json:"avg_ms" minimum:"0" doc:"The mean of the completed connects in milliseconds; 0 when none completed."`
	MaxMS     float64       `json:"max_ms" minimum:"0" doc:"The slowest completed connect in milliseconds; 0 when none completed."`
	JitterMS  float64       `json:"jitter_ms" minimum:"0" doc:"The mean absolute difference between consecutive completed connects in milliseconds; 0 with fewer than two."`
	Attempts  []pingAttempt `json:"attempts" doc:"One entry per connect, in order."`
}

// connects runs tcp_ping's connects for a TCP path probe.
func connects(pc *probeContext, host string, port, count, defCount int) (pingOutput, error) {
	if port == 0 {
		port = 443
	}
	if count == 0 {
		count = defCount
	}
	return tcpPing(pc, &pingInput{Operation: opPing, Host: host, Port: port, Count: count})
}

func loss(p pingOutput) float64 {
	if p.Sent == 0 {
		return 0
	}
	return math.Round(float64(p.Sent-p.Connected)*100000/float64(p.Sent)) / 1000
}

func pathResult(p pingOutput) pathOutput {
	return pathOutput{Host: p.Host, Address: p.Address, Port: p.Port, Method: p.Method, HopsMeasured: destinationOnly,
		Hops: []hopStats{{Hop: 1, Address: p.Address, Sent: p.Sent, Connected: p.Connected, LossPct: loss(p),
			MinMS: p.MinMS, AvgMS: p.AvgMS, MaxMS: p.MaxMS}},
		Attempts: p.Attempts}
}

func traceroute(pc *probeContext, in *traceInput) (pathOutput, error) {
	p, err := connects(pc, in.Host, in.Port, in.Count, 3)
	if err != nil {
		return pathOutput{}, err
	}
	return pathResult(p), nil
}

func mtr(pc *probeContext, in *mtrInput) (pathOutput, error) {
	p, err := connects(pc, in.Host, in.Port, in.Count, MaxPings)
	if err != nil {
		return pathOutput{}, err
	}
	return pathResult(p), nil
}

func latency(pc *probeContext, in *latencyInput) (latencyOutput, error) {
	p, err := connects(pc, in.Host, in.Port, in.Count, 5)
	if err != nil {
		return latencyOutput{}, err
	}
	out := latencyOutput{Host: p.Host, Address: p.Address, Port: p.Port, Method: p.Method, Sent: p.Sent, Connected: p.Connected,
		LossPct: loss(p), MinMS: p.MinMS, AvgMS: p.AvgMS, MaxMS: p.MaxMS, Attempts: p.Attempts}
	var prev, sum float64
	n := 0
	for _, a := range p.Attempts {
		if a.State != "open" {
			continue
		}
		if n > 0 {
			sum += math.Abs(a.ConnectMS - prev)
		}
		prev = a.ConnectMS
		n++
	}
	if n > 1 {
		out.JitterMS = math.Round(sum/float64(n-1)*1000) / 1000
	}
	return out, nil
}

var traceTexts = map[string]guest.Text{
	"en": {Name: "Traceroute (TCP connect)", Description: "Time TCP connects to a port of a public host. It sends no ICMP or TTL probes, so it measures the destination only and does not discover the routers in between."},
	"it": {Name: "Traceroute (connessione TCP)", Description: "Misura le connessioni TCP verso una porta di un host pubblico. Non invia sonde ICMP né TTL: misura solo la destinazione e non scopre i router intermedi."},
	"fr": {Name: "Traceroute (connexion TCP)", Description: "Mesure des connexions TCP vers un port d'un hôte public. Aucune sonde ICMP ni TTL : seule la destination est mesurée, les routeurs intermédiaires ne sont pas découverts."},
	"es": {Name: "Traceroute (conexión TCP)", Description: "Mide conexiones TCP a un puerto de un host público. No envía sondas ICMP ni TTL: solo mide el destino y no descubre los routers intermedios."},
}

var mtrTexts = map[string]guest.Text{
	"en": {Name: "MTR (TCP connect)", Description: "Repeat TCP connects to a port of a public host and report loss and connect times. It sends no ICMP or TTL probes: the destination is the only hop measured."},
	"it": {Name: "MTR (connessione TCP)", Description: "Ripete connessioni TCP verso una porta di un host pubblico e riporta perdita e tempi di connessione. Non invia sonde ICMP né TTL: misura solo la destinazione."},
	"fr": {Name: "MTR (connexion TCP)", Description: "Répète des connexions TCP vers un port d'un hôte public et indique la perte et les temps de connexion. Aucune sonde ICMP ni TTL : seule la destination est mesurée."},
	"es": {Name: "MTR (conexión TCP)", Description: "Repite conexiones TCP a un puerto de un host público e informa de la pérdida y los tiempos de conexión. No envía sondas ICMP ni TTL: solo mide el destino."},
}

var latencyTexts = map[string]guest.Text{
	"en": {Name: "Latency (TCP connect)", Description: "Measure TCP connect times to a port of a public host: minimum, mean, maximum, jitter and loss. This is a TCP connect time, not an ICMP ping."},
	"it": {Name: "Latenza (connessione TCP)", Description: "Misura i tempi di connessione TCP verso una porta di un host pubblico: minimo, media, massimo, jitter e perdita. È un tempo di connessione TCP, non un ping ICMP."},
	"fr": {Name: "Latence (connexion TCP)", Description: "Mesure les temps de connexion TCP vers un port d'un hôte public : minimum, moyenne, maximum, gigue et perte. C'est un temps de connexion TCP, pas un ping ICMP."},
	"es": {Name: "Latencia (conexión TCP)", Description: "Mide los tiempos de conexión TCP a un puerto de un host público: mínimo, media, máximo, jitter y pérdida. Es un tiempo de conexión TCP, no un ping ICMP."},
}

package netprobe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// portInput is the input of port_check.
type portInput struct {
	Operation string `json:"operation" doc:"check: try a TCP connection to each port."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Ports     []int  `json:"ports" minItems:"1" maxItems:"20" minimum:"1" maximum:"65535" doc:"The TCP ports to try, 1 to 20 distinct ports."`
}

func (in *portInput) SelectedOperation() string { return in.Operation }

// portOutput is the result of port_check.
type portOutput struct {
	Host    string       `json:"host" doc:"The host as given."`
	Address string       `json:"address" doc:"The IP address that was probed (the first allowed address of the host)."`
	Ports   []portResult `json:"ports" doc:"One entry per port, in the order given."`
}

type portResult struct {
	Port      int    `json:"port" minimum:"1" maximum:"65535" doc:"The port."`
	State     string `json:"state" enum:"open,closed,filtered" doc:"open: the connection was accepted; closed: the host refused it (a reset); filtered: no answer within the timeout, or the host or network is unreachable."`
	ConnectMS int64  `json:"connect_ms" minimum:"0" doc:"The time the connect took or waited, in milliseconds."`
}

// portTimeout is the most one port's connect waits, and portParallel how
// many ports are tried at once: 20 ports take at most 4 × 1.5 s = 6 s,
// inside the 8 s engine window.
const (
	portTimeout  = 1500 * time.Millisecond
	portParallel = 5
)

// portCheck tries each port, portParallel at a time, checkpointing before
// each. The address is resolved and checked once; every port is dialed on
// it.
func portCheck(pc *probeContext, in *portInput) (portOutput, error) {
	if len(in.Ports) > MaxPorts {
		return portOutput{}, native.Refuse(toolerr.InvalidParameters, "ports: at most %d ports a run, %d given", MaxPorts, len(in.Ports))
	}
	seen := map[int]bool{}
	for i, p := range in.Ports {
		if p < 1 || p > 65535 {
			return portOutput{}, native.Refuse(toolerr.InvalidParameters, "ports[%d]: not a TCP port", i)
		}
		if seen[p] {
			return portOutput{}, native.Refuse(toolerr.InvalidParameters, "ports[%d]: the port is repeated", i)
		}
		seen[p] = true
	}
	t, err := pc.resolve(in.Host)
	if err != nil {
		return portOutput{}, err
	}
	out := portOutput{Host: in.Host, Address: t.addr.String(), Ports: make([]portResult, len(in.Ports))}
	sem := make(chan struct{}, portParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, p := range in.Ports {
		if err := pc.native.Checkpoint(); err != nil {
			return portOutput{}, err
		}
		select {
		case sem <- struct{}{}:
		case <-pc.ctx.Done():
			return portOutput{}, windowOut(pc)
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			start := time.Now()
			conn, err := pc.dial(pc.ctx, t, p, portTimeout)
			r := portResult{Port: p, State: "open"}
			if err != nil {
				r.State = connState(err)
			} else {
				conn.Close() //nolint:errcheck // the connect is the probe: closing loses nothing
			}
			r.ConnectMS = time.Since(start).Milliseconds()
			out.Ports[i] = r
		}()
	}
	wg.Wait()
	if pc.ctx.Err() != nil {
		return portOutput{}, windowOut(pc)
	}
	return out, nil
}

// windowOut is the error of a probe whose engine window ended: the item's
// own cancellation or deadline (execution_limit, retryable).
func windowOut(pc *probeContext) error {
	if err := pc.native.Checkpoint(); err != nil {
		return err
	}
	e := toolerr.New(toolerr.ExecutionLimit)
	e.Message = "the probe did not finish within its engine window"
	return e
}

// pingInput is the input of tcp_ping.
type pingInput struct {
	Operation string `json:"operation" doc:"ping: time TCP connects to the port. This is a TCP connect time, not an ICMP echo."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Port      int    `json:"port" minimum:"1" maximum:"65535" doc:"The TCP port to connect to, e.g. 443."`
	Count     int    `json:"count,omitempty" minimum:"1" maximum:"10" default:"4" doc:"How many connects to time, 1 to 10."`
}

func (in *pingInput) SelectedOperation() string { return in.Operation }

// pingOutput is the result of tcp_ping.
type pingOutput struct {
	Host      string        `json:"host" doc:"The host as given."`
	Address   string        `json:"address" doc:"The IP address that was connected to; name resolution is not included in the times."`
	Port      int           `json:"port" minimum:"1" maximum:"65535" doc:"The port."`
	Method    string        `json:"method" enum:"tcp_connect" doc:"Always tcp_connect: the time from sending SYN to the completed TCP handshake, not an ICMP echo."`
	Sent      int           `json:"sent" minimum:"0" doc:"How many connects were attempted."`
	Connected int           `json:"connected" minimum:"0" doc:"How many connects completed."`
	MinMS     float64       `json:"min_ms" minimum:"0" doc:"The fastest completed connect in milliseconds; 0 when none completed."`
	AvgMS     float64       `json:"avg_ms" minimum:"0" doc:"The mean of the completed connects in milliseconds; 0 when none completed."`
	MaxMS     float64       `json:"max_ms" minimum:"0" doc:"The slowest completed connect in milliseconds; 0 when none completed."`
	Attempts  []pingAttempt `json:"attempts" doc:"One entry per connect, in order."`
}

type pingAttempt struct {
	Seq       int     `json:"seq" minimum:"1" doc:"The attempt number, from 1."`
	State     string  `json:"state" enum:"open,closed,filtered" doc:"open: connected; closed: refused (a reset); filtered: no answer within the timeout or unreachable."`
	ConnectMS float64 `json:"connect_ms" minimum:"0" doc:"The connect time in milliseconds (microsecond precision); for a failed attempt, the time until it failed."`
}

// pingTimeout is the most one connect waits; pingGap the pause between
// connects. Ten attempts take at most 10 × 0.7 s = 7 s, inside the 8 s
// engine window; a connect never waits past the window.
const (
	pingTimeout = 600 * time.Millisecond
	pingGap     = 100 * time.Millisecond
)

// tcpPing times count TCP connects to the checked address, one after the
// other, checkpointing before each.
func tcpPing(pc *probeContext, in *pingInput) (pingOutput, error) {
	count := in.Count
	if count == 0 {
		count = 4
	}
	if count < 1 || count > MaxPings {
		return pingOutput{}, native.Refuse(toolerr.InvalidParameters, "count: 1 to %d connects a run", MaxPings)
	}
	t, err := pc.resolve(in.Host)
	if err != nil {
		return pingOutput{}, err
	}
	out := pingOutput{Host: in.Host, Address: t.addr.String(), Port: in.Port, Method: "tcp_connect", Attempts: []pingAttempt{}}
	var sum float64
	for seq := 1; seq <= count; seq++ {
		if err := pc.native.Checkpoint(); err != nil {
			return pingOutput{}, err
		}
		if seq > 1 {
			if err := sleep(pc.ctx, pingGap); err != nil {
				return pingOutput{}, windowOut(pc)
			}
		}
		start := time.Now()
		conn, err := pc.dial(pc.ctx, t, in.Port, pingTimeout)
		elapsed := float64(time.Since(start).Microseconds()) / 1000
		if pc.ctx.Err() != nil {
			return pingOutput{}, windowOut(pc)
		}
		a := pingAttempt{Seq: seq, State: "open", ConnectMS: elapsed}
		if err != nil {
			a.State = connState(err)
		} else {
			conn.Close() //nolint:errcheck // the connect is the probe: closing loses nothing
			out.Connected++
			sum += elapsed
			if out.Connected == 1 || elapsed < out.MinMS {
				out.MinMS = elapsed
			}
			out.MaxMS = max(out.MaxMS, elapsed)
		}
		out.Sent++
		out.Attempts = append(out.Attempts, a)
	}
	if out.Connected > 0 {
		out.AvgMS = float64(int64(sum/float64(out.Connected)*1000)) / 1000
	}
	return out, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return errors.New("netprobe: the window ended")
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"syscall"
	"time"
)

// bench holds what the steps share.
type bench struct {
	c       config
	tmp     string
	machine machine
}

// roundResult is one wrk run of one server.
type roundResult struct {
	server *server
	round  int
	measured
	ok, other      int64
	ok2xxPerSecond float64
}

func newRound(s *server, round int, m measured) roundResult {
	ok, other := m.split()
	return roundResult{server: s, round: round, measured: m, ok: ok, other: other, ok2xxPerSecond: m.perSecond(ok)}
}

// sideBySide is step 1's rounds.
type sideBySide struct {
	servers []*server
	rounds  []roundResult
}

// summary is one server's medians over its rounds.
type summary struct {
	ok2xxPerSecond     float64
	other, sockErrs    int64
	p50, p99           int64 // µs
	serverCPU, otherPC float64
}

// median returns name's medians.
func (s sideBySide) median(name string) summary {
	var rs []roundResult
	for _, r := range s.rounds {
		if r.server.name == name {
			rs = append(rs, r)
		}
	}
	return summarise(rs)
}

func summarise(rs []roundResult) summary {
	f := func(get func(roundResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		return median(v)
	}
	return summary{
		ok2xxPerSecond: f(func(r roundResult) float64 { return r.ok2xxPerSecond }),
		other:          int64(f(func(r roundResult) float64 { return float64(r.other) })),
		sockErrs:       int64(f(func(r roundResult) float64 { return float64(r.socketErrors()) })),
		p50:            int64(f(func(r roundResult) float64 { return float64(r.Latency.P50) })),
		p99:            int64(f(func(r roundResult) float64 { return float64(r.Latency.P99) })),
		serverCPU:      f(func(r roundResult) float64 { return r.serverCPU }),
		otherPC:        f(func(r roundResult) float64 { return r.otherCPU() }),
	}
}

// median is the median of v (the mean of the middle two for an even
// count); v is reordered.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// sideBySide warms every server up, then runs c.rounds rounds of wrk
// against each, the order rotated by one server each round so that no
// server always runs first or last.
func (b *bench) sideBySide(ctx context.Context, servers []*server) (sideBySide, error) {
	out := sideBySide{servers: servers}
	script := runScript(runBody(b.c.text), servers[0].headers)
	if b.c.warmup > 0 {
		for _, s := range servers {
			fmt.Printf("warm-up: %s, %d s\n", s.name, b.c.warmup)
			if _, err := runWrk(ctx, b.c, b.tmp, "run", script, s.runURL, b.c.warmup, s.proc.pid()); err != nil {
				return out, err
			}
		}
	}
	for round := 1; round <= b.c.rounds; round++ {
		for i := range servers {
			s := servers[(i+round-1)%len(servers)]
			m, err := runWrk(ctx, b.c, b.tmp, "run", script, s.runURL, b.c.seconds, s.proc.pid())
			if err != nil {
				return out, err
			}
			r := newRound(s, round, m)
			fmt.Printf("round %d %-9s %8.0f 2xx/s  %7d non-2xx  p50 %s  p99 %s  CPU server %3.0f%% wrk %3.0f%% other %3.0f%%\n",
				round, s.name, r.ok2xxPerSecond, r.other, ms(r.Latency.P50), ms(r.Latency.P99), r.serverCPU, r.wrkCPU, r.otherCPU())
			out.rounds = append(out.rounds, r)
			if !s.proc.alive() {
				return out, fmt.Errorf("%s exited during round %d; its log ends:\n%s", s.name, round, s.proc.tail(20))
			}
		}
	}
	return out, nil
}

// pin is the hash service's identity in the catalogue, which a compute
// item must carry.
type pin struct {
	Contract       string `json:"contract_version"`
	Implementation string `json:"implementation_version"`
	Fingerprint    string `json:"schema_fingerprint"`
}

// hashPin reads it from Toolhost's catalogue.
func hashPin(ctx context.Context, th *server) (pin, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, th.base+"/api/v1/tools/catalog", nil)
	if err != nil {
		return pin{}, err
	}
	req.Header.Set("Authorization", th.headers["Authorization"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return pin{}, fmt.Errorf("reading the catalogue: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: closing it loses nothing
	var cat struct {
		Items []struct {
			Code string `json:"tool_code"`
			pin
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		return pin{}, fmt.Errorf("decoding the catalogue: %w", err)
	}
	for _, it := range cat.Items {
		if it.Code == "hash" {
			return it.pin, nil
		}
	}
	return pin{}, fmt.Errorf("the catalogue has no hash tool")
}

// computeResult is one compute round.
type computeResult struct {
	variant string
	roundResult
	itemsPerSecond float64
}

// compute runs the compute route, alternating, c.rounds rounds each, in
// three variants: -c connections with one token (one principal, whose
// batches the seed-000 rule serialises), -c connections with one token
// each, and -compute-connections connections (few: as many batches as the
// executor's pending-item capacity holds) with one token each.
func (b *bench) compute(ctx context.Context, th *server) ([]computeResult, error) {
	p, err := hashPin(ctx, th)
	if err != nil {
		return nil, err
	}
	one := []string{th.headers["Authorization"][len("Bearer "):]}
	wide := b.c
	few := b.c
	few.connections = max(1, b.c.computeConnections)
	few.threads = min(few.threads, few.connections)
	variants := []struct {
		name   string
		c      config
		tokens []string
	}{
		{fmt.Sprintf("1 app token, -c%d", wide.connections), wide, one},
		{fmt.Sprintf("%d app tokens, -c%d", len(th.computeTokens), wide.connections), wide, th.computeTokens},
		{fmt.Sprintf("%d app tokens, -c%d", few.connections, few.connections), few, th.computeTokens[:min(few.connections, len(th.computeTokens))]},
	}
	url := th.base + computePath
	if b.c.warmup > 0 {
		fmt.Printf("warm-up: compute, %d s\n", b.c.warmup)
		if _, err := runWrk(ctx, b.c, b.tmp, "compute", computeScript(b.c.text, p, variants[1].tokens, b.c.threads), url, b.c.warmup, th.proc.pid()); err != nil {
			return nil, err
		}
	}
	var out []computeResult
	for round := 1; round <= b.c.rounds; round++ {
		for _, v := range variants {
			script := computeScript(b.c.text, p, v.tokens, v.c.threads)
			m, err := runWrk(ctx, v.c, b.tmp, "compute", script, url, b.c.seconds, th.proc.pid())
			if err != nil {
				return nil, err
			}
			r := computeResult{variant: v.name, roundResult: newRound(th, round, m), itemsPerSecond: m.perSecond(m.Items)}
			fmt.Printf("round %d compute, %-19s %7.0f items/s  %6.0f 2xx/s  %6d non-2xx  p50 %s  p99 %s  CPU server %3.0f%% other %3.0f%%\n",
				round, v.name, r.itemsPerSecond, r.ok2xxPerSecond, r.other, ms(r.Latency.P50), ms(r.Latency.P99), r.serverCPU, r.otherCPU())
			out = append(out, r)
		}
	}
	return out, nil
}

// ms writes microseconds as milliseconds.
func ms(us int64) string {
	return fmt.Sprintf("%.2f ms", float64(us)/1000)
}

// openLoop runs the run route open-loop at rate and measures the CPU the
// server, this process (the generator) and the machine used meanwhile.
func (b *bench) openLoop(ctx context.Context, th *server, rate float64) (openLoopResult, error) {
	srv0, _ := cpuTicks(th.proc.pid())
	self0 := selfCPU()
	busy0, total0 := machineTicks()
	start := time.Now()
	o, err := openLoop(ctx, openLoopConfig{
		url: th.runURL, body: runBody(b.c.text), headers: th.headers,
		rate: rate, duration: time.Duration(b.c.openSeconds) * time.Second, warmup: time.Second,
	})
	elapsed := time.Since(start).Seconds()
	srv1, _ := cpuTicks(th.proc.pid())
	busy1, total1 := machineTicks()
	o.serverCPU = float64(srv1-srv0) / clockTicks / elapsed * 100
	o.generatorCPU = (selfCPU() - self0).Seconds() / elapsed * 100
	if total1 > total0 {
		o.machineCPU = float64(busy1-busy0) / float64(total1-total0) * 100 * float64(numCPU())
	}
	return o, err
}

// selfCPU is the user and system time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

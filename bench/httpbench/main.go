// Command httpbench is `make bench-http`: Toolhost's run route against the
// same transform in unsandboxed peers, side by side in one run, over
// loopback on this machine.
//
// It starts three servers — `toolhost serve` (a temporary data folder, the
// bundled tools folder, an app token, the guard in report mode), the gin
// peer (bench/peer) and, when node is installed and bench/express has its
// node_modules, the Express peer (bench/express) — checks that they answer
// the same request with the same bytes (the execution id aside), and then:
//
//  1. drives each with the same wrk command (-t2 -c32 by default, a Lua
//     script posting the same body with the same headers and counting
//     answers by status) in alternating rounds, the order rotated each
//     round, and prints per round and as medians the 2xx answers a second,
//     the non-2xx count, wrk's p50 and p99 latency, and the ratios
//     Toolhost/Express and Toolhost/gin;
//  2. drives Toolhost's compute route (seed 000) with batches of four
//     `hash` items, with one app token (one principal, whose batches the
//     seed-000 rule serialises) and with one app token per connection, and
//     prints the succeeded items a second;
//  3. drives the run route open-loop at half its measured peak (the
//     median 2xx/s of step 1) and prints the latency percentiles measured
//     from each request's scheduled send time, so that queueing is not
//     hidden by the generator waiting (coordinated omission).
//
// Every round records the CPU the server and wrk used and what the whole
// machine used, so that a reader can see whether other work competed.
// Every process it starts is stopped when it ends, fails or is
// interrupted. docs/performance.md ("HTTP") has the figures and bench/README.md
// the usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// config is the command line.
type config struct {
	toolhost, peer, expressDir, toolsDir, cacheDir string
	wrk                                            string
	seconds, warmup, openSeconds                   int
	rounds, threads, connections                   int
	computeConnections                             int
	openRate                                       float64
	text                                           string
	skipCompute, skipOpen, keep                    bool
}

// errMissingTool is returned when a program the benchmark needs (wrk,
// the binaries it drives) is not installed or not built.
var errMissingTool = errors.New("missing program")

func main() {
	var c config
	flag.StringVar(&c.toolhost, "toolhost", "bin/toolhost", "the toolhost binary")
	flag.StringVar(&c.peer, "peer", "bin/bench-peer", "the gin peer's binary (bench/peer)")
	flag.StringVar(&c.expressDir, "express", "bench/express", "the Express peer's folder, with node_modules installed (npm ci); empty skips it")
	flag.StringVar(&c.toolsDir, "tools-dir", "wasm", "the tools folder toolhost serves (the bundled modules: make wasm)")
	flag.StringVar(&c.cacheDir, "cache-dir", "", "toolhost's compiled-module cache (default: its own default, so that a second run does not recompile)")
	flag.StringVar(&c.wrk, "wrk", "wrk", "the wrk binary")
	flag.IntVar(&c.seconds, "seconds", 5, "the length of each measured round, in seconds ($BENCH_HTTP_SECONDS in make)")
	flag.IntVar(&c.warmup, "warmup", 2, "a warm-up run of each server before the rounds, in seconds (0: none)")
	flag.IntVar(&c.openSeconds, "open-seconds", 0, "the length of the open-loop run, in seconds (default: -seconds)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds of each server")
	flag.IntVar(&c.threads, "threads", 2, "wrk threads (-t)")
	flag.IntVar(&c.connections, "connections", 32, "wrk connections (-c)")
	flag.IntVar(&c.computeConnections, "compute-connections", 2, "the connections of the compute route's third variant (2: two batches of four are the executor's eight pending items)")
	flag.Float64Var(&c.openRate, "open-rate", 0, "the open-loop rate, requests a second (default: half the run route's median 2xx/s)")
	flag.StringVar(&c.text, "text", "The quick brown fox jumps over the lazy dog", "the text every request hashes (43 bytes by default, as in issue 13)")
	flag.BoolVar(&c.skipCompute, "skip-compute", false, "skip the compute route")
	flag.BoolVar(&c.skipOpen, "skip-open-loop", false, "skip the open-loop run")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary folder (toolhost's data and log, the wrk scripts) and print its path")
	flag.Parse()
	if c.openSeconds <= 0 {
		c.openSeconds = c.seconds
	}
	if c.seconds < 1 || c.warmup < 0 || c.rounds < 1 || c.threads < 1 || c.connections < c.threads {
		fmt.Fprintln(os.Stderr, "httpbench: -seconds ≥ 1, -rounds ≥ 1 and -connections ≥ -threads ≥ 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpbench:", err)
		if errors.Is(err, errMissingTool) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run is the whole benchmark. Every server it starts is stopped before it
// returns, whatever happened.
func run(ctx context.Context, c config) (err error) {
	if c.wrk, err = lookPath(c.wrk); err != nil {
		return fmt.Errorf("%w: wrk is not installed (Debian: apt-get install wrk); the benchmark drives every server with it", errMissingTool)
	}
	for _, p := range []*string{&c.toolhost, &c.peer} {
		if *p, err = lookPath(*p); err != nil {
			return fmt.Errorf("%w: %v (make bench-http builds it)", errMissingTool, err)
		}
	}
	tmp, err := os.MkdirTemp("", "httpbench-")
	if err != nil {
		return err
	}
	defer func() {
		if c.keep {
			fmt.Printf("\nkept %s\n", tmp)
			return
		}
		if err := os.RemoveAll(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "httpbench: removing the temporary folder:", err)
		}
	}()
	procs := newProcesses(filepath.Join(tmp, "logs"))
	defer func() {
		if serr := procs.stopAll(); serr != nil && err == nil {
			err = serr
		}
	}()

	m := describeMachine()
	var out strings.Builder
	m.print(&out, c)
	if err := printOut(&out); err != nil {
		return err
	}

	servers, err := startServers(ctx, c, tmp, procs)
	if err != nil {
		return err
	}
	if err := sameAnswers(ctx, servers, c.text); err != nil {
		return err
	}
	b := &bench{c: c, tmp: tmp, machine: m}
	side, err := b.sideBySide(ctx, servers)
	if err != nil {
		return err
	}
	printSideBySide(&out, c, side)
	if err := printOut(&out); err != nil {
		return err
	}
	th := servers[0]
	var compute []computeResult
	if !c.skipCompute {
		if compute, err = b.compute(ctx, th); err != nil {
			return err
		}
		printCompute(&out, c, compute, side)
		if err := printOut(&out); err != nil {
			return err
		}
	}
	if !c.skipOpen {
		peak := side.median(th.name).ok2xxPerSecond
		rate := c.openRate
		if rate <= 0 {
			rate = peak / 2
		}
		// Every server at the same rate, Toolhost first: the peers' rows
		// are the floor that the generator and the machine allow.
		var rows []openLoopRow
		for _, s := range servers {
			o, err := b.openLoop(ctx, s, rate)
			if err != nil {
				return err
			}
			rows = append(rows, openLoopRow{s.label, o})
		}
		printOpenLoop(&out, peak, rows)
		if err := printOut(&out); err != nil {
			return err
		}
	}
	if warn, errs := th.proc.logLevels(); warn+errs > 0 {
		fmt.Printf("\ntoolhost logged %d warnings and %d errors during the run (-keep keeps its log)\n", warn, errs)
	}
	return nil
}

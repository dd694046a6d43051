package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine is what the figures were measured on.
type machine struct {
	date, cpuModel, kernel, load, commit string
	cpus                                 int
	goVersion, node, wrk                 string
}

// describeMachine reads the machine's description from /proc and the
// tools' versions.
func describeMachine() machine {
	m := machine{
		date: time.Now().UTC().Format("2006-01-02 15:04 MST"), cpus: numCPU(),
		goVersion: runtime.Version(), node: commandOutput("node", "--version"),
		wrk: commandOutput("wrk", "-v"), cpuModel: "unknown",
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			m.load = strings.Join(f[:3], " ")
		}
	}
	m.commit = commandOutput("git", "rev-parse", "--short", "HEAD")
	if m.commit != "" && commandOutput("git", "status", "--porcelain", "--untracked-files=no") != "" {
		m.commit += " (with uncommitted changes)"
	}
	return m
}

// printOut writes the report's section in out to stdout and empties out.
func printOut(out *strings.Builder) error {
	_, err := os.Stdout.WriteString(out.String())
	out.Reset()
	return err
}

// numCPU is the CPUs this process may run on, as nproc counts them.
func numCPU() int { return runtime.NumCPU() }

func (m machine) print(w *strings.Builder, c config) {
	fmt.Fprintf(w, "httpbench %s\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(w, "date: %s\nmachine: %d CPUs (nproc), %s, Linux %s, load average %s before\n", m.date, m.cpus, m.cpuModel, m.kernel, m.load)
	fmt.Fprintf(w, "versions: %s, node %s, %s, commit %s\n", m.goVersion, orNone(m.node), orNone(m.wrk), orNone(m.commit))
	fmt.Fprintf(w, "load: wrk -t%d -c%d -d%ds --timeout 10s, %d rounds of each server (warm-up %d s each)\n\n",
		c.threads, c.connections, c.seconds, c.rounds, c.warmup)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// printSideBySide prints step 1's medians and ratios as a Markdown table.
func printSideBySide(w *strings.Builder, c config, s sideBySide) {
	fmt.Fprintf(w, "\nRun route, POST %s, wrk -t%d -c%d, median of %d rounds of %d s:\n\n", runPath, c.threads, c.connections, c.rounds, c.seconds)
	fmt.Fprintln(w, "| server | 2xx req/s | (min–max) | non-2xx a round | p50 | p99 | server CPU | other CPU |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, srv := range s.servers {
		m := s.median(srv.name)
		lo, hi := s.spread(srv.name)
		other := fmt.Sprint(m.other)
		if codes := s.otherStatuses(srv.name); codes != "" {
			other += " (" + codes + ")"
		}
		if m.sockErrs > 0 {
			other += fmt.Sprintf(", %d without answer", m.sockErrs)
		}
		fmt.Fprintf(w, "| %s | **%.0f** | %.0f–%.0f | %s | %s | %s | %.0f %% | %.0f %% |\n",
			srv.label, m.ok2xxPerSecond, lo, hi, other, ms(m.p50), ms(m.p99), m.serverCPU, m.otherPC)
	}
	th := s.median("toolhost").ok2xxPerSecond
	fmt.Fprintln(w)
	for _, srv := range s.servers[1:] {
		if p := s.median(srv.name).ok2xxPerSecond; p > 0 {
			fmt.Fprintf(w, "Toolhost/%s = %.2f×\n", srv.name, th/p)
		}
	}
	fmt.Fprintln(w, "(latency: wrk's, closed-loop, over every answer whatever its status; CPU: % of one core, \"other\" is the machine's CPU not used by the server or wrk)")
}

// spread is the lowest and highest 2xx/s of name's rounds.
func (s sideBySide) spread(name string) (lo, hi float64) {
	first := true
	for _, r := range s.rounds {
		if r.server.name != name {
			continue
		}
		if first || r.ok2xxPerSecond < lo {
			lo = r.ok2xxPerSecond
		}
		if first || r.ok2xxPerSecond > hi {
			hi = r.ok2xxPerSecond
		}
		first = false
	}
	return lo, hi
}

// otherStatuses lists the non-2xx statuses name answered over its rounds,
// with their totals.
func (s sideBySide) otherStatuses(name string) string {
	var rs []roundResult
	for _, r := range s.rounds {
		if r.server.name == name {
			rs = append(rs, r)
		}
	}
	return statusList(rs)
}

func statusList(rs []roundResult) string {
	sum := map[string]int64{}
	for _, r := range rs {
		for k, v := range r.Statuses {
			if k < "200" || k >= "300" {
				sum[k] += v
			}
		}
	}
	var parts []string
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d in all", k, sum[k]))
	}
	return strings.Join(parts, ", ")
}

// printCompute prints step 2's medians.
func printCompute(w *strings.Builder, c config, rs []computeResult, s sideBySide) {
	fmt.Fprintf(w, "\nCompute route, POST %s, batches of 4 hash items, wrk -t%d -c%d, median of %d rounds of %d s:\n\n", computePath, c.threads, c.connections, c.rounds, c.seconds)
	fmt.Fprintln(w, "| tokens | succeeded items/s | batches 2xx/s | non-2xx a round | p50 | p99 | server CPU | other CPU | items/s ÷ run route 2xx/s |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	run := s.median("toolhost").ok2xxPerSecond
	var variants []string
	for _, r := range rs {
		if !slices.Contains(variants, r.variant) {
			variants = append(variants, r.variant)
		}
	}
	for _, v := range variants {
		var rounds []roundResult
		var items []float64
		for _, r := range rs {
			if r.variant == v {
				rounds = append(rounds, r.roundResult)
				items = append(items, r.itemsPerSecond)
			}
		}
		m := summarise(rounds)
		it := median(items)
		other := fmt.Sprint(m.other)
		if codes := statusList(rounds); codes != "" {
			other += " (" + codes + ")"
		}
		ratio := "—"
		if run > 0 {
			ratio = fmt.Sprintf("%.2f", it/run)
		}
		fmt.Fprintf(w, "| %s | **%.0f** | %.0f | %s | %s | %s | %.0f %% | %.0f %% | %s |\n",
			v, it, m.ok2xxPerSecond, other, ms(m.p50), ms(m.p99), m.serverCPU, m.otherPC, ratio)
	}
}

// openLoopRow is one server's open-loop run.
type openLoopRow struct {
	label string
	o     openLoopResult
}

// printOpenLoop prints step 3: one row per server, all at the same rate
// (half Toolhost's peak).
func printOpenLoop(w *strings.Builder, peak float64, rows []openLoopRow) {
	if len(rows) == 0 {
		return
	}
	o0 := rows[0].o
	fmt.Fprintf(w, "\nRun route open-loop at %.0f req/s (half Toolhost's median peak %.0f 2xx/s) for %s, each server in turn, latency from each request's due time:\n\n", o0.rate, peak, o0.duration)
	fmt.Fprintln(w, "| server | due | 2xx | non-2xx | no answer | not sent | p50 | p90 | p99 | p99.9 | max | send lag p99 | CPU server / generator / other |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		o := r.o
		d := func(p float64) string { return fmt.Sprintf("%.2f ms", float64(percentile(o.lat, p))/1e6) }
		maxLat := "—"
		if len(o.lat) > 0 {
			maxLat = fmt.Sprintf("%.2f ms", float64(o.lat[len(o.lat)-1])/1e6)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %s | %s | **%s** | %s | %s | %.2f ms | %.0f / %.0f / %.0f %% |\n",
			r.label, o.recorded, o.ok, o.non2xx, o.failed, o.dropped, d(50), d(90), d(99), d(99.9), maxLat,
			float64(percentile(o.lag, 99))/1e6, o.serverCPU, o.generatorCPU, max(0, o.machineCPU-o.serverCPU-o.generatorCPU))
	}
	fmt.Fprintln(w, "(percentiles over the 2xx answers; \"send lag\" is how late the generator itself sent a request after it was due, already inside the latencies; CPU in % of one core, \"other\" the machine's CPU used by neither)")
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Issue 14's goals.
const (
	goalListening = 200 * time.Millisecond
	goalFirstHash = 5 * time.Second
	goalWarmReady = 500 * time.Millisecond
	goalDrop      = 2 * time.Second
	goalSizeBytes = 2_500_000       // 2.5 MB
	goalHelloSize = 1_500_000       // 1.5 MB
	goalRSSBytes  = 100 * (1 << 20) // 100 MiB
)

// report prints the goal table and the per-module table in Markdown.
func report(w *strings.Builder, c config, toolhost string, r results) {
	version := strings.TrimSpace(commandOutput(toolhost, "version"))
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\n%s, %d cores (GOMAXPROCS %d), load average %s at the end; %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.GOMAXPROCS(0),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "), version)
	fmt.Fprintf(w, "%d module(s) from %s; %d cold start(s), %d warm restart(s): the median (min–max)\n\n",
		len(r.modules), c.toolsDir, c.coldRuns, c.warmRuns)

	pick := func(fs []startFigures, get func(startFigures) time.Duration) []time.Duration {
		var ds []time.Duration
		for _, f := range fs {
			ds = append(ds, get(f))
		}
		return ds
	}
	listening := func(f startFigures) time.Duration { return f.listening }
	ready := func(f startFigures) time.Duration { return f.ready }
	firstHash := func(f startFigures) time.Duration { return f.firstHash }
	readyCPU := func(f startFigures) time.Duration { return f.readyCPU }

	fmt.Fprintln(w, "| metric | goal | measured | |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	durRow(w, "start → listening (`/healthz` 200), cold cache", goalListening, pick(r.cold, listening))
	durRow(w, "start → listening, warm restart", goalListening, pick(r.warm, listening))
	durRow(w, "start on a cold cache → first successful `hash` run", goalFirstHash, pick(r.cold, firstHash))
	durRow(w, "start on a cold cache → `/readyz` 200 (every module)", 0, pick(r.cold, ready))
	durRow(w, "warm restart → `/readyz` 200", goalWarmReady, pick(r.warm, ready))
	durRow(w, "warm restart → first successful `hash` run", 0, pick(r.warm, firstHash))
	var compiledCold []time.Duration
	for _, f := range r.cold {
		if f.interpreted > 0 {
			compiledCold = append(compiledCold, f.compiled)
		}
	}
	durRow(w, "start on a cold cache → every module on its compiled tier", 0, compiledCold)
	for _, f := range r.warm {
		if f.interpreted > 0 {
			fmt.Fprintf(w, "| modules a warm restart served from the interpreter | 0 | %d | |\n", f.interpreted)
			break
		}
	}
	durRow(w, "serve's CPU (user + system) until `/readyz` 200, cold cache", 0, pick(r.cold, readyCPU))
	durRow(w, "serve's CPU until `/readyz` 200, warm restart", 0, pick(r.warm, readyCPU))
	switch {
	case c.skipDrop:
	case r.dropErr != nil:
		fmt.Fprintf(w, "| `%s` dropped into a running server, cold cache → first `hash` run | ≤ %g s | failed: %s | **not met** |\n",
			c.hashIn, goalDrop.Seconds(), oneLine(r.dropErr))
	default:
		durRow(w, fmt.Sprintf("`%s` dropped into a running server, cold cache → first `hash` run", c.hashIn), goalDrop, []time.Duration{r.drop})
	}
	var sizes []string
	sizesMet := true
	for _, m := range r.modules {
		sizes = append(sizes, fmt.Sprintf("%s %s", strings.TrimSuffix(m.name, ".wasm"), megabytes(m.sizeBytes)))
		sizesMet = sizesMet && m.sizeBytes <= goalSizeBytes
	}
	fmt.Fprintf(w, "| module size | ≤ 2.5 MB each | %s | %s |\n", strings.Join(sizes, ", "), met(sizesMet))
	if r.hello != nil {
		fmt.Fprintf(w, "| a hello-world tool's size (`toolhost new hello`, built as its README says) | ≤ 1.5 MB | %s | %s |\n",
			megabytes(r.hello.sizeBytes), met(r.hello.sizeBytes <= goalHelloSize))
	}
	bytesOf := func(fs []startFigures, field func(startFigures) int64) []int64 {
		var ns []int64
		for _, f := range fs {
			ns = append(ns, field(f))
		}
		return ns
	}
	rss := func(f startFigures) int64 { return f.rssBytes }
	peak := func(f startFigures) int64 { return f.peakBytes }
	rssRow(w, fmt.Sprintf("idle RSS of serve, warm (`VmRSS` %s after ready and every compile)", c.idle), goalRSSBytes, bytesOf(r.warm, rss))
	rssRow(w, "idle RSS of serve, cold", 0, bytesOf(r.cold, rss))
	rssRow(w, "peak RSS of serve, cold start (`VmHWM` once every module is compiled)", 0, bytesOf(r.cold, peak))
	rssRow(w, "peak RSS of serve, warm restart", 0, bytesOf(r.warm, peak))

	if c.skipCheck {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| module | size | load, cold cache: wall, CPU | load, warm: wall, CPU | cache written |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	all := r.modules
	if r.hello != nil {
		all = append(slices.Clone(all), *r.hello)
	}
	for _, m := range all {
		fmt.Fprintf(w, "| `%s` | %s | %s, %s | %s, %s | %s |\n", m.name, megabytes(m.sizeBytes),
			seconds(m.cold), seconds(m.coldCPU), spread(m.warm), spread(m.warmCPU), megabytes(m.cacheBytes))
	}
	fmt.Fprintln(w, "\nA load is `toolhost check MODULE --cache-dir DIR`: the whole process, its wall time and its user + system CPU.")
}

// durRow prints one duration row; goal 0 is no goal.
func durRow(w *strings.Builder, metric string, goal time.Duration, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	g, verdict := "—", ""
	if goal > 0 {
		g = fmt.Sprintf("≤ %g s", goal.Seconds())
		verdict = met(median(ds) <= goal)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", metric, g, spread(ds), verdict)
}

// rssRow prints one RSS row; goal 0 is no goal.
func rssRow(w *strings.Builder, metric string, goal int64, ns []int64) {
	if len(ns) == 0 {
		return
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	mid := s[len(s)/2]
	text := mebibytes(mid)
	if len(s) > 1 {
		text += fmt.Sprintf(" (%s–%s)", strings.TrimSuffix(mebibytes(s[0]), " MiB"), strings.TrimSuffix(mebibytes(s[len(s)-1]), " MiB"))
	}
	g, verdict := "—", ""
	if goal > 0 {
		g = "≤ " + mebibytes(goal)
		verdict = met(mid <= goal)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", metric, g, text, verdict)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// median is the middle of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// spread is the median of ds with its range when there are several.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "—"
	}
	if len(ds) == 1 {
		return seconds(ds[0])
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	return fmt.Sprintf("%s (%s–%s)", seconds(median(ds)), trimUnit(seconds(lo)), trimUnit(seconds(hi)))
}

// seconds formats d in seconds: two decimals below 10 s, one above.
func seconds(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func trimUnit(s string) string { return strings.TrimSuffix(s, " s") }

// megabytes formats n in MB (10^6 bytes), the unit of the size goal.
func megabytes(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

// mebibytes formats n in MiB, the unit of the RSS goal.
func mebibytes(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// oneLine is err's first line.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// commandOutput is what name prints, or "" when it fails.
func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

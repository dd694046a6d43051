package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// resultPrefix opens the one line of wrk's output that the scripts' done()
// writes: a JSON document of the run.
const resultPrefix = "HTTPBENCH "

// wrkResult is that document. Latencies are wrk's, in microseconds, over
// every answer whatever its status, measured closed-loop (from when each
// connection sent its request).
type wrkResult struct {
	DurationUS int64 `json:"duration_us"`
	Requests   int64 `json:"requests"`
	Bytes      int64 `json:"bytes"`
	Errors     struct {
		Connect int64 `json:"connect"`
		Read    int64 `json:"read"`
		Write   int64 `json:"write"`
		Status  int64 `json:"status"`
		Timeout int64 `json:"timeout"`
	} `json:"errors"`
	Latency struct {
		Min  int64   `json:"min"`
		Mean float64 `json:"mean"`
		P50  int64   `json:"p50"`
		P90  int64   `json:"p90"`
		P99  int64   `json:"p99"`
		P999 int64   `json:"p999"`
		Max  int64   `json:"max"`
	} `json:"latency_us"`
	// Statuses counts the answers by HTTP status (the scripts' response()
	// hook), keyed by the status in decimal.
	Statuses map[string]int64 `json:"statuses"`
	// Items is, on the compute route, the sum of the 200 answers'
	// success_count.
	Items int64 `json:"items"`
}

// socketErrors is the count of requests that got no answer.
func (r wrkResult) socketErrors() int64 {
	return r.Errors.Connect + r.Errors.Read + r.Errors.Write + r.Errors.Timeout
}

// split returns the 2xx answers and the others.
func (r wrkResult) split() (ok, other int64) {
	for k, v := range r.Statuses {
		if s, err := strconv.Atoi(k); err == nil && s >= 200 && s < 300 {
			ok += v
		} else {
			other += v
		}
	}
	return ok, other
}

// parseWrk finds the result line in wrk's output.
func parseWrk(out []byte) (wrkResult, error) {
	var r wrkResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return r, fmt.Errorf("decoding wrk's result line: %w", err)
			}
			if r.DurationUS <= 0 {
				return r, errors.New("wrk's result line has no duration")
			}
			return r, nil
		}
	}
	return r, errors.New("wrk printed no result line")
}

// luaString quotes s as a Lua string literal that every Lua (5.1, LuaJIT)
// reads back byte for byte: printable ASCII as is, every other byte as a
// decimal escape.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// luaDone is the scripts' common part: per-thread status counts (and
// compute items) summed in done() and written as the result line.
const luaDone = `
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

statuses = {}
items = 0

function done(summary, latency, requests)
  local st, n = {}, 0
  for _, t in ipairs(threads) do
    local s = t:get("statuses")
    if s then
      for k, v in pairs(s) do st[k] = (st[k] or 0) + v end
    end
    n = n + (t:get("items") or 0)
  end
  local parts = {}
  for k, v in pairs(st) do
    parts[#parts + 1] = string.format('"%d":%d', k, v)
  end
  local e = summary.errors
  local f = math.floor
  io.write(string.format('HTTPBENCH {"duration_us":%d,"requests":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d},' ..
    '"statuses":{%s},"items":%d}\n',
    f(summary.duration), f(summary.requests), f(summary.bytes),
    e.connect, e.read, e.write, e.status, e.timeout,
    f(latency.min), latency.mean, f(latency:percentile(50)), f(latency:percentile(90)),
    f(latency:percentile(99)), f(latency:percentile(99.9)), f(latency.max),
    table.concat(parts, ","), f(n)))
end
`

// runScript is the run route's wrk script: the same request on every
// connection, answers counted by status.
func runScript(body []byte, headers map[string]string) string {
	var b strings.Builder
	b.WriteString("-- httpbench: the run route, the same request every time.\n")
	b.WriteString("wrk.method = \"POST\"\n")
	fmt.Fprintf(&b, "wrk.body = %s\n", luaString(string(body)))
	for _, k := range sortedKeys(headers) {
		fmt.Fprintf(&b, "wrk.headers[%s] = %s\n", luaString(k), luaString(headers[k]))
	}
	b.WriteString(`
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
`)
	b.WriteString(luaDone)
	return b.String()
}

// computeScript is the compute route's wrk script: batches of four hash
// items of text pinned to the live descriptor, each request with a fresh
// request_id and the next of the thread's tokens (each thread takes its
// share of tokens; with one token every request carries it), and the 200
// answers' success_count summed.
func computeScript(text string, pin pin, tokens []string, threads int) string {
	item := func(id string) map[string]any {
		return map[string]any{
			"correlation_id": id, "tool_code": "hash",
			"contract_version": pin.Contract, "implementation_version": pin.Implementation,
			"schema_fingerprint": pin.Fingerprint,
			"parameters":         map[string]string{"operation": "digest", "text": text, "algorithm": "sha256"},
		}
	}
	items, _ := json.Marshal([]any{item("a"), item("b"), item("c"), item("d")})
	prefix := `{"request_id":"httpbench-`
	suffix := `","items":` + string(items) + `}`
	var b strings.Builder
	b.WriteString("-- httpbench: the compute route, batches of four hash items.\n")
	fmt.Fprintf(&b, "local path = %s\n", luaString(computePath))
	fmt.Fprintf(&b, "local prefix, suffix = %s, %s\n", luaString(prefix), luaString(suffix))
	b.WriteString("local tokens = {")
	for i, t := range tokens {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(luaString(t))
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "local nthreads = %d\n", threads)
	b.WriteString(`local mine, n = {}, 0

function init(args)
  local per = math.floor(#tokens / nthreads)
  for i = 1, per do mine[i] = tokens[(tid - 1) * per + i] end
  if #mine == 0 then mine = tokens end
end

function request()
  n = n + 1
  local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. mine[(n - 1) % #mine + 1]}
  return wrk.format("POST", path, headers, prefix .. tid .. "-" .. n .. suffix)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 200 then
    local s = body:match('"success_count":(%d+)')
    if s then items = items + tonumber(s) end
  end
end
`)
	b.WriteString(luaDone)
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// measured is one wrk run with the CPU it cost, as percentages of one core
// over the run: the server's process, wrk's, and the whole machine's (so
// that other work on the machine shows as the rest).
type measured struct {
	wrkResult
	serverCPU, wrkCPU, machineCPU float64
}

// perSecond is n over the run's duration.
func (m measured) perSecond(n int64) float64 {
	return float64(n) / (float64(m.DurationUS) / 1e6)
}

// otherCPU is the machine's CPU not spent by the server or wrk.
func (m measured) otherCPU() float64 { return max(0, m.machineCPU-m.serverCPU-m.wrkCPU) }

// runWrk runs wrk with the script for seconds against url and measures the
// CPU of server (its pid) and of the machine meanwhile.
func runWrk(ctx context.Context, c config, dir, name, script, url string, seconds, serverPID int) (measured, error) {
	path := filepath.Join(dir, name+".lua")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		return measured{}, err
	}
	cmd := exec.CommandContext(ctx, c.wrk, "-t", strconv.Itoa(c.threads), "-c", strconv.Itoa(c.connections),
		"-d", strconv.Itoa(seconds)+"s", "--timeout", "10s", "-s", path, url)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	srv0, _ := cpuTicks(serverPID)
	busy0, total0 := machineTicks()
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start).Seconds()
	srv1, _ := cpuTicks(serverPID)
	busy1, total1 := machineTicks()
	if ctx.Err() != nil {
		return measured{}, ctx.Err()
	}
	if err != nil {
		return measured{}, fmt.Errorf("wrk against %s: %v: %s", name, err, bytes.TrimSpace(out.Bytes()))
	}
	r, err := parseWrk(out.Bytes())
	if err != nil {
		return measured{}, fmt.Errorf("wrk against %s: %w: %s", name, err, bytes.TrimSpace(out.Bytes()))
	}
	m := measured{wrkResult: r}
	m.serverCPU = float64(srv1-srv0) / clockTicks / elapsed * 100
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.wrkCPU = (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds() / elapsed * 100
	}
	if total1 > total0 {
		// /proc/stat's first line sums every CPU: scale to one core.
		m.machineCPU = float64(busy1-busy0) / float64(total1-total0) * 100 * float64(numCPU())
	}
	return m, nil
}

// machineTicks returns the busy and total ticks of all CPUs from
// /proc/stat (busy is everything but idle and iowait).
func machineTicks() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		if i >= 8 { // guest time is already in user
			break
		}
		v, _ := strconv.ParseInt(s, 10, 64)
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// runPath is the hash tool's run route; runBody is the request, as in
// bench/httpbench.
const runPath = "/api/v1/tools/hash/run"

var runBody = []byte(`{"input":{"operation":"digest","text":"The quick brown fox jumps over the lazy dog","algorithm":"sha256"}}`)

// stopGrace is how long serve has to stop after SIGTERM before its process
// group is killed; serve is started with a shorter shutdown timeout.
const stopGrace = 15 * time.Second

// bench holds what every measurement shares.
type bench struct {
	c        config
	toolhost string
	tmp      string
}

// startFigures are one start of serve, each from the moment the process
// was started.
type startFigures struct {
	listening time.Duration // /healthz 200
	ready     time.Duration // /readyz 200
	firstHash time.Duration // the first 200 of the run route with status succeeded
	readyCPU  time.Duration // serve's user and system CPU when ready was seen
	// interpreted is how many modules the first scan served from the
	// interpreter while they compiled; compiled is when the last of them
	// was swapped to its compiled tier (or its compile failed), 0 when none.
	interpreted int
	compiled    time.Duration
	rssBytes    int64 // VmRSS -idle after every module is compiled
	peakBytes   int64 // VmHWM then: the most serve was resident at once
}

// check loads module alone with `toolhost check MODULE --cache-dir DIR`:
// once on an empty cache folder, then -warm-runs times on the same folder.
// Each figure is the process's wall time, its start and exit included.
func (b *bench) check(ctx context.Context, module string, mf *moduleFigures) error {
	cache := filepath.Join(b.tmp, "check-"+strings.TrimSuffix(mf.name, ".wasm"))
	once := func() (wall, cpu time.Duration, err error) {
		cmd := exec.CommandContext(ctx, b.toolhost, "check", module, "--cache-dir", cache)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err = cmd.Run()
		wall = time.Since(start)
		if err != nil {
			return 0, 0, fmt.Errorf("toolhost check %s: %v\n%s", module, err, joinLines(out.String(), 10))
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	var err error
	if mf.cold, mf.coldCPU, err = once(); err != nil {
		return err
	}
	mf.cacheBytes = dirBytes(cache)
	for range b.c.warmRuns {
		d, cpu, err := once()
		if err != nil {
			return err
		}
		mf.warm = append(mf.warm, d)
		mf.warmCPU = append(mf.warmCPU, cpu)
	}
	return nil
}

// buildHello writes the hello-world tool with `toolhost new hello`
// against the local guest SDK and builds it as its README says, offline
// as an author outside the repository would (the module's own go.mod, a
// replace to the SDK, no workspace), and returns the module's path.
func (b *bench) buildHello(ctx context.Context) (string, error) {
	guestDir, err := filepath.Abs(b.c.guestDir)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(b.tmp, "hello")
	run := func(cmd *exec.Cmd) error {
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, joinLines(string(out), 10))
		}
		return nil
	}
	if err := run(exec.CommandContext(ctx, b.toolhost, "new", "hello", "--dir", dir, "--guest-replace", guestDir)); err != nil {
		return "", err
	}
	// As its README says: go generate, then the guestgen build.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
	generate := exec.CommandContext(ctx, b.c.goTool, "generate", "./...")
	generate.Dir, generate.Env = dir, env
	if err := run(generate); err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, b.c.goTool, "build", "-trimpath", "-tags", "guestgen", "-buildmode=c-shared", "-o", "hello.wasm", ".")
	build.Dir = dir
	build.Env = append(env, "GOOS=wasip1", "GOARCH=wasm")
	if err := run(build); err != nil {
		return "", err
	}
	return filepath.Join(dir, "hello.wasm"), nil
}

// serveProcess is one started `toolhost serve`.
type serveProcess struct {
	cmd     *exec.Cmd
	base    string
	logPath string
	started time.Time
	exited  chan struct{}
}

// startServe starts serve on a free loopback port, leading its own process
// group, with its output in NAME.log; the child gets SIGTERM if the
// benchmark dies first.
func (b *bench) startServe(name, tools, cache, data string) (*serveProcess, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(b.tmp, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // the child writes the log through its own descriptor
	cmd := exec.Command(b.toolhost, "serve", "--addr", addr, "--tools-dir", tools,
		"--cache-dir", cache, "--data-dir", data, "--drain-delay", "0", "--shutdown-timeout", "10s")
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	p := &serveProcess{cmd: cmd, base: "http://" + addr, logPath: logPath, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting toolhost serve: %w", err)
	}
	go func() {
		cmd.Wait() //nolint:errcheck // the exit is what stop waits for; serve stopped by a signal exits non-zero
		close(p.exited)
	}()
	return p, nil
}

// stop sends serve SIGTERM and waits for it, then kills its process group
// after stopGrace. It is safe to call more than once.
func (p *serveProcess) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	// A signal that fails finds the process gone (its exit is then near):
	// the wait below settles it either way.
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // see above
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // see above
		<-p.exited
	}
}

// failure is err with the tail of serve's log.
func (p *serveProcess) failure(what string, err error) error {
	b, _ := os.ReadFile(p.logPath)
	return fmt.Errorf("%s: %w; serve's log (%s) ends:\n%s", what, err, p.logPath, joinLines(string(b), 15))
}

// start starts serve and measures one start: listening, ready and the
// first hash run, polled side by side, then the idle RSS; it stops serve.
func (b *bench) start(ctx context.Context, name, tools, cache, data string) (startFigures, error) {
	var f startFigures
	p, err := b.startServe(name, tools, cache, data)
	if err != nil {
		return f, err
	}
	defer p.stop()
	ctx, cancel := context.WithTimeout(ctx, b.c.limit)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	probes := []struct {
		d  *time.Duration
		ok func(context.Context) bool
	}{
		{&f.listening, func(ctx context.Context) bool { return get(ctx, p.base+"/healthz") == http.StatusOK }},
		{&f.ready, func(ctx context.Context) bool {
			if get(ctx, p.base+"/readyz") != http.StatusOK {
				return false
			}
			f.readyCPU, _ = processCPU(p.cmd.Process.Pid)
			return true
		}},
		{&f.firstHash, func(ctx context.Context) bool { return hashRun(ctx, p.base) }},
	}
	for i, pr := range probes {
		wg.Go(func() {
			*pr.d, errs[i] = p.poll(ctx, b.c.poll, pr.ok)
		})
	}
	wg.Wait()
	for i, what := range []string{"listening", "ready", "first hash run"} {
		if errs[i] != nil {
			return f, p.failure(name+": "+what, errs[i])
		}
	}
	// Idle means no compile left running in the background either, and a
	// warm restart needs the compiled code in the cache: wait for the swaps.
	if f.interpreted, f.compiled, err = p.waitCompiled(ctx); err != nil {
		return f, p.failure(name+": waiting for the compiled tiers", err)
	}
	select {
	case <-time.After(b.c.idle):
	case <-ctx.Done():
		return f, ctx.Err()
	}
	if f.rssBytes, err = statusBytes(p.cmd.Process.Pid, "VmRSS"); err != nil {
		return f, p.failure(name+": reading VmRSS", err)
	}
	if f.peakBytes, err = statusBytes(p.cmd.Process.Pid, "VmHWM"); err != nil {
		return f, p.failure(name+": reading VmHWM", err)
	}
	return f, nil
}

// poll calls ok every interval until it is true and returns the time from
// the process's start; it fails when serve exits or ctx ends first.
func (p *serveProcess) poll(ctx context.Context, interval time.Duration, ok func(context.Context) bool) (time.Duration, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if ok(ctx) {
			return time.Since(p.started), nil
		}
		select {
		case <-p.exited:
			return 0, fmt.Errorf("serve exited (%v)", p.cmd.ProcessState)
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return 0, errNotReady
			}
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// The registry's log lines of a tiered load (internal/registry/promote.go).
const (
	logInterpreted = `msg="registry: serving a module from the interpreter while it compiles"`
	logSwapped     = `msg="registry: module swapped to its compiled tier"`
	logCompileFail = `msg="registry: compiling a module failed`
)

// waitCompiled waits until every module that serve's log says is served
// from the interpreter is swapped to its compiled tier or failed to
// compile, and returns how many there were and when the last one was
// done, from the process's start (0 when there were none).
func (p *serveProcess) waitCompiled(ctx context.Context) (int, time.Duration, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		b, err := os.ReadFile(p.logPath)
		if err != nil {
			return 0, 0, err
		}
		log := string(b)
		n := strings.Count(log, logInterpreted)
		done := strings.Count(log, logSwapped) + strings.Count(log, logCompileFail)
		if done >= n {
			if n == 0 {
				return 0, 0, nil
			}
			return n, time.Since(p.started), nil
		}
		select {
		case <-p.exited:
			return 0, 0, fmt.Errorf("serve exited (%v)", p.cmd.ProcessState)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-t.C:
		}
	}
}

// drop starts serve on an empty tools folder and an empty cache, waits
// until it is ready, then moves a copy of module into the folder (a rename,
// as a careful deployment does) and returns the time from the rename to
// the first successful hash run.
func (b *bench) drop(ctx context.Context, module string) (time.Duration, error) {
	tools := filepath.Join(b.tmp, "drop-tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return 0, err
	}
	staged := filepath.Join(b.tmp, "drop-staged.wasm")
	mod, err := os.ReadFile(module)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(staged, mod, 0o644); err != nil {
		return 0, err
	}
	p, err := b.startServe("drop", tools, filepath.Join(b.tmp, "drop-cache"), filepath.Join(b.tmp, "drop-data"))
	if err != nil {
		return 0, err
	}
	defer p.stop()
	ctx, cancel := context.WithTimeout(ctx, b.c.limit)
	defer cancel()
	ready := func(ctx context.Context) bool { return get(ctx, p.base+"/readyz") == http.StatusOK }
	if _, err := p.poll(ctx, b.c.poll, ready); err != nil {
		return 0, p.failure("drop: ready", err)
	}
	dropped := time.Now()
	if err := os.Rename(staged, filepath.Join(tools, filepath.Base(module))); err != nil {
		return 0, err
	}
	if _, err := p.poll(ctx, b.c.poll, func(ctx context.Context) bool { return hashRun(ctx, p.base) }); err != nil {
		return 0, p.failure("drop: first hash run", err)
	}
	return time.Since(dropped), nil
}

// client is every probe's: a short timeout, so that a stuck request does
// not hide the next poll for long.
var client = &http.Client{Timeout: 5 * time.Second}

// get returns the status of GET url, or 0 when it got no answer.
func get(ctx context.Context, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	// Drained for the connection's reuse; the status is the answer.
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // see above
	resp.Body.Close()              //nolint:errcheck // a response body: closing it loses nothing
	return resp.StatusCode
}

// hashRun reports whether one hash run succeeded (anonymous: serve's
// guard is in report mode by default).
func hashRun(ctx context.Context, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+runPath, bytes.NewReader(runBody))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: closing it loses nothing
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return false
	}
	var doc struct {
		Status string `json:"status"`
	}
	return json.Unmarshal(body, &doc) == nil && doc.Status == "succeeded"
}

// statusBytes reads the field of pid's /proc status (VmRSS, VmHWM), in
// bytes.
func statusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	return parseStatusBytes(f, field)
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on
// every Linux this runs on.
const clockTicks = 100

// processCPU reads the user and system CPU time of pid (its own, not its
// children's) from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU is utime + stime of a /proc/PID/stat line: the 14th and
// 15th fields, counted after the command name's closing parenthesis (the
// name may hold spaces).
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected stat line %q", stat)
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is the 3rd field, state
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected stat line %q", stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseStatusBytes finds the line of field (VmRSS, VmHWM) in a
// /proc/PID/status document and returns its value in bytes.
func parseStatusBytes(r io.Reader, field string) (int64, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), field+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", field, s.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s line", field)
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // a listener that served nothing: nothing to lose
	return l.Addr().String(), nil
}

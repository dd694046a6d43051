package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
)

// The hostile catalogue, live (issue 11, "A hostile catalogue that grows"):
// every fixture of testdata/hostile, and the files no fixture can be (a
// FIFO, sparse files, generated bombs), is dropped into the tools folder of
// a running server one after another while a client keeps running hash.
// Each must be refused with its reason within its phase deadline, or, when
// it loads, its run must end with its code within its hard deadline plus
// cleanup — and hash must keep answering throughout. A new case is one
// line of hostileCases.

// The phase deadlines of the live server: short, so that a load that runs
// to its deadline costs little, and well over what the bundled module
// needs from the shared compilation cache.
const (
	liveReadTimeout     = 2 * time.Second
	liveImageTimeout    = 2 * time.Second
	liveDescribeTimeout = 1500 * time.Millisecond
	// refusalMargin is what a refusal may take past its phase deadline:
	// noticing the file (an event, or the 200 ms rescan), the 50 ms
	// settle time, the batch wait and a loaded machine.
	refusalMargin = 5 * time.Second
)

// The run cases' operation policy: hard deadline 1.5 s (the least the
// platform's 1 s output reserve allows with a 400 ms soft deadline), and a
// 64 MiB memory limit, so that a bomb's memory is bounded in the RSS check.
const (
	runHard        = 1500 * time.Millisecond
	runMemoryBytes = 64 << 20
	// runMargin is what a run may take past its hard deadline: the
	// executor's cleanup (the operation's cleanup budget is 2 s) and the
	// round trip on a loaded machine.
	runMargin = 3 * time.Second
)

// The bounds of the process checked at the end of the sequence: what RSS
// and the thread count may have grown by. Every item is capped at 64 MiB
// and a file is never read past its size limit; reading the 1 GiB sparse
// file whole (issue 11, item 5) or instantiating the table bomb (800 MB)
// would blow the RSS bound. The race detector's shadow memory multiplies
// what the heap holds (measured: +10 MiB without it, +370 MiB with it),
// hence raceRSSExtra. A FIFO that blocked open() would pin a thread
// for good; Go keeps idle threads, so the bound leaves room for the
// scheduler's own.
const (
	rssGrowthBound    = 384<<20 + raceRSSExtra
	threadGrowthBound = 24
)

// hostileCase is one hostile input and its expected outcome.
type hostileCase struct {
	name string
	// drop puts the case's files into the tools folder and returns the
	// module's file name (the name diagnostics report).
	drop func(t *testing.T, r *rig) string
	// refused: the module is refused as a whole (import_failed) with one
	// of these details ("x/*": any detail under x), or, when reason is
	// set, with that reason.
	refused []string
	reason  string
	// listed: the module loads and this tool code is listed.
	listed string
	// run: the listed tool's run fails with one of these codes; input is
	// its run request, the sidecar tools' by default.
	run   []string
	input string
	// within is the phase deadline a refusal must come within (plus
	// refusalMargin); zero means the read deadline.
	within time.Duration
}

// hostileCases is the catalogue. Fixtures are testdata/hostile/NAME.wat.
var hostileCases = []hostileCase{
	// Start, _initialize and describe loops: the load's own phases, each
	// ended by its deadline or its fuel, whichever runs out first.
	{name: "describe_loop", drop: fixture("describe_loop"), refused: []string{"load_timeout/describe", "describe_failed/execution_limit"}, within: liveDescribeTimeout + 250*time.Millisecond},
	{name: "image_loop", drop: fixture("image_loop"), refused: []string{"load_timeout/image"}, within: liveImageTimeout},
	{name: "init_host_loop", drop: fixture("init_host_loop"), refused: []string{"load_timeout/image"}, within: liveImageTimeout},
	{name: "start_host_loop", drop: fixture("start_host_loop"), refused: []string{"load_timeout/image"}, within: liveImageTimeout},
	// The start function runs once, in the image template, on its 10⁹
	// start fuel.
	{name: "start_loop", drop: fixture("start_loop"), refused: []string{"load_timeout/image"}, within: liveImageTimeout},
	// Structure bombs, refused before compiling.
	{name: "br_table of 1,000,000 labels", drop: generated("br_table_1m", func() []byte { return testkit.Funcs(1, testkit.BrTableBody(1_000_000)) }), refused: []string{"module_limits/br_table_targets"}},
	{name: "200,001 functions", drop: generated("functions_200k", func() []byte { return testkit.Funcs(200_001, []byte{0, 0x0b}) }), refused: []string{"module_limits/functions"}},
	{name: "20,000 ifs in a row", drop: generated("ifs_20k", func() []byte { return testkit.Funcs(1, testkit.RunBody("if", 20_000)) }), refused: []string{"module_limits/dominator_depths"}},
	{name: "40,000 br_ifs to one block", drop: generated("br_ifs_40k", func() []byte { return testkit.Funcs(1, testkit.RunBody("br_if", 40_000)) }), refused: []string{"module_limits/dominator_depths", "module_limits/label_branches"}},
	{name: "10,000 loops in a row", drop: generated("loops_10k", func() []byte { return testkit.Funcs(1, testkit.RunBody("loop", 10_000)) }), refused: []string{"module_limits/dominator_depths"}},
	{name: "tables_bomb", drop: fixture("tables_bomb"), refused: []string{"module_limits/tables"}},
	{name: "br_table_bomb under the defaults", drop: sidecarFixture("br_table_bomb", nil), listed: "br_table_bomb"},
	{name: "function_bomb under the defaults", drop: sidecarFixture("function_bomb", nil), listed: "function_bomb"},
	{name: "if_run_bomb under the defaults", drop: sidecarFixture("if_run_bomb", nil), listed: "if_run_bomb"},
	{name: "br_if_bomb under the defaults", drop: sidecarFixture("br_if_bomb", nil), listed: "br_if_bomb"},
	// Imports the host does not provide.
	{name: "bad_import", drop: fixture("bad_import"), refused: []string{"import_refused"}},
	{name: "imported_table", drop: fixture("imported_table"), refused: []string{"import_refused"}},
	{name: "imported_global", drop: fixture("imported_global"), refused: []string{"import_refused"}},
	// Declarations.
	{name: "no_compute", drop: fixture("no_compute"), refused: []string{"declaration_missing"}},
	{name: "describe_garbage", drop: fixture("describe_garbage"), refused: []string{"declaration_refused/*"}},
	{name: "describe_lies", drop: fixture("describe_lies"), reason: "definition_invalid"},
	// Files that are not modules, or too large to read.
	{name: "not WebAssembly", drop: generated("garbage", func() []byte { return []byte("\x00asm\x02\x00\x00\x00garbage") }), refused: []string{"module_invalid"}},
	{name: "a FIFO", drop: fifo("fifo", false), refused: []string{"not_regular_file"}},
	{name: "a link to a FIFO", drop: fifo("fifo_link", true), refused: []string{"not_regular_file"}},
	{name: "a 1 GiB sparse module", drop: sparse("sparse", 1<<30, false), refused: []string{"module_too_large"}},
	{name: "a 100 MB module", drop: sparse("oversize", 100_000_000, false), refused: []string{"module_too_large"}},
	{name: "a 1 GiB sparse sidecar", drop: sparse("sparse_sidecar", 1<<30, true), refused: []string{"sidecar_too_large"}},
	{name: "a 250-byte name", drop: longName(250), listed: "ping"},
	// Compute: host-call loops and the other runaway items end with their
	// code within the hard deadline, their lane given back.
	{name: "host_alloc_loop", drop: sidecarFixture("host_alloc_loop", nil), listed: "host_alloc_loop", run: []string{"execution_timeout", "execution_limit"}},
	{name: "host_input_set_loop", drop: sidecarFixture("host_input_set_loop", nil), listed: "host_input_set_loop", run: []string{"execution_timeout", "memory_limit"}},
	{name: "host_log_loop", drop: sidecarFixture("host_log_loop", nil), listed: "host_log_loop", run: []string{"execution_timeout", "execution_limit"}},
	{name: "host_random_loop", drop: sidecarFixture("host_random_loop", nil), listed: "host_random_loop", run: []string{"execution_timeout", "execution_limit"}},
	{name: "loop", drop: sidecarFixture("loop", nil), listed: "loop", run: []string{"execution_timeout", "execution_limit"}},
	{name: "checkpoint", drop: sidecarFixture("checkpoint", nil), listed: "checkpoint", run: []string{"execution_limit"}},
	{name: "memory_bomb", drop: sidecarFixture("memory_bomb", nil), listed: "memory_bomb", run: []string{"memory_limit"}},
	{name: "alloc_bomb", drop: sidecarFixture("alloc_bomb", nil), listed: "alloc_bomb", run: []string{"memory_limit"}},
	{name: "table_bomb", drop: sidecarFixture("table_bomb", nil), listed: "table_bomb", run: []string{"execution_limit", "execution_failed", "execution_timeout"}},
	{name: "table_charge over its memory limit", drop: sidecarFixture("table_charge", map[string]any{"memory_limit_bytes": 8_065_535}), listed: "table_charge", run: []string{"memory_limit"}},
	// The stack runs out first, but under the race detector the hard
	// deadline may come before it.
	{name: "recursion", drop: sidecarFixture("recursion", nil), listed: "recursion", run: []string{"execution_failed", "execution_timeout"}},
	{name: "output_lies", drop: fixture("output_lies"), listed: "liar", run: []string{"invalid_output"}, input: pingRun},
	{name: "output_bomb", drop: sidecarFixture("output_bomb", nil), listed: "output_bomb", run: []string{"output_limit_exceeded"}},
	{name: "trap", drop: sidecarFixture("trap", nil), listed: "trap", run: []string{"execution_failed"}},
	{name: "bad_pointer", drop: sidecarFixture("bad_pointer", nil), listed: "bad_pointer", run: []string{"execution_failed"}},
}

func TestHostileCatalogueLive(t *testing.T) {
	if testing.Short() {
		t.Skip("drops the whole hostile catalogue into a live server")
	}
	r := startConfigured(t, map[string][]byte{"codec.wasm": module(t, "plugins-src/codec")}, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Read: liveReadTimeout, Image: liveImageTimeout, Describe: liveDescribeTimeout,
			BatchWait: 200 * time.Millisecond}
	})
	if _, ok := r.liveDiagnostics().service("hash"); !ok {
		eventually(t, "hash is listed", func() bool { _, ok := r.liveDiagnostics().service("hash"); return ok })
	}
	// The hostile runs are another principal's: the hash client's own
	// concurrency limit is not what is tested.
	mallory, err := r.srv.Accounts().CreateToken(context.Background(), "mallory")
	if err != nil {
		t.Fatal(err)
	}
	if code, err := r.runTool("hash", r.token, hashRun); err != nil || code != "" {
		t.Fatalf("hash before the sequence: %q %v", code, err)
	}
	debug.FreeOSMemory()
	rss0, threads0 := procStatus(t)

	probe := startHashProbe(r)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			dropped := time.Now()
			file := c.drop(t, r)
			if c.listed != "" {
				r.awaitListed(t, c.listed, file, dropped, liveReadTimeout+liveImageTimeout+liveDescribeTimeout)
			} else {
				within := c.within
				if within == 0 {
					within = liveReadTimeout
				}
				r.awaitRefused(t, c, file, dropped, within)
			}
			if c.run != nil {
				began := time.Now()
				input := c.input
				if input == "" {
					input = `{"input":{"operation":"count","text":"x"}}`
				}
				code, err := r.runTool(c.listed, mallory, input)
				took := time.Since(began)
				switch {
				case err != nil:
					t.Errorf("run: %v after %v", err, took)
				case !slices.Contains(c.run, code):
					t.Errorf("run ended %q after %v, want one of %v", code, took, c.run)
				case took > runHard+runMargin:
					t.Errorf("run ended %q after %v, past its %v hard deadline plus %v", code, took, runHard, runMargin)
				default:
					t.Logf("run ended %s after %v", code, took.Round(time.Millisecond))
				}
			}
		})
	}
	answers, failures := probe.stop()
	t.Logf("hash answered %d runs during the sequence", answers)
	for _, f := range failures {
		t.Errorf("hash: %s", f)
	}
	if answers == 0 {
		t.Error("hash never answered during the sequence")
	}

	// The lanes are free again, and the process did not grow past its
	// bounds.
	eventually(t, "every lane is free", func() bool {
		p := r.pool()
		return p.Active == 0 && p.Pending == 0 && p.Degraded == 0
	})
	debug.FreeOSMemory()
	rss1, threads1 := procStatus(t)
	t.Logf("RSS %d → %d MiB, threads %d → %d", rss0>>20, rss1>>20, threads0, threads1)
	if rss1 > rss0+rssGrowthBound {
		t.Errorf("RSS grew from %d to %d MiB, more than %d MiB", rss0>>20, rss1>>20, rssGrowthBound>>20)
	}
	if threads1 > threads0+threadGrowthBound {
		t.Errorf("threads grew from %d to %d, more than %d", threads0, threads1, threadGrowthBound)
	}
}

// awaitRefused waits until diagnostics report file as refused as c
// expects, and checks it came within its phase deadline plus the margin.
func (r *rig) awaitRefused(t *testing.T, c hostileCase, file string, dropped time.Time, within time.Duration) {
	t.Helper()
	limit := within + refusalMargin
	for {
		d := r.liveDiagnostics()
		if f, ok := d.failure(file); ok {
			took := time.Since(dropped)
			got := f.Reason + "/" + f.Detail
			switch {
			case c.reason != "" && f.Reason != c.reason:
				t.Errorf("%s refused %s, want reason %s", file, got, c.reason)
			case c.reason == "" && (f.Reason != "import_failed" || !detailIn(f.Detail, c.refused)):
				t.Errorf("%s refused %s, want import_failed with one of %v", file, got, c.refused)
			case took > limit:
				t.Errorf("%s refused %s after %v, past its %v deadline plus %v", file, got, took, within, refusalMargin)
			default:
				t.Logf("%s refused %s after %v", file, got, took.Round(time.Millisecond))
			}
			return
		}
		if time.Since(dropped) > limit+10*time.Second {
			t.Fatalf("%s not refused %v after it was dropped; failures %+v", file, time.Since(dropped), d.Failures)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// detailIn reports whether detail is one of want, where "x/*" stands for
// any detail under x.
func detailIn(detail string, want []string) bool {
	return slices.ContainsFunc(want, func(w string) bool {
		if prefix, ok := strings.CutSuffix(w, "*"); ok {
			return strings.HasPrefix(detail, prefix)
		}
		return w == detail
	})
}

// awaitListed waits until code is listed from file.
func (r *rig) awaitListed(t *testing.T, code, file string, dropped time.Time, within time.Duration) {
	t.Helper()
	limit := within + refusalMargin
	for {
		d := r.liveDiagnostics()
		if s, ok := d.service(code); ok {
			if s.Source != file {
				t.Errorf("%s is listed from %q, want %q", code, s.Source, file)
			}
			t.Logf("%s listed after %v", code, time.Since(dropped).Round(time.Millisecond))
			return
		}
		if f, ok := d.failure(file); ok {
			t.Fatalf("%s refused %s/%s, want it listed", file, f.Reason, f.Detail)
		}
		if time.Since(dropped) > limit {
			t.Fatalf("%s not listed %v after it was dropped", code, time.Since(dropped))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveDiag is the part of the diagnostics these tests read.
type liveDiag struct {
	Descriptors []struct {
		ToolCode string `json:"tool_code"`
		Source   string `json:"source"`
	} `json:"descriptors"`
	Failures []struct {
		File     string `json:"filename"`
		ToolCode string `json:"tool_code"`
		Reason   string `json:"reason"`
		Detail   string `json:"detail"`
	} `json:"failures"`
}

func (d liveDiag) service(code string) (struct{ ToolCode, Source string }, bool) {
	for _, s := range d.Descriptors {
		if s.ToolCode == code {
			return struct{ ToolCode, Source string }{s.ToolCode, s.Source}, true
		}
	}
	return struct{ ToolCode, Source string }{}, false
}

func (d liveDiag) failure(file string) (struct{ File, ToolCode, Reason, Detail string }, bool) {
	for _, f := range d.Failures {
		if f.File == file {
			return struct{ File, ToolCode, Reason, Detail string }(f), true
		}
	}
	return struct{ File, ToolCode, Reason, Detail string }{}, false
}

func (r *rig) liveDiagnostics() liveDiag {
	r.t.Helper()
	var d liveDiag
	r.getJSON("/api/v1/tools/diagnostics", &d)
	return d
}

// runTool runs code through the run route as token and returns the error
// code of a failed run ("" when it succeeded). It is safe to call from any
// goroutine: failures are returned, not reported.
func (r *rig) runTool(code, token, body string) (string, error) {
	req, err := http.NewRequest("POST", r.url+"/api/v1/tools/"+code+"/run", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	var out struct {
		Status string `json:"status"`
		Error  *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return "", fmt.Errorf("%v in %s", err, b)
	}
	switch {
	case out.Status == "succeeded":
		return "", nil
	case out.Status == "failed" && out.Error != nil:
		return out.Error.Code, nil
	}
	return "", fmt.Errorf("unexpected answer %s", b)
}

// hashProbe runs hash in a loop and records every answer that was not a
// success within hashBound.
type hashProbe struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	answers  int
	failures []string
}

// hashBound is how long one hash run may take while hostile modules load
// and run beside it: far over its cost, far under its request deadline.
const hashBound = 10 * time.Second

func startHashProbe(r *rig) *hashProbe {
	p := &hashProbe{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.done:
				return
			default:
			}
			began := time.Now()
			code, err := r.runTool("hash", r.token, hashRun)
			took := time.Since(began)
			p.mu.Lock()
			switch {
			case err != nil || code != "":
				p.failures = append(p.failures, fmt.Sprintf("run %d at %s: code %q, %v after %v", p.answers, began.Format("15:04:05.000"), code, err, took))
			case took > hashBound:
				p.failures = append(p.failures, fmt.Sprintf("run %d answered after %v, over %v", p.answers, took, hashBound))
			}
			p.answers++
			p.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return p
}

// stop ends the probe and returns how many runs answered and what went
// wrong.
func (p *hashProbe) stop() (int, []string) {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answers, p.failures
}

// procStatus reads this process's resident memory (bytes) and thread
// count from /proc/self/status.
func procStatus(t *testing.T) (rss uint64, threads int) {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			rss = n << 10 // kB
		case "Threads":
			threads = int(n)
		}
	}
	if rss == 0 || threads == 0 {
		t.Fatalf("/proc/self/status has no VmRSS or Threads")
	}
	return rss, threads
}

// Droppers: each writes its case's files into the live folder and
// returns the module's file name.

// fixture drops testdata/hostile/NAME.wat as NAME.wasm.
func fixture(name string) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		r.drop(name+".wasm", testkit.WAT(t, name))
		return name + ".wasm"
	}
}

// generated drops the module gen builds as NAME.wasm.
func generated(name string, gen func() []byte) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		r.drop(name+".wasm", gen())
		return name + ".wasm"
	}
}

// sidecarFixture drops testdata/hostile/NAME.wat as NAME.wasm with a
// sidecar declaring the tool NAME: one operation, "count", calling the
// module's compute export under the run cases' policy, changed by policy.
func sidecarFixture(name string, policy map[string]any) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		r.drop(name+".tool.json", sidecarDeclaration(t, name, policy))
		r.drop(name+".wasm", testkit.WAT(t, name))
		return name + ".wasm"
	}
}

// sidecarDeclaration is the vowel counter's sidecar declaring code, with
// its one operation calling compute under the run cases' policy.
func sidecarDeclaration(t *testing.T, code string, policy map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", "vowels", "vowels.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decl map[string]any
	if err := json.Unmarshal(b, &decl); err != nil {
		t.Fatal(err)
	}
	s := decl["services"].([]any)[0].(map[string]any)
	s["tool_code"] = code
	s["ui"].(map[string]any)["component_key"] = code
	s["documentation"].(map[string]any)["path"] = "tools/" + code
	op := map[string]any{
		"operation": "count", "deterministic": true, "export": "compute",
		"engine_timeout_ms": 300, "soft_timeout_ms": 400, "hard_timeout_ms": runHard.Milliseconds(),
		"memory_limit_bytes": runMemoryBytes,
	}
	for k, v := range policy {
		op[k] = v
	}
	s["operations"] = []any{op}
	out, err := json.Marshal(decl)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fifo drops a FIFO as NAME.wasm, or, with link, a symbolic link to a
// FIFO outside the folder.
func fifo(name string, link bool) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		path := filepath.Join(r.tools, name+".wasm")
		target := path
		if link {
			target = filepath.Join(t.TempDir(), "fifo")
		}
		if err := syscall.Mkfifo(target, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		if link {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}
		return name + ".wasm"
	}
}

// sparse drops a sparse file of size bytes as NAME.wasm or, with sidecar,
// as the sidecar of NAME.wasm (a module without describe).
func sparse(name string, size int64, sidecar bool) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		file := name + ".wasm"
		if sidecar {
			file = name + ".tool.json"
		}
		tmp := filepath.Join(r.tools, "."+file+".tmp")
		if err := os.WriteFile(tmp, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(tmp, size); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(r.tools, file)); err != nil {
			t.Fatal(err)
		}
		if sidecar {
			r.drop(name+".wasm", testkit.WAT(t, "loop"))
		}
		return name + ".wasm"
	}
}

// longName drops ping under a name of n bytes, .wasm included.
func longName(n int) func(*testing.T, *rig) string {
	return func(t *testing.T, r *rig) string {
		name := strings.Repeat("p", n-len(".wasm")) + ".wasm"
		path := filepath.Join(r.tools, name)
		// No temporary name can be longer: write in place, settled by
		// the settle rule.
		if err := os.WriteFile(path, testkit.WAT(t, "ping"), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
}

package extismcompat_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/internal/wire"
)

// plugins are the corpus of testdata/extism: plugin NAME has its sources
// and its sidecar NAME.tool.json in testdata/extism/NAME, and `make
// extism` builds it into build/extism/NAME.wasm.
var plugins = []string{"allocfree", "badsig", "gocmd", "gopdk", "simd", "vowels", "wordcount"}

// A case is one item: a service of a corpus plugin and a parameters
// document. want is what go-sdk must give for it — the result document
// after the sidecar's output mapping (canonical JSON), or, when fails is
// set, the plugin's error text ("" when it ends without one: a command
// module's non-zero exit), or, when refused is set, nothing: go-sdk
// refuses to instantiate the module — so that the test is known to
// compare what it says it compares before it compares Toolhost with
// go-sdk.
type testCase struct {
	name    string
	plugin  string
	code    string
	params  string
	want    string
	fails   bool
	refused bool
}

// hundred is a text over six SIMD steps that is no multiple of 16 bytes.
const hundred = "The quick brown fox jumps over the lazy dog; PACK MY BOX with five dozen liquor jugs! 0123456789 end."

var cases = []testCase{
	// Raw text in, JSON out (AssemblyScript, Go).
	{name: "vowels/hello world", plugin: "vowels", code: "vowels", params: `{"operation":"count","text":"hello world"}`, want: `{"count":3}`},
	{name: "vowels/empty", plugin: "vowels", code: "vowels", params: `{"operation":"count","text":""}`, want: `{"count":0}`},
	{name: "vowels/mixed", plugin: "vowels", code: "vowels", params: `{"operation":"count","text":"AEIOU aeiou xyz Àé"}`, want: `{"count":10}`},
	{name: "gopdk_vowels/hello world", plugin: "gopdk", code: "gopdk_vowels", params: `{"operation":"count","text":"hello world"}`, want: `{"count":3}`},
	{name: "wordcount/text", plugin: "wordcount", code: "wordcount", params: `{"operation":"count","text":"one two\nthree\n"}`, want: `{"bytes":14,"lines":2,"words":3}`},
	// JSON in, JSON out (the default mappings).
	{name: "gopdk_sum/numbers", plugin: "gopdk", code: "gopdk_sum", params: `{"numbers":[1,2,3,-4],"operation":"sum"}`, want: `{"sum":2}`},
	// Raw text in, text out.
	{name: "gopdk_reverse/utf-8", plugin: "gopdk", code: "gopdk_reverse", params: `{"operation":"reverse","text":"hello, wörld"}`, want: `{"text":"dlröw ,olleh"}`},
	{name: "gopdk_reverse/empty", plugin: "gopdk", code: "gopdk_reverse", params: `{"operation":"reverse","text":""}`, want: `{"text":""}`},
	// Bytes in and out through base64 (C).
	{name: "adler32/Wikipedia", plugin: "wordcount", code: "adler32", params: `{"data":"V2lraXBlZGlh","operation":"checksum"}`, want: `{"checksum":"EeYDmA=="}`},
	// A plain-text error (Go, C), and the same export succeeding.
	{name: "gopdk_refuse/abc", plugin: "gopdk", code: "gopdk_refuse", params: `{"operation":"refuse","text":"abc"}`, want: "refused: 3 bytes of input are not welcome here", fails: true},
	{name: "wordcount_empty/blank", plugin: "wordcount", code: "wordcount_empty", params: `{"operation":"check","text":" \t\n"}`, want: "wordcount: the text has no words", fails: true},
	{name: "wordcount_empty/words", plugin: "wordcount", code: "wordcount_empty", params: `{"operation":"check","text":"a b"}`, want: `{"empty":false}`},
	// Config set (the service's extism.config) and unset.
	{name: "gopdk_greet/config set", plugin: "gopdk", code: "gopdk_greet", params: `{"name":"Ada","operation":"greet"}`, want: `{"greeting":"ciao, Ada"}`},
	{name: "gopdk_greet_default/config unset", plugin: "gopdk", code: "gopdk_greet_default", params: `{"name":"Ada","operation":"greet"}`, want: `{"greeting":"hello, Ada"}`},
	// Variables set and read back within one item.
	{name: "gopdk_remember/vars", plugin: "gopdk", code: "gopdk_remember", params: `{"operation":"remember","text":"abc"}`, want: `{"last":"abc","length":3}`},
	// 2,000 × (alloc 1 MiB, store, free) within max_pages 1024 (64 MiB).
	{name: "allocfree/2000 MiB in 64 MiB", plugin: "allocfree", code: "allocfree", params: `{"operation":"run"}`, want: `{"allocated_mib":2000}`},
	// The same loop under the service's max_pages 16 (1 MiB, over the
	// package's 1024): the first block cannot be had, alloc answers 0.
	{name: "allocfree_tight/1 MiB cap", plugin: "allocfree", code: "allocfree_tight", params: `{"operation":"run"}`, want: "alloc returned 0: out of memory", fails: true},
	// v128 instructions.
	{name: "simd_upper/utf-8", plugin: "simd", code: "simd_upper", params: `{"operation":"upper","text":"hello, wörld: abc xyz {}"}`, want: `{"text":"HELLO, WöRLD: ABC XYZ {}"}`},
	{name: "simd_upper/hundred bytes", plugin: "simd", code: "simd_upper", params: `{"operation":"upper","text":"` + hundred + `"}`, want: `{"text":"` + strings.ToUpper(hundred) + `"}`},
	{name: "simd_upper/empty", plugin: "simd", code: "simd_upper", params: `{"operation":"upper","text":""}`, want: `{"text":""}`},
	// A WASI command module: _start reads the input, writes the output,
	// exits 0; an empty input exits 3.
	{name: "gocmd_shout/exit 0", plugin: "gocmd", code: "gocmd_shout", params: `{"operation":"shout","text":"hello, command"}`, want: `{"text":"HELLO, COMMAND"}`},
	{name: "gocmd_shout/exit 3", plugin: "gocmd", code: "gocmd_shout", params: `{"operation":"shout","text":""}`, want: "", fails: true},
	// An import with the wrong signature: refused before anything runs.
	{name: "badsig/refused", plugin: "badsig", code: "badsig", params: `{"operation":"run"}`, refused: true},
}

// binDir holds the toolhost binary, built once by the first case that
// runs it (so that a -run that selects none builds nothing); TestMain
// removes it.
var (
	binDir    string
	binOnce   sync.Once
	binPath   string
	binErr    error
	binDirErr error
)

func TestMain(m *testing.M) {
	binDir, binDirErr = os.MkdirTemp("", "toolhost-extismcompat-bin-")
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// toolhostBinary returns the toolhost binary, building cmd/toolhost the
// first time.
func toolhostBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binErr = binDirErr; binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "toolhost")
		cmd := exec.Command("go", "build", "-trimpath", "-o", binPath, "./cmd/toolhost")
		cmd.Dir = testkit.Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building cmd/toolhost: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestDifferential runs every case through go-sdk, the oracle, then through
// Toolhost's loader, `toolhost run`, the compute route and the run route,
// and compares each with go-sdk's outcome: success or failure, the result
// document (go-sdk's output through the sidecar's output mapping), and the
// plugin's error text where the surface carries one (the loader's raised
// error, the error document `toolhost run` prints and the run route's
// failed run carry it; the compute route answers a code alone).
func TestDifferential(t *testing.T) {
	c := newCorpus(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm := testkit.Extism(t, tc.plugin)
			want := c.oracle(t, tc, wasm)
			switch {
			case tc.refused != want.refused,
				!tc.refused && !tc.fails && (!want.ok || want.result != tc.want),
				tc.fails && (want.ok || want.message != tc.want):
				t.Fatalf("go-sdk gave %s, the case expects %q (fails: %v, refused: %v): the corpus or the case is wrong", want, tc.want, tc.fails, tc.refused)
			}
			t.Logf("go-sdk: %s", want)
			t.Run("loader", func(t *testing.T) { compare(t, want, c.loader(t, tc), true) })
			t.Run("toolhost run", func(t *testing.T) { compare(t, want, c.cli(t, tc), true) })
			t.Run("compute route", func(t *testing.T) { compare(t, want, c.compute(t, tc), false) })
			t.Run("run route", func(t *testing.T) { compare(t, want, c.run(t, tc), true) })
		})
	}
}

// outcome is how an item ended, on one side.
type outcome struct {
	ok     bool
	result string // canonical JSON, when ok
	// code is Toolhost's error code; message the error text: go-sdk's
	// error, Toolhost's error message.
	code, message string
	// exit is set when go-sdk's call ended in a non-zero WASI exit, which
	// carries no text of the plugin's: message is then "" and detail
	// go-sdk's error (wazero's text).
	exit bool
	// refused is set when the module never ran: go-sdk could not
	// instantiate it, Toolhost refused it at load (the tool is then
	// unknown to toolhost run and the routes); detail says why.
	refused bool
	detail  string
}

func (o outcome) String() string {
	switch {
	case o.refused:
		return fmt.Sprintf("refused (%s)", o.detail)
	case o.ok:
		return "success " + o.result
	case o.exit:
		return fmt.Sprintf("failure by exit (%s)", o.detail)
	}
	return fmt.Sprintf("failure code %q message %q", o.code, o.message)
}

// compare checks Toolhost's outcome got against go-sdk's want: the same
// end; on success the same result document; on failure the code
// execution_failed (a plugin's failure that is no tool error document)
// and, where the surface carries a message and the plugin set one, that
// text.
func compare(t *testing.T, want, got outcome, carriesMessage bool) {
	t.Helper()
	t.Logf("Toolhost: %s", got)
	switch {
	case want.refused != got.refused, want.refused:
		if want.refused != got.refused {
			t.Errorf("go-sdk: %s; Toolhost: %s", want, got)
		}
	case want.ok != got.ok:
		t.Errorf("go-sdk: %s; Toolhost: %s", want, got)
	case want.ok && want.result != got.result:
		t.Errorf("result: go-sdk %s; Toolhost %s", want.result, got.result)
	case !want.ok && got.code != string(toolerr.ExecutionFailed):
		t.Errorf("error code %q, want %q (go-sdk: %s; Toolhost: %s)", got.code, toolerr.ExecutionFailed, want, got)
	case !want.ok && carriesMessage && !want.exit && got.message != want.message:
		t.Errorf("error message %q, want go-sdk's %q", got.message, want.message)
	}
}

// corpus is the built corpus with its sidecars, and the Toolhost surfaces
// over it, each started the first time a case asks for it.
type corpus struct {
	sidecars map[string][]byte  // plugin → its sidecar's bytes
	decls    map[string]sidecar // plugin → its sidecar, decoded here
	cache    wazero.CompilationCache

	mu         sync.Mutex
	oracles    map[string]*extism.CompiledPlugin // plugin/code
	tools      map[string]loaded                 // plugin → its load
	rt         *host.Runtime
	wasmLoader *wasmtool.Loader

	srvOnce sync.Once
	srv     *liveServer
	srvErr  error
	dirs    []string // the server's folders, removed at the end

	cliCache string // toolhost run's --cache-dir, shared by its runs
}

type loaded struct {
	tool *wasmtool.Tool
	err  error
}

func newCorpus(t *testing.T) *corpus {
	t.Helper()
	c := &corpus{sidecars: map[string][]byte{}, decls: map[string]sidecar{},
		cache: wazero.NewCompilationCache(), oracles: map[string]*extism.CompiledPlugin{}, tools: map[string]loaded{}}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, p := range c.oracles {
			p.Close(ctx)
		}
		for _, l := range c.tools {
			if l.tool != nil {
				l.tool.Close(ctx)
			}
		}
		if c.rt != nil {
			c.rt.Close(ctx)
		}
		c.cache.Close(ctx)
		if c.srv != nil {
			c.srv.close(t)
		}
		for _, d := range c.dirs {
			os.RemoveAll(d)
		}
	})
	for _, p := range plugins {
		b, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", p, p+wasmtool.SidecarSuffix))
		if err != nil {
			t.Fatal(err)
		}
		var d sidecar
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s's sidecar: %v", p, err)
		}
		c.sidecars[p], c.decls[p] = b, d
	}
	return c
}

// sidecar is what the oracle reads of a sidecar manifest: the extism
// blocks and each operation's export and mappings.
type sidecar struct {
	Extism   *extismBlock `json:"extism"`
	Services []struct {
		ToolCode   string       `json:"tool_code"`
		Extism     *extismBlock `json:"extism"`
		Operations []struct {
			Operation string          `json:"operation"`
			Export    string          `json:"export"`
			Input     json.RawMessage `json:"input"`
			Output    json.RawMessage `json:"output"`
		} `json:"operations"`
	} `json:"services"`
}

type extismBlock struct {
	Config map[string]string `json:"config"`
	Memory *struct {
		MaxPages uint32 `json:"max_pages"`
	} `json:"memory"`
	TimeoutMS uint64 `json:"timeout_ms"`
}

// mapping is an operation's input or output mapping: "json", "none",
// "text" or "base64", with its field.
type mapping struct{ kind, field string }

func decodeMapping(t *testing.T, raw json.RawMessage) mapping {
	t.Helper()
	if raw == nil {
		return mapping{kind: "json"}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return mapping{kind: s}
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		t.Fatalf("mapping %s", raw)
	}
	for k, v := range m {
		return mapping{kind: k, field: v}
	}
	panic("unreachable")
}

// plan is what the oracle runs for a case: the export, its input bytes,
// the output mapping and the manifest's settings (the package's extism
// block with the service's over it: config key by key, memory and
// timeout_ms as a whole).
type plan struct {
	export   string
	input    []byte
	output   mapping
	config   map[string]string
	maxPages uint32
	timeout  uint64
}

func (c *corpus) plan(t *testing.T, tc testCase) plan {
	t.Helper()
	d := c.decls[tc.plugin]
	doc, err := wire.Decode([]byte(tc.params), wire.Limits{})
	if err != nil {
		t.Fatalf("the case's parameters: %v", err)
	}
	params := doc.(map[string]any)
	op, _ := params["operation"].(string)
	var p plan
	blocks := []*extismBlock{d.Extism}
	found := false
	for _, s := range d.Services {
		if s.ToolCode != tc.code {
			continue
		}
		blocks = append(blocks, s.Extism)
		for _, o := range s.Operations {
			if o.Operation != op {
				continue
			}
			found = true
			p.export, p.output = o.Export, decodeMapping(t, o.Output)
			in := decodeMapping(t, o.Input)
			switch in.kind {
			case "json":
				rest := maps.Clone(params)
				delete(rest, "operation")
				if p.input, err = wire.Encode(rest, wire.Limits{}); err != nil {
					t.Fatal(err)
				}
			case "text":
				p.input = []byte(params[in.field].(string))
			case "base64":
				if p.input, err = base64.StdEncoding.DecodeString(params[in.field].(string)); err != nil {
					t.Fatalf("the case's %s: %v", in.field, err)
				}
			case "none":
			default:
				t.Fatalf("input mapping %q", in.kind)
			}
		}
	}
	if !found {
		t.Fatalf("%s's sidecar has no service %s with operation %q", tc.plugin, tc.code, op)
	}
	for _, b := range blocks {
		if b == nil {
			continue
		}
		if b.Config != nil {
			if p.config == nil {
				p.config = map[string]string{}
			}
			maps.Copy(p.config, b.Config)
		}
		if b.Memory != nil {
			p.maxPages = b.Memory.MaxPages
		}
		if b.TimeoutMS != 0 {
			p.timeout = b.TimeoutMS
		}
	}
	return p
}

// oracle runs the case through go-sdk: a manifest of the module's bytes
// with the sidecar's config, memory cap and timeout, WASI enabled, a fresh
// instance, plugin.Call(export, input).
func (c *corpus) oracle(t *testing.T, tc testCase, wasm []byte) outcome {
	t.Helper()
	p := c.plan(t, tc)
	ctx := context.Background()
	key := tc.plugin + "/" + tc.code
	c.mu.Lock()
	compiled, ok := c.oracles[key]
	if !ok {
		m := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: tc.plugin}}, Config: p.config, Timeout: p.timeout}
		if p.maxPages > 0 {
			m.Memory = &extism.ManifestMemory{MaxPages: p.maxPages}
		}
		var err error
		compiled, err = extism.NewCompiledPlugin(ctx, m, extism.PluginConfig{
			EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(c.cache),
		}, nil)
		if err != nil {
			c.mu.Unlock()
			return outcome{refused: true, detail: "compiling: " + err.Error()}
		}
		c.oracles[key] = compiled
	}
	c.mu.Unlock()
	plugin, err := compiled.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		return outcome{refused: true, detail: "instantiating: " + err.Error()}
	}
	defer plugin.Close(ctx)
	rc, out, err := plugin.Call(p.export, p.input)
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit):
		return outcome{exit: true, detail: err.Error()}
	case err != nil:
		return outcome{message: err.Error()}
	case rc != 0:
		return outcome{message: ""}
	}
	var result any
	switch p.output.kind {
	case "json":
		if result, err = wire.Decode(out, wire.Limits{}); err != nil {
			t.Fatalf("go-sdk: the output %q is not JSON: %v", out, err)
		}
	case "text":
		if !utf8.Valid(out) {
			t.Fatalf("go-sdk: the output %q is not UTF-8", out)
		}
		result = map[string]any{p.output.field: string(out)}
	case "base64":
		result = map[string]any{p.output.field: base64.StdEncoding.EncodeToString(out)}
	default:
		t.Fatalf("output mapping %q", p.output.kind)
	}
	b, err := wire.Encode(result, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return outcome{ok: true, result: string(b)}
}

// canonical re-encodes a JSON document canonically.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	v, err := wire.Decode(b, wire.Limits{})
	if err != nil {
		t.Fatalf("%q is not JSON: %v", b, err)
	}
	out, err := wire.Encode(v, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// loader runs the case through internal/wasmtool: the module loaded with
// its sidecar as the registry loads it, the service run with the
// parameters document.
func (c *corpus) loader(t *testing.T, tc testCase) outcome {
	t.Helper()
	ctx := context.Background()
	c.mu.Lock()
	if c.wasmLoader == nil {
		rt, err := host.NewRuntime(ctx, host.Config{CacheDir: testkit.CacheDir()})
		if err != nil {
			c.mu.Unlock()
			t.Fatal(err)
		}
		l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
		if err != nil {
			rt.Close(ctx)
			c.mu.Unlock()
			t.Fatal(err)
		}
		c.rt, c.wasmLoader = rt, l
	}
	l, ok := c.tools[tc.plugin]
	if !ok {
		// The registry reads the module and its sidecar, then Loads the
		// pair (wasmtool.Loader.ReadModule).
		l.tool, l.err = c.wasmLoader.Load(ctx, testkit.Extism(t, tc.plugin), c.sidecars[tc.plugin])
		c.tools[tc.plugin] = l
	}
	c.mu.Unlock()
	if l.err != nil {
		var le *wasmtool.LoadError
		if !errors.As(l.err, &le) {
			t.Fatalf("loading %s with its sidecar: %v is no *wasmtool.LoadError", tc.plugin, l.err)
		}
		return outcome{refused: true, detail: l.err.Error()}
	}
	s, ok := l.tool.Service(tc.code)
	if !ok {
		for _, s := range l.tool.Services() {
			if s.ToolCode == tc.code && s.Refusal != nil {
				t.Fatalf("service %s is refused: %v", tc.code, s.Refusal)
			}
		}
		t.Fatalf("%s has no service %s", tc.plugin, tc.code)
	}
	if s.Unavailable != nil {
		t.Fatalf("service %s is unavailable: %v", tc.code, s.Unavailable)
	}
	out, err := l.tool.Run(ctx, tc.code, []byte(tc.params), wasmtool.Deadlines{})
	if err != nil {
		var te *toolerr.Error
		if !errors.As(err, &te) {
			t.Fatalf("Run: %v is no *toolerr.Error", err)
		}
		return outcome{code: string(te.Code), message: te.Message}
	}
	return outcome{ok: true, result: canonical(t, out.Result)}
}

// toolsDir makes a tools folder holding the modules of names (those that
// are built) and their sidecars.
func toolsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range names {
		wasm, err := os.ReadFile(filepath.Join(testkit.ExtismFolder(), p+".wasm"))
		if err != nil {
			continue // not built: its cases skip
		}
		side, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "extism", p, p+wasmtool.SidecarSuffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p+wasmtool.SidecarSuffix), side, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cli runs the case through `toolhost run CODE` over a tools folder that
// holds the case's plugin and its sidecar, the parameters on stdin: the
// result document and exit 0, or the platform error document and exit 1.
func (c *corpus) cli(t *testing.T, tc testCase) outcome {
	t.Helper()
	bin := toolhostBinary(t)
	dir := toolsDir(t, tc.plugin)
	c.mu.Lock()
	if c.cliCache == "" {
		c.cliCache = c.tempDir(t)
	}
	cache := c.cliCache
	c.mu.Unlock()
	cmd := exec.Command(bin, "run", tc.code, "--tools-dir", dir, "--cache-dir", cache)
	cmd.Stdin = strings.NewReader(tc.params)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return outcome{ok: true, result: canonical(t, stdout.Bytes())}
	case errors.As(err, &ee) && ee.ExitCode() == 1 && json.Valid(stdout.Bytes()):
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Code == string(toolerr.UnknownTool) {
			// The folder holds this plugin alone: its module was refused.
			return outcome{refused: true, detail: "unknown_tool; " + strings.TrimSpace(stderr.String())}
		}
		return outcome{code: e.Code, message: e.Message}
	}
	t.Fatalf("toolhost run: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	return outcome{}
}

// liveServer is a real server on loopback over a tools folder holding the
// whole built corpus, with a token.
type liveServer struct {
	srv    *server.Server
	url    string
	token  string
	client *http.Client
	served chan error
}

func (c *corpus) server(t *testing.T) *liveServer {
	t.Helper()
	c.srvOnce.Do(func() {
		tools, data := c.tempDir(t), c.tempDir(t)
		copyDir(t, toolsDir(t, plugins...), tools)
		c.srv, c.srvErr = startServer(tools, data)
	})
	if c.srvErr != nil {
		t.Fatalf("starting the server: %v", c.srvErr)
	}
	return c.srv
}

// tempDir is a folder that outlives the subtest that starts the server:
// the corpus removes it at the end of the test.
func (c *corpus) tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "toolhost-extismcompat-")
	if err != nil {
		t.Fatal(err)
	}
	c.dirs = append(c.dirs, dir)
	return dir
}

// copyDir copies the files of folder src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func startServer(tools, data string) (*liveServer, error) {
	ctx := context.Background()
	srv, err := server.New(ctx, server.Config{
		ToolsDir: tools, DataDir: data, CacheDir: testkit.CacheDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// Generation 1 holds the corpus however long it takes to compile.
		Loading: server.LoadingConfig{Wait: 5 * time.Minute},
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &liveServer{srv: srv, url: "http://" + l.Addr().String(), client: &http.Client{Timeout: 70 * time.Second}, served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(l) }()
	s.token, err = srv.Accounts().CreateToken(ctx, "alice")
	return s, err
}

func (s *liveServer) close(t *testing.T) {
	s.client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := <-s.served; err != http.ErrServerClosed {
		t.Errorf("serve: %v", err)
	}
}

func (s *liveServer) post(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", s.url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, ans
}

func (s *liveServer) get(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// refusal returns the refusal diagnostics list for the module of plugin,
// or fails the test when they list none: a tool missing from the server
// is a refused module, or the test is wrong.
func (s *liveServer) refusal(t *testing.T, plugin string) outcome {
	t.Helper()
	var diag struct {
		Failures []struct {
			Filename string `json:"filename"`
			Reason   string `json:"reason"`
			Detail   string `json:"detail"`
		} `json:"failures"`
	}
	body := s.get(t, "/api/v1/tools/diagnostics")
	if err := json.Unmarshal(body, &diag); err != nil {
		t.Fatalf("diagnostics %s: %v", body, err)
	}
	for _, f := range diag.Failures {
		if f.Filename == plugin+".wasm" {
			return outcome{refused: true, detail: fmt.Sprintf("diagnostics: %s %s/%s", f.Filename, f.Reason, f.Detail)}
		}
	}
	t.Fatalf("the server has no tool of %s.wasm, and diagnostics list no failure of it: %s", plugin, body)
	return outcome{}
}

// pin returns the compute item identity of code from the catalogue, or
// nil when code is not there.
func (s *liveServer) pin(t *testing.T, code string) map[string]any {
	t.Helper()
	var cat struct {
		Items []struct {
			ToolCode              string `json:"tool_code"`
			ContractVersion       string `json:"contract_version"`
			ImplementationVersion string `json:"implementation_version"`
			SchemaFingerprint     string `json:"schema_fingerprint"`
		} `json:"items"`
	}
	if err := json.Unmarshal(s.get(t, "/api/v1/tools/catalog"), &cat); err != nil {
		t.Fatal(err)
	}
	for _, d := range cat.Items {
		if d.ToolCode == code {
			return map[string]any{"tool_code": d.ToolCode, "contract_version": d.ContractVersion,
				"implementation_version": d.ImplementationVersion, "schema_fingerprint": d.SchemaFingerprint}
		}
	}
	return nil
}

// compute runs the case as a one-item batch on the compute route: its
// item's status, result, and error code (the route answers no message).
func (c *corpus) compute(t *testing.T, tc testCase) outcome {
	t.Helper()
	s := c.server(t)
	item := s.pin(t, tc.code)
	if item == nil {
		return s.refusal(t, tc.plugin)
	}
	item["correlation_id"] = "c1"
	item["parameters"] = json.RawMessage(tc.params)
	status, body := s.post(t, "/api/v1/tools/compute", map[string]any{"request_id": "r1", "items": []any{item}})
	if status != http.StatusOK {
		t.Fatalf("compute: %d %s", status, body)
	}
	var ans struct {
		Results []struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code string `json:"code"`
			} `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || len(ans.Results) != 1 {
		t.Fatalf("compute answer %s: %v", body, err)
	}
	r := ans.Results[0]
	if r.Status == "success" {
		return outcome{ok: true, result: canonical(t, r.Result)}
	}
	if r.Error == nil {
		t.Fatalf("compute: status %q without an error: %s", r.Status, body)
	}
	return outcome{code: r.Error.Code}
}

// run runs the case on the ADR-027 run route, POST /api/v1/tools/{code}/run
// with {"input": parameters}: succeeded with the result, or failed with the
// error's code and message.
func (c *corpus) run(t *testing.T, tc testCase) outcome {
	t.Helper()
	s := c.server(t)
	status, body := s.post(t, "/api/v1/tools/"+tc.code+"/run", map[string]any{"input": json.RawMessage(tc.params)})
	if status == http.StatusNotFound {
		o := s.refusal(t, tc.plugin)
		o.detail = fmt.Sprintf("run route %d, %s", status, o.detail)
		return o
	}
	if status != http.StatusOK {
		t.Fatalf("run route: %d %s", status, body)
	}
	var ans struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatalf("run answer %s: %v", body, err)
	}
	switch {
	case ans.Status == "succeeded":
		return outcome{ok: true, result: canonical(t, ans.Result)}
	case ans.Status == "failed" && ans.Error != nil:
		return outcome{code: ans.Error.Code, message: ans.Error.Message}
	}
	t.Fatalf("run answer with status %q: %s", ans.Status, body)
	return outcome{}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
)

// toolsDir returns a tools folder holding the named WAT fixtures.
func toolsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), testkit.WAT(t, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestToolCommands(t *testing.T) {
	dir := toolsDir(t, "ping", "output_lies", "describe_lies", "no_compute")
	cache := t.TempDir()
	input := filepath.Join(t.TempDir(), "params.json")
	if err := os.WriteFile(input, []byte(`{"operation":"ping"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
	}{
		{name: "run from stdin", args: []string{"run", "ping", "--tools-dir", dir, "--cache-dir", cache}, stdin: `{"operation":"ping"}`, code: 0, stdout: `{"ok":true}`},
		{name: "run from a file", args: []string{"run", "--tools-dir", dir, "--cache-dir", cache, "ping", "--input", input}, code: 0, stdout: `{"ok":true}`},
		{name: "run with bad parameters", args: []string{"run", "ping", "--tools-dir", dir, "--cache-dir", cache}, stdin: `{"operation":"ping","x":1}`, code: 1, stdout: `"code":"invalid_parameters"`},
		{name: "run an unknown tool", args: []string{"run", "nope", "--tools-dir", dir, "--cache-dir", cache}, stdin: `{}`, code: 1, stdout: `"code":"unknown_tool"`},
		{name: "run a lying tool", args: []string{"run", "liar", "--tools-dir", dir, "--cache-dir", cache}, stdin: `{"operation":"ping"}`, code: 1, stdout: `"code":"invalid_output"`},
		{name: "run without a code", args: []string{"run", "--tools-dir", dir}, code: 2},
		{name: "run a native tool", args: []string{"run", "pac_allocator", "--tools-dir", dir, "--cache-dir", cache},
			stdin: `{"operation":"value","currency":"EUR","holdings":[{"instrument_id":"A","quantity":"2","price":"10.5","currency":"EUR"}]}`,
			code:  0, stdout: `"total":"21.00"`},
		{name: "run with parameters that are not JSON", args: []string{"run", "ping", "--tools-dir", dir, "--cache-dir", cache}, stdin: `{"operation":`, code: 1, stdout: `"code":"invalid_parameters"`},
		{name: "list", args: []string{"list", "--tools-dir", dir, "--cache-dir", cache}, code: 0, stdout: `"detail":"declaration_missing"`},
		{name: "list a missing folder", args: []string{"list", "--tools-dir", filepath.Join(dir, "nope")}, code: 1},
		{name: "check a good module", args: []string{"check", filepath.Join(dir, "ping.wasm")}, code: 0, stdout: `"schema_fingerprint":"`},
		{name: "check with a cache folder", args: []string{"check", filepath.Join(dir, "ping.wasm"), "--cache-dir", cache}, code: 0, stdout: `"schema_fingerprint":"`},
		{name: "check with a stray argument", args: []string{"check", filepath.Join(dir, "ping.wasm"), "extra"}, code: 2},
		{name: "check a refused service", args: []string{"check", filepath.Join(dir, "describe_lies.wasm")}, code: 1, stdout: `"reason":"schema_profile"`},
		{name: "check a refused module", args: []string{"check", filepath.Join(dir, "no_compute.wasm")}, code: 1, stdout: `"reason":"declaration_missing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) {
				t.Fatalf("run(%q) = %d\nstdout: %s\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
		})
	}
}

// listDoc is toolhost list's document, as docs/registry.md describes it.
type listDoc struct {
	Services []struct {
		ToolCode   string   `json:"tool_code"`
		Source     string   `json:"source"`
		Execution  string   `json:"execution"`
		Status     string   `json:"status"`
		Available  bool     `json:"available"`
		Reason     *string  `json:"reason"`
		Operations []string `json:"operations"`
	} `json:"services"`
	Failures []struct {
		File     string `json:"filename"`
		ToolCode string `json:"tool_code"`
		Reason   string `json:"reason"`
		Detail   string `json:"detail"`
	} `json:"failures"`
}

// list runs toolhost list with args and decodes its document.
func list(t *testing.T, args ...string) listDoc {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"list"}, args...), strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("list %q = %d\nstdout: %s\nstderr: %s", args, code, stdout.String(), stderr.String())
	}
	var doc listDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("list %q: %v\n%s", args, err, stdout.String())
	}
	return doc
}

// TestListShowsWhatServeServes checks that list shows every tool the server
// would serve — the folder's modules, the native builtins, the page-only
// tools — with its availability and reason, and the folder's refusals.
func TestListShowsWhatServeServes(t *testing.T) {
	dir := toolsDir(t, "ping", "describe_lies", "no_compute")
	cache := t.TempDir()
	type want struct {
		source, execution string
		available         bool
		reason            string
	}
	check := func(t *testing.T, doc listDoc, wants map[string]want) {
		t.Helper()
		got := map[string]want{}
		for i, s := range doc.Services {
			if i > 0 && doc.Services[i-1].ToolCode >= s.ToolCode {
				t.Errorf("services not sorted by tool code: %q before %q", doc.Services[i-1].ToolCode, s.ToolCode)
			}
			if s.Available != (s.Reason == nil) {
				t.Errorf("%s: available %v with reason %v", s.ToolCode, s.Available, s.Reason)
			}
			w := want{source: s.Source, execution: s.Execution, available: s.Available}
			if s.Reason != nil {
				w.reason = *s.Reason
			}
			got[s.ToolCode] = w
		}
		for code, w := range wants {
			if got[code] != w {
				t.Errorf("%s: got %+v, want %+v", code, got[code], w)
			}
		}
	}
	failures := func(t *testing.T, doc listDoc) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, f := range doc.Failures {
			out[f.File+" "+f.ToolCode] = f.Reason + "/" + f.Detail
		}
		return out
	}

	t.Run("engines present", func(t *testing.T) {
		doc := list(t, "--tools-dir", dir, "--cache-dir", cache)
		wants := map[string]want{
			"ping": {source: "ping.wasm", execution: "client", available: true},
			"yt":   {source: "builtin/pages", execution: "job", reason: "page_only"},
			// A network probe needs no engine: always available.
			"dns_lookup": {source: "builtin/netprobe", execution: "sync", available: true},
		}
		// The PAC allocator needs cbc, the PDF tools qpdf and pdftoppm:
		// available exactly when this host has them.
		pac := want{source: "builtin/pac_allocator", execution: "sync", available: true}
		if _, err := exec.LookPath("cbc"); err != nil {
			pac.available, pac.reason = false, "engine_missing: cbc"
		}
		wants["pac_allocator"] = pac
		check(t, doc, wants)
		f := failures(t, doc)
		if f["no_compute.wasm "] != "import_failed/declaration_missing" {
			t.Errorf("no_compute.wasm: got %q, want import_failed/declaration_missing (failures %v)", f["no_compute.wasm "], f)
		}
		if len(doc.Failures) < 2 {
			t.Errorf("failures = %v, want the refused module and the refused service", f)
		}
		for _, fl := range doc.Failures {
			if fl.File == "describe_lies.wasm" && fl.Reason != "definition_invalid" {
				t.Errorf("describe_lies.wasm: got %+v, want definition_invalid", fl)
			}
		}
	})

	t.Run("engines missing", func(t *testing.T) {
		// Without PATH the native engines are missing: their tools are
		// listed unavailable with the catalogue's reason.
		t.Setenv("PATH", t.TempDir())
		doc := list(t, "--tools-dir", dir, "--cache-dir", cache)
		check(t, doc, map[string]want{
			"pac_allocator": {source: "builtin/pac_allocator", execution: "sync", reason: "engine_missing: cbc"},
			"pdf_protect":   {source: "builtin/pdf", execution: "job", reason: "engine_missing: qpdf, pdftoppm"},
			"yt":            {source: "builtin/pages", execution: "job", reason: "page_only"},
			"ping":          {source: "ping.wasm", execution: "client", available: true},
		})
	})

	t.Run("serve's environment", func(t *testing.T) {
		// With no flags, list reads the folder and the cache serve would.
		envCache := t.TempDir()
		t.Setenv("TOOLHOST_TOOLS_DIR", dir)
		t.Setenv("TOOLHOST_CACHE_DIR", envCache)
		doc := list(t)
		check(t, doc, map[string]want{"ping": {source: "ping.wasm", execution: "client", available: true}})
		entries, err := os.ReadDir(envCache)
		if err != nil || len(entries) == 0 {
			t.Errorf("TOOLHOST_CACHE_DIR %s holds %d entries (%v), want the compiled modules", envCache, len(entries), err)
		}
	})
}

// check MODULE.wasm --cache-dir compiles into the folder it is given.
func TestCheckCacheDir(t *testing.T) {
	dir := toolsDir(t, "ping")
	cache := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", filepath.Join(dir, "ping.wasm"), "--cache-dir", cache}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("check = %d: %s %s", code, stdout.String(), stderr.String())
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) == 0 {
		t.Errorf("the cache folder holds %d entries (%v): check did not compile into it", len(entries), err)
	}
}

// cacheBytes is the size of the cache folder's entries (compiled code and
// images).
func cacheBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, pattern := range []string{"wazero-*/*", "images/*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// Every command that loads modules honours the cache settings from the
// environment as from its flags, and keeps the folder within
// --cache-max-bytes: a one-shot command prunes what it wrote when done.
func TestCacheSettings(t *testing.T) {
	dir := toolsDir(t, "ping")
	module := filepath.Join(dir, "ping.wasm")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		// bounded: the folder ends empty (a bound of 1 byte).
		bounded bool
	}{
		{name: "check, environment", args: []string{"check", module}},
		{name: "check, bound from the environment", args: []string{"check", module}, env: map[string]string{"TOOLHOST_CACHE_MAX_BYTES": "1"}, bounded: true},
		{name: "check, bound flag", args: []string{"check", module, "--cache-max-bytes", "1"}, bounded: true},
		{name: "list, environment", args: []string{"list", "--tools-dir", dir}},
		{name: "list, bound from the environment", args: []string{"list", "--tools-dir", dir}, env: map[string]string{"TOOLHOST_CACHE_MAX_BYTES": "1B"}, bounded: true},
		{name: "run, bound from a config file", args: []string{"run", "ping", "--tools-dir", dir, "--config", writeConfig(t, "cache-max-bytes = 1\n")}, bounded: true},
		{name: "export, environment", args: []string{"export", "--tools-dir", dir, "--out", t.TempDir()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("TOOLHOST_CACHE_DIR", cache)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, strings.NewReader(`{"operation":"ping"}`), &stdout, &stderr); code != 0 {
				t.Fatalf("run(%q) = %d\nstdout: %s\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
			n := cacheBytes(t, cache)
			if tt.bounded && n != 0 {
				t.Errorf("the folder holds %d bytes past a bound of 1", n)
			}
			if !tt.bounded && n == 0 {
				t.Errorf("$TOOLHOST_CACHE_DIR %s holds nothing: the command did not compile into it", cache)
			}
		})
	}
}

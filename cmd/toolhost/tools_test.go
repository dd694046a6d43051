package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"toolhost/internal/testmodule"
)

// toolsDir returns a tools folder holding the named WAT fixtures.
func toolsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), testmodule.WAT(t, name), 0o644); err != nil {
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
		{name: "list", args: []string{"list", "--tools-dir", dir, "--cache-dir", cache}, code: 0, stdout: `"reason":"declaration_missing"`},
		{name: "list a missing folder", args: []string{"list", "--tools-dir", filepath.Join(dir, "nope")}, code: 1},
		{name: "check a good module", args: []string{"check", filepath.Join(dir, "ping.wasm")}, code: 0, stdout: `"schema_fingerprint":"`},
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

package main

import (
	"bytes"
	"strings"
	"testing"
)

const example = "../../testdata/examples/allocator/"

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring expected on stdout
		stderr string // substring expected on stderr
	}{
		{name: "no command", args: nil, code: 2, stderr: "usage"},
		{name: "unknown command", args: []string{"serve-all"}, code: 2, stderr: "unknown command"},
		{name: "help", args: []string{"help"}, code: 0, stdout: "toolhost check"},
		{name: "help lists the settings", args: []string{"help"}, code: 0, stdout: "env $TOOLHOST_SHUTDOWN_TIMEOUT, config key shutdown-timeout, default \"1m0s\"; taken by serve"},
		{name: "help COMMAND", args: []string{"help", "check"}, code: 0, stdout: "env $TOOLHOST_CACHE_DIR"},
		{name: "token --help", args: []string{"token", "--help"}, code: 0, stdout: "env $TOOLHOST_DATA_DIR"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "devel"},
		{name: "serve --help", args: []string{"serve", "--help"}, code: 0, stdout: `default "report"`},
		{name: "serve --help names the environment", args: []string{"serve", "-h"}, code: 0, stdout: "env $TOOLHOST_TRUSTED_PROXY, config key trusted-proxy"},
		{name: "serve --help lists every flag", args: []string{"serve", "-help"}, code: 0, stdout: "--shutdown-timeout DURATION"},
		{name: "list --help", args: []string{"list", "--help"}, code: 0, stdout: "--cache-max-bytes SIZE"},
		{name: "run --help", args: []string{"run", "--help"}, code: 0, stdout: "toolhost run TOOL_CODE"},
		{name: "token create --help", args: []string{"token", "create", "--help"}, code: 0, stdout: "--capability CAPABILITY"},
		{name: "check --help", args: []string{"check", "--help"}, code: 0, stdout: "toolhost check MODULE.wasm"},
		{name: "unknown flag", args: []string{"serve", "--bogus"}, code: 2, stderr: "-bogus"},
		{name: "platform policy", args: []string{"policy"}, code: 0, stdout: `"request_timeout_ms":59000`},
		{name: "policy extra argument", args: []string{"policy", "x"}, code: 2, stderr: "usage"},
		{name: "clamped plan", args: []string{"policy", "-operation", example + "plan.operation.json"}, code: 0, stdout: `"max_parameter_bytes":131072`},
		{name: "missing operation file", args: []string{"policy", "-operation", example + "nope.json"}, code: 1, stderr: "no such file"},
		{name: "fingerprint", args: []string{"check", example + "input.schema.json", example + "output.schema.json", "plan", "value"}, code: 0, stdout: `"schema_fingerprint":"`},
		{name: "operation set differs", args: []string{"check", example + "input.schema.json", example + "output.schema.json", "plan"}, code: 1, stdout: `"reason":"operation_undeclared"`},
		{name: "check needs operations", args: []string{"check", example + "input.schema.json", example + "output.schema.json"}, code: 2, stderr: "usage"},
		{name: "schema is not strict JSON", args: []string{"check", example + "plan.operation.json", "../../testdata/canonical/invalid/duplicate_name-plain.json", "plan"}, code: 1, stderr: "duplicate name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("run(%q) = %d\nstdout: %s\nstderr: %s", tt.args, code, stdout.String(), stderr.String())
			}
		})
	}
}

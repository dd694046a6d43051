package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
)

// check refuses a module that imports a known kernel function with
// another type than the host's, naming the import and both types.
func TestCheckWrongKernelSignature(t *testing.T) {
	path, err := testkit.CompileWAT(filepath.Join(testkit.Root(), "testdata/extism/badsig/badsig.wat"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"check", path, "--cache-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String() + stderr.String()
	for _, want := range []string{`import_refused`, `extism:host/env.input_length has type (i32) -> i64, the host's is () -> i64`} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q", want)
		}
	}
	if code != 1 {
		t.Errorf("check exited %d, want 1", code)
	}
	if t.Failed() {
		t.Logf("stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A name that is not a tool code, or a folder that holds anything, is
// refused with a clear error, and nothing is written.
func TestNewRefuses(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{name: "upper case", args: []string{"new", "Hello"}, code: 2, stderr: `"Hello" is not a tool code`},
		{name: "a dash", args: []string{"new", "my-tool"}, code: 2, stderr: `"my-tool" is not a tool code`},
		{name: "a digit first", args: []string{"new", "1tool"}, code: 2, stderr: "not a tool code"},
		{name: "a route word", args: []string{"new", "catalog"}, code: 2, stderr: "is a route word"},
		{name: "too long", args: []string{"new", strings.Repeat("a", 65)}, code: 2, stderr: "longer than 64 bytes"},
		{name: "no name", args: []string{"new"}, code: 2, stderr: "new takes one NAME"},
		{name: "two names", args: []string{"new", "a", "b"}, code: 2, stderr: "new takes one NAME"},
		{name: "a folder that is not empty", args: []string{"new", "hello", "--dir", full}, code: 1, stderr: "exists and is not empty"},
		{name: "a replace that is no SDK", args: []string{"new", "hello", "--dir", filepath.Join(full, "x"), "--guest-replace", t.TempDir()}, code: 2, stderr: "holds neither the module"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			t.Chdir(t.TempDir())
			code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) = %d, stderr %q; want %d with %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 0 {
				t.Errorf("a refused new wrote %v", entries)
			}
		})
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the folder that was not empty now holds %v", entries)
	}
}

// toolhost new writes a package that builds as it is, outside the
// repository, with the SDK alone (through the local replace, since
// nothing is published): its own test passes on the host, it builds for
// wasip1, and toolhost check accepts the module.
func TestNewBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hello")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"new", "hello", "--dir", dir, "--guest-replace", filepath.Join(repo, "guest")}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("new = %d: %s", code, stderr.String())
	}
	for _, name := range []string{"go.mod", "main.go", "main_test.go", "Makefile", "README.md", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("new wrote no %s: %v", name, err)
		}
	}
	main, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	for _, lang := range []string{`"en"`, `"it"`, `"fr"`, `"es"`} {
		if !bytes.Contains(main, []byte(lang)) {
			t.Errorf("main.go has no %s texts", lang)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	build := "GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o hello.wasm ."
	if !bytes.Contains(readme, []byte(build)) {
		t.Errorf("README.md lacks %q", build)
	}
	// As an author would: no network, the module's own go.mod, no
	// workspace; -mod=mod lets go record what it resolves locally.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GONOSUMDB=*", "GOWORK=off", "GOTOOLCHAIN=local")
	goCmd := func(extra []string, args ...string) {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goCmd(nil, "generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "guest_gen.go")); err != nil {
		t.Errorf("go generate wrote no guest_gen.go: %v", err)
	}
	goCmd(nil, "test", "./...") // also refuses a stale guest_gen.go
	goCmd([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-tags", "guestgen", "-buildmode=c-shared", "-o", "hello.wasm", ".")

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"check", filepath.Join(dir, "hello.wasm"), "--cache-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("check = %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{`"tool_code":"hello"`, `"operations":["greet"]`, `"schema_fingerprint":"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check: %s lacks %s", stdout.String(), want)
		}
	}
}

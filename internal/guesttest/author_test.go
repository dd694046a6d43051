package guesttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit"
)

// helloTool is a tool as an author writes it outside this repository,
// with nothing but the guest SDK.
const helloTool = `package main

//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen

import "github.com/toolhost/toolhost/guest"

type input struct {
	Operation string ` + "`json:\"operation\"`" + `
	Name      string ` + "`json:\"name\" maxLength:\"64\" doc:\"Who to greet.\"`" + `
}

type output struct {
	Greeting string ` + "`json:\"greeting\"`" + `
}

func greet(ctx *guest.Context, in input) (output, error) {
	if in.Name == "" {
		return output{}, guest.InvalidInput("name is empty")
	}
	return output{Greeting: "Hello, " + in.Name + "!"}, nil
}

func init() {
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "0.1.0",
		Services: []guest.Declaration{&guest.Service[input, output]{
			Code:        "hello",
			Name:        "Hello",
			Description: "Greets someone.",
			Texts: map[string]guest.Text{
				"en": {Name: "Hello", Description: "Greets someone."},
				"it": {Name: "Ciao", Description: "Saluta qualcuno."},
				"fr": {Name: "Bonjour", Description: "Salue quelqu'un."},
				"es": {Name: "Hola", Description: "Saluda a alguien."},
			},
			Category:      "text",
			IconKey:       "hello",
			UI:            guest.UI{Kind: "custom", ComponentKey: "hello", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/hello", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "greet", Deterministic: true}},
			Compute:       greet,
		}},
	})
}

func main() {}
`

// authorGo returns the go command, skipping the test when there is none
// (and failing it in CI, where there must be one).
func authorGo(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go command is needed to build a tool: %v", err)
		}
		t.Skipf("the go command is needed to build a tool: %v", err)
	}
	return goBin
}

// authorModule writes a tool module into a new folder outside the
// repository, as an author would start one: a go.mod that requires only
// the guest SDK, with a replace to this repository's guest/ since nothing
// is published, and the tool's main.go.
func authorModule(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if strings.HasPrefix(dir, testkit.Root()+string(filepath.Separator)) {
		t.Fatalf("the temporary folder %s is inside the repository", dir)
	}
	gomod := "module example.com/hello\n\ngo 1.26\n\n" +
		"require github.com/toolhost/toolhost/guest v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/toolhost/toolhost/guest => " + filepath.Join(testkit.Root(), "guest") + "\n"
	for name, text := range map[string]string{"go.mod": gomod, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// authorEnv is the environment of an author's go commands: no network
// (GOPROXY=off; the SDK comes from the replace), go.mod updated as needed
// (-mod=mod), no workspace, and goos/goarch as given ("" for the host).
func authorEnv(goos, goarch string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOFLAGS_EXTRA", "GOWORK", "GOOS", "GOARCH", "CGO_ENABLED":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GONOSUMDB=github.com/toolhost", "GOWORK=off", "CGO_ENABLED=0")
	if goos != "" {
		env = append(env, "GOOS="+goos, "GOARCH="+goarch)
	}
	return env
}

// run runs the go command in dir and fails the test with its output.
func runGo(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(authorGo(t), args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAuthorBuild builds a tool outside the repository with only the
// guest SDK, as an author would, then loads it in the real host, reads
// its declaration and computes one item.
func TestAuthorBuild(t *testing.T) {
	dir := authorModule(t, helloTool)
	wasmPath := filepath.Join(dir, "hello.wasm")
	runGo(t, dir, authorEnv("wasip1", "wasm"), "build", "-trimpath", "-buildmode=c-shared", "-o", wasmPath, ".")
	checkAuthorModule(t, wasmPath)
}

// TestAuthorBuildGenerated builds the same tool the way docs/tool-authors.md
// says: go generate (guestgen writes guest_gen.go), then a build with
// -tags guestgen, which links none of the SDK's derivation; the module
// gives the same declaration and result, and is smaller.
func TestAuthorBuildGenerated(t *testing.T) {
	dir := authorModule(t, helloTool)
	runGo(t, dir, authorEnv("", ""), "generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "guest_gen.go")); err != nil {
		t.Fatalf("go generate wrote no guest_gen.go: %v", err)
	}
	// The generated file is current: the tool's host tests, which derive
	// the declaration, accept it (a vet of the native build checks it compiles).
	runGo(t, dir, authorEnv("", ""), "vet", ".")
	plain := filepath.Join(dir, "plain.wasm")
	small := filepath.Join(dir, "hello.wasm")
	runGo(t, dir, authorEnv("wasip1", "wasm"), "build", "-trimpath", "-buildmode=c-shared", "-o", plain, ".")
	runGo(t, dir, authorEnv("wasip1", "wasm"), "build", "-trimpath", "-tags", "guestgen", "-buildmode=c-shared", "-o", small, ".")
	checkAuthorModule(t, small)
	checkAuthorModule(t, plain)
	ps, _ := os.Stat(plain)
	ss, _ := os.Stat(small)
	if ss.Size() >= ps.Size() {
		t.Errorf("the guestgen build is %d bytes, the plain one %d", ss.Size(), ps.Size())
	}
}

// checkAuthorModule loads the hello tool at path in the host and runs
// describe and one compute item.
func checkAuthorModule(t *testing.T, path string) {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", filepath.Base(path), len(wasm))
	ctx := context.Background()
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: testkit.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer m.Close(ctx)
	res, err := m.Call(ctx, "describe", nil, host.Limits{})
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	decl := doc(t, string(res.Output))
	if code := get(t, decl, "services", 0, "tool_code"); code != "hello" {
		t.Fatalf("tool_code = %v in %s", code, res.Output)
	}
	s := get(t, decl, "services", 0)
	checkProfile(t, get(t, s, "input_schema"), get(t, s, "output_schema"), "greet")

	res, err = m.Call(ctx, "compute", []byte(`{"operation":"greet","parameters":{"name":"Ada","operation":"greet"},"tool_code":"hello"}`), host.Limits{})
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	if got, want := string(res.Output), `{"greeting":"Hello, Ada!"}`; got != want {
		t.Errorf("compute = %s, want %s", got, want)
	}
	_, err = m.Call(ctx, "compute", []byte(`{"operation":"greet","parameters":{"name":"","operation":"greet"},"tool_code":"hello"}`), host.Limits{})
	if err == nil || !strings.Contains(err.Error(), "name is empty") {
		t.Errorf("compute with an empty name: %v, want the tool's invalid_parameters error", err)
	}
}

// TestGuestgenRefusal: a declaration the SDK refuses fails go generate with
// the reason, and writes no guest_gen.go.
func TestGuestgenRefusal(t *testing.T) {
	dir := authorModule(t, strings.Replace(helloTool, `ContractVersion:       "1.0.0"`, `ContractVersion:       "one"`, 1))
	cmd := exec.Command(authorGo(t), "generate", "./...")
	cmd.Dir, cmd.Env = dir, authorEnv("", "")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `contract_version "one" is not a SemVer string`) {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "guest_gen.go")); err == nil {
		t.Error("guest_gen.go was written for a refused declaration")
	}
}

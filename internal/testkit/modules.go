package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// root is the module root, found from this file's location.
var root = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// Root returns the repository root.
func Root() string { return root }

var (
	tmpOnce sync.Once
	tmpDir  string
	tmpErr  error

	mu    sync.Mutex
	built = map[string]result{}
)

type result struct {
	path string
	err  error
}

func dir() (string, error) {
	tmpOnce.Do(func() { tmpDir, tmpErr = os.MkdirTemp("", "toolhost-modules-") })
	return tmpDir, tmpErr
}

// once builds key with build the first time it is asked for.
func once(key string, build func(out string) error) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if r, ok := built[key]; ok {
		return r.path, r.err
	}
	d, err := dir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(d, strings.NewReplacer("/", "_", ".", "_").Replace(key)+".wasm")
	err = build(out)
	built[key] = result{out, err}
	return out, err
}

// WATPath compiles testdata/hostile/NAME.wat and returns the module's path.
func WATPath(t testing.TB, name string) string {
	t.Helper()
	path, err := CompileWAT(filepath.Join(root, "testdata", "hostile", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// WAT compiles testdata/hostile/NAME.wat and returns the module bytes.
func WAT(t testing.TB, name string) []byte {
	t.Helper()
	return read(t, WATPath(t, name))
}

// CompileWAT compiles the WAT file at src (with its names kept, for
// readable traps) once per test binary and returns the module's path. It
// needs no testing.TB so that Example functions can use it.
func CompileWAT(src string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	return once("wat/"+abs, func(out string) error {
		if b, err := exec.Command("wat2wasm", "--debug-names", abs, "-o", out).CombinedOutput(); err != nil {
			return fmt.Errorf("wat2wasm %s (install the wabt package): %v\n%s", abs, err, b)
		}
		return nil
	})
}

// GoPath builds the Go guest package at pkg (a path relative to the
// repository root, such as "plugins-src/codec") for wasip1 as a reactor and
// returns the module's path.
func GoPath(t testing.TB, pkg string) string {
	t.Helper()
	path, err := BuildGo(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildGo is GoPath for the callers without a testing.TB, such as Example
// functions: it builds pkg once per test binary, as a tool author builds a
// tool (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared), and returns
// the module's path.
func BuildGo(pkg string) (string, error) {
	return once("go/"+pkg, func(out string) error {
		cmd := exec.Command("go", "build", "-trimpath", "-buildmode=c-shared", "-o", out, "./"+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s for wasip1: %v\n%s", pkg, err, b)
		}
		return nil
	})
}

// Go builds the Go guest package at pkg and returns the module bytes.
func Go(t testing.TB, pkg string) []byte {
	t.Helper()
	return read(t, GoPath(t, pkg))
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CacheDir returns the compilation cache the tests' host runtimes share,
// so that each bundled module is compiled once per machine rather than
// once per test (a Go module takes seconds, minutes under -race). wazero
// keys the cache by module content and its own version, so sharing it is
// safe. It is the user's cache folder, or a folder in the temporary
// directory when there is none.
func CacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "toolhost", "test-compiled")
}

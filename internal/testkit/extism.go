package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ExtismDir is where `make extism` builds the corpus of plain Extism
// plugins of testdata/extism (docs/extism-compat.md), relative to the
// repository root. TOOLHOST_EXTISM_DIR names another folder.
const ExtismDir = "build/extism"

// ExtismFolder returns the folder the corpus is built in: the
// environment's TOOLHOST_EXTISM_DIR, or ExtismDir under the repository
// root.
func ExtismFolder() string {
	if dir := os.Getenv("TOOLHOST_EXTISM_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(root, ExtismDir)
}

// ExtismPath returns the path of the corpus module NAME.wasm that `make
// extism` built. A module that is not there skips the test, with the
// command that builds it, since its toolchain (clang, npm, wat2wasm) may
// be missing on this machine; under CI=true, where `make test` builds the
// whole corpus first, it fails the test.
func ExtismPath(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(ExtismFolder(), name+".wasm")
	if _, err := os.Stat(path); err != nil {
		Missing(t, fmt.Sprintf("the Extism corpus module %s is not built: run make extism (its toolchain may be missing; docs/extism-compat.md)", path))
	}
	return path
}

// Extism returns the bytes of the corpus module NAME.wasm (see
// [ExtismPath]).
func Extism(t testing.TB, name string) []byte {
	t.Helper()
	return read(t, ExtismPath(t, name))
}

// Package testkit and the packages below it are the support Toolhost's
// tests share; only _test.go files import them, so none of it is part of
// the product (TestTestkitOnlyInTests checks).
//
// Package testkit itself builds the WebAssembly modules tests run — the
// WAT fixtures of testdata/hostile with wat2wasm (Debian package wabt,
// which .ci/run installs), Go guests with the Go toolchain, the structure
// bombs as bytes, the Extism corpus of `make extism` — and says what a
// test does without something the machine lacks ([Missing],
// [RequireEngines]). Builds happen once per test binary and land in a
// temporary directory; nothing is written to the source tree. A missing
// wat2wasm or Go toolchain fails the test: nothing is skipped.
//
// Below it:
//
//   - storetest runs a store test on each backend (SQLite, a PostgreSQL
//     schema of the test's own) and starts PostgreSQL clusters of a
//     test's own;
//   - redistest gives a test a real Redis, shared or its own (a
//     sentinel, a cluster);
//   - bundledtest runs a bundled tool package's services as the platform
//     does, on the host and as the built module, for plugins-src's tests.
package testkit

import (
	"os"
	"testing"
)

// Missing skips the test with why, or fails it when CI=true: CI (.ci/run)
// installs and starts everything the tests need, so nothing hides behind
// a skip there.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required under CI=true)", why)
	}
	t.Skip(why)
}

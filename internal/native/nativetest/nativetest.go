// Package nativetest holds what the tests of native tool packages share.
package nativetest

import (
	"os"
	"testing"

	"github.com/toolhost/toolhost/internal/native"
)

// RequireEngines skips the test when an engine of p is missing on PATH,
// and fails it instead under CI=true, where .ci/run installs every engine:
// a missing engine never hides behind a skip in CI.
func RequireEngines(t testing.TB, p *native.Package) {
	t.Helper()
	missing := p.MissingEngines()
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("engines %v of %s are missing on PATH; CI=true requires them (.ci/run installs them)", missing, p.Name)
	}
	t.Skipf("engines %v of %s are missing on PATH: install them to run this test", missing, p.Name)
}

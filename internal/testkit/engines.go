package testkit

import (
	"fmt"
	"testing"
)

// RequireEngines goes on when missing, the engines of the native package
// name not found on PATH (native.Package.MissingEngines), is empty, and is
// [Missing] otherwise: CI=true, where .ci/run installs every engine, fails.
func RequireEngines(t testing.TB, name string, missing []string) {
	t.Helper()
	if len(missing) > 0 {
		Missing(t, fmt.Sprintf("engines %v of %s are missing on PATH: install them to run this test", missing, name))
	}
}

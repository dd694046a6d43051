// Package testmodule forwards to [testkit], where the tests' module builds
// moved. It stays only while internal/executor's tests (hostlane_test.go)
// import it; delete it once they import internal/testkit.
//
// Deprecated: use [testkit].
package testmodule

import (
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
)

// WAT is [testkit.WAT].
//
// Deprecated: use [testkit.WAT].
func WAT(t testing.TB, name string) []byte {
	t.Helper()
	return testkit.WAT(t, name)
}

package registry_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/testkit"
)

// cacheDir is the compilation cache every test's runtime shares.
var cacheDir = testkit.CacheDir()

// No test leaves a goroutine behind: watchers stop, modules and runtimes
// are closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

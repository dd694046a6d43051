package registry_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/testmodule"
)

// cacheDir is the compilation cache every test's runtime shares.
var cacheDir = testmodule.CacheDir()

// No test leaves a goroutine behind: watchers stop, modules and runtimes
// are closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

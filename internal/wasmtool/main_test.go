package wasmtool_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine behind: tools and runtimes are closed, and
// image restorers stop with them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

package host_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No test leaves a goroutine behind: image restorers stop with their
// module or runtime, and wazero's per-call watchers with their call.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

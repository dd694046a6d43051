//go:build linux

package supervisor

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The test binary is its own worker: a supervisor made by newSupervisor
// starts it again (as /proc/self/exe) with testWorkerEnv set, and TestMain
// then runs the worker side instead of the tests: WorkerMain with the test
// packages, or, when testModeEnv names one, a worker that breaks the
// protocol on purpose (misbehave).
const (
	testWorkerEnv = "TOOLHOST_SUPERVISOR_TEST_WORKER"
	testModeEnv   = "TOOLHOST_SUPERVISOR_TEST_MODE"
)

// TestMain runs the worker when asked to, else the tests, which leave no
// goroutine behind in the supervising process.
func TestMain(m *testing.M) {
	if os.Getenv(testWorkerEnv) == "1" {
		if mode := os.Getenv(testModeEnv); mode != "" {
			os.Exit(misbehave(mode))
		}
		os.Exit(WorkerMain(testPackages()))
	}
	goleak.VerifyTestMain(m)
}

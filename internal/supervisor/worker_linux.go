package supervisor

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/toolhost/toolhost/internal/native"
)

// WorkerMain is the hidden "toolhost worker" entry point: the child side of
// one job. The binary's main calls it, before parsing any flag, with the
// native packages compiled in (the same packages whose Runners the server
// made) and exits with the code it returns:
//
//	if len(os.Args) > 1 && os.Args[1] == "worker" {
//		os.Exit(supervisor.WorkerMain(packages))
//	}
//
// It refuses to run, with a message on stderr and a non-zero code, when
// it was not started by a supervisor: no worker id in its environment,
// no protocol pipes on fds 3 and 4, or not the leader of its own session.
// Otherwise it sends its ready frame, waits for the ACK, runs the job and
// sends the result frame (see the package documentation), and returns 0.
func WorkerMain(pkgs []*native.Package) int {
	io, err := workerSetup(pkgs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolhost worker: %v\n", err)
		return 2
	}
	err = io.serve()
	// The result frame is written (a pipe holds no buffer of ours): closing
	// the protocol pipes loses nothing.
	io.in.(*os.File).Close()  //nolint:errcheck // see above
	io.out.(*os.File).Close() //nolint:errcheck // see above
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolhost worker: %v\n", err)
		return 1
	}
	return 0
}

// errNotSupervised is returned when the worker was not started by a
// supervisor.
var errNotSupervised = errors.New("not started by a supervisor")

// workerSetup checks that a supervisor started this process and prepares
// its side of the protocol.
func workerSetup(pkgs []*native.Package) (workerIO, error) {
	id, ok := os.LookupEnv(EnvWorkerID)
	if !ok || id == "" {
		return workerIO{}, fmt.Errorf("%w: no %s in the environment", errNotSupervised, EnvWorkerID)
	}
	for _, fd := range []int{jobFD, resultFD} {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return workerIO{}, fmt.Errorf("%w: fd %d is not a protocol pipe", errNotSupervised, fd)
		}
	}
	pid := os.Getpid()
	if sid, err := unix.Getsid(0); err != nil || sid != pid {
		return workerIO{}, fmt.Errorf("%w: not the leader of its own session", errNotSupervised)
	}
	self, err := readStat(0)
	if err != nil {
		return workerIO{}, fmt.Errorf("reading /proc/self/stat: %w", err)
	}
	// The engines a package starts must not inherit the protocol pipes,
	// nor the worker's id from the environment.
	unix.CloseOnExec(jobFD)
	unix.CloseOnExec(resultFD)
	spare := os.Getenv(EnvSpare) == "1"
	for _, name := range []string{EnvWorkerID, EnvSpare} {
		if err := os.Unsetenv(name); err != nil {
			return workerIO{}, fmt.Errorf("clearing %s: %w", name, err)
		}
	}
	// Orphaned descendants are re-parented to the worker instead of init,
	// so that the supervisor still finds them by their parent.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return workerIO{}, fmt.Errorf("becoming the subreaper of its descendants: %w", err)
	}
	return workerIO{
		in:        os.NewFile(jobFD, "job"),
		out:       os.NewFile(resultFD, "result"),
		workerID:  id,
		self:      self.identity(),
		pgid:      self.PGID,
		services:  decodeServices(pkgs),
		spare:     spare,
		monotonic: monotonicNS,
	}, nil
}

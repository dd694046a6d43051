//go:build !linux

package supervisor

import (
	"context"
	"fmt"
	"os"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// host is empty where native jobs cannot run.
type host struct{}

// sparePool is never made where native jobs cannot run.
type sparePool struct{}

func (h *host) jobCgroups() int { return 0 }

func newSparePool(*Supervisor, int) *sparePool   { return nil }
func (p *sparePool) stats(*Stats)                {}
func (p *sparePool) close(context.Context) error { return nil }

// setup reports the unavailable mode: owning a process tree needs Linux
// (setsid, /proc, pidfds, cgroups).
func (s *Supervisor) setup() error {
	if m := s.cfg.MemoryMode; m != "" && m != engine.MemoryUnavailable {
		return fmt.Errorf("%w: %s needs Linux", ErrModeUnavailable, m)
	}
	s.mode = engine.MemoryUnavailable
	return nil
}

func (s *Supervisor) release() error { return nil }

// run is never reached: Run refuses first, as s.sys is nil.
func (s *Supervisor) run(context.Context, string, *service, engine.Job, string) (*engine.Outcome, error) {
	return nil, toolerr.Raised(toolerr.ServiceUnavailable, false)
}

// WorkerMain is the hidden "toolhost worker" entry point. Outside Linux it
// runs nothing: it reports service_unavailable on stderr and returns a
// non-zero code. See the Linux documentation for the protocol.
func WorkerMain([]*native.Package) int {
	fmt.Fprintf(os.Stderr, "toolhost worker: %s: native workers need Linux\n", toolerr.ServiceUnavailable)
	return 3
}

package api

import (
	"context"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// ReadyCheck is an engine /readyz asks at each probe: Check returns nil
// while the engine answers. Name keys its entry in the answer's checks.
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// ReadyCheckTimeout bounds each check of a probe: an engine that does not
// answer within it counts as down, so that a probe never hangs on one.
const ReadyCheckTimeout = 2 * time.Second

// readyFailure is a failed check's entry in /readyz's checks: a stable
// status, never the engine's error text (it may name hosts or users); the
// operator's log has that.
type readyFailure struct {
	Status string `json:"status"`
}

// runChecks runs cfg.Checks together, each under ReadyCheckTimeout, adds
// an entry to checks for each that failed, logs why, and reports whether
// any did.
func (s *Server) runChecks(ctx context.Context, checks gin.H) (failed bool) {
	if len(s.cfg.Checks) == 0 {
		return false
	}
	errs := make([]error, len(s.cfg.Checks))
	var wg sync.WaitGroup
	for i, rc := range s.cfg.Checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, ReadyCheckTimeout)
			defer cancel()
			errs[i] = rc.Check(cctx)
		})
	}
	wg.Wait()
	for i, rc := range s.cfg.Checks {
		if errs[i] != nil {
			failed = true
			checks[rc.Name] = readyFailure{Status: "unreachable"}
			s.cfg.Logger.Warn("readiness: a check failed", "check", rc.Name, "error", errs[i])
		}
	}
	return failed
}

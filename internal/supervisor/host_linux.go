package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
)

// host is the Linux machinery of a Supervisor.
type host struct {
	// cg makes job cgroups; nil in process_tree_observed mode.
	cg       cgroupHost
	self     identity
	pageSize int64
	// jobs numbers job cgroups within the instance.
	jobs atomic.Uint64
}

// jobCgroups counts this supervisor's job cgroups (cgroupHost.jobGroups);
// 0 without cgroups.
func (h *host) jobCgroups() int {
	if h == nil || h.cg == nil {
		return 0
	}
	return h.cg.jobGroups()
}

// instances numbers the Supervisors of this process, so that each has its
// own instance directory.
var instances atomic.Uint64

// reapTimeout bounds the reaping of one stale instance at New.
const reapTimeout = 10 * time.Second

// setup detects the memory mode (or checks the forced one) and reaps the
// stale instances of the parent cgroup.
func (s *Supervisor) setup() error {
	self, err := readStat(0)
	if err != nil {
		// Without /proc no worker can be verified, let alone owned.
		if s.cfg.MemoryMode != "" && s.cfg.MemoryMode != engine.MemoryUnavailable {
			return fmt.Errorf("%w: %s needs /proc: %w", ErrModeUnavailable, s.cfg.MemoryMode, err)
		}
		s.log.Warn("supervisor: /proc is not readable; native jobs cannot run", "error", err)
		s.mode = engine.MemoryUnavailable
		return nil
	}
	if s.cfg.MemoryMode == engine.MemoryUnavailable {
		s.mode = engine.MemoryUnavailable
		return nil
	}
	h := &host{self: self.identity(), pageSize: int64(os.Getpagesize())}
	instance := fmt.Sprintf("%d-%d-%d", self.PID, self.StartTime, instances.Add(1))
	s.scratch = filepath.Join(s.cfg.ScratchDir, instance)
	s.reapScratch()

	want := s.cfg.MemoryMode
	var reasons []error
	if want == "" || want == engine.MemoryCgroupV2Hard || want == engine.MemoryCgroupV1Hard {
		v1mounts, v2mount, err := cgroupMounts()
		own1, own2, err2 := ownCgroups()
		if err = errors.Join(err, err2); err != nil {
			reasons = append(reasons, err)
		} else {
			if want == "" || want == engine.MemoryCgroupV2Hard {
				v2, err := newV2Host(v2mount, own2, s.cfg, instance)
				if err != nil {
					reasons = append(reasons, fmt.Errorf("cgroup v2: %w", err))
				} else {
					h.cg, s.mode = v2, engine.MemoryCgroupV2Hard
				}
			}
			if h.cg == nil && (want == "" || want == engine.MemoryCgroupV1Hard) {
				v1, err := newV1Host(v1mounts, own1, s.cfg, instance)
				if err != nil {
					reasons = append(reasons, fmt.Errorf("cgroup v1: %w", err))
				} else {
					h.cg, s.mode = v1, engine.MemoryCgroupV1Hard
				}
			}
		}
		if errors.Is(errors.Join(reasons...), ErrConfig) {
			return errors.Join(reasons...)
		}
		if h.cg == nil && want != "" {
			return fmt.Errorf("%w: %s: %w", ErrModeUnavailable, want, errors.Join(reasons...))
		}
	}
	if h.cg == nil {
		s.mode = engine.MemoryProcessTreeObserved
		if want == "" {
			s.log.Info("supervisor: no writable cgroup memory controller; job memory is observed, not enforced",
				"reason", errors.Join(reasons...))
		}
	}
	s.sys = h
	if h.cg != nil {
		s.reap(h.cg)
	}
	s.log.Debug("supervisor: ready", "memory_mode", s.mode, "instance", instance)
	return nil
}

// reap removes the instance directories whose owner is gone, killing what
// still runs in their job cgroups. A live owner's instance is left alone:
// another server may share the parent.
func (s *Supervisor) reap(cg cgroupHost) {
	for _, name := range cg.instances() {
		owner, ok := instanceOwner(name)
		if !ok {
			s.log.Warn("supervisor: leaving an unknown directory in the cgroup parent", "name", name)
			continue
		}
		if alive(owner) {
			continue
		}
		if err := cg.reapInstance(name, time.Now().Add(reapTimeout)); err != nil {
			s.log.Error("supervisor: reaping a stale instance's job cgroups", "instance", name, "error", err)
			continue
		}
		s.log.Info("supervisor: reaped a stale instance's job cgroups", "instance", name)
	}
}

// reapScratch removes the scratch instance folders under
// Config.ScratchDir whose owner process is gone: a server that crashed or
// was killed left its items' scratch data there. A live owner's folder is
// left alone: another server may share the folder.
func (s *Supervisor) reapScratch() {
	entries, err := os.ReadDir(s.cfg.ScratchDir)
	if err != nil {
		return // none yet
	}
	for _, e := range entries {
		owner, ok := instanceOwner(e.Name())
		if !ok || !e.IsDir() || alive(owner) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.cfg.ScratchDir, e.Name())); err != nil {
			s.log.Error("supervisor: removing a stale scratch folder", "instance", e.Name(), "error", err)
			continue
		}
		s.log.Info("supervisor: removed a stale scratch folder", "instance", e.Name())
	}
}

// release removes this supervisor's cgroups.
func (s *Supervisor) release() error {
	if s.sys == nil || s.sys.cg == nil {
		return nil
	}
	return s.sys.cg.release()
}

// unsafeName keeps a cgroup name to safe characters.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// spareJobName returns the name of the job cgroup a spare waits in: a
// sequence number unique in the instance; its item's execution id is not
// known yet.
func (h *host) spareJobName() string {
	return "job-" + strconv.FormatUint(h.jobs.Add(1), 10)
}

// jobName returns the name of a job's cgroup: a sequence number unique in
// the instance, and the execution id for operators.
func (h *host) jobName(executionID string) string {
	id := unsafeName.ReplaceAllString(executionID, "_")
	if len(id) > 32 {
		id = id[:32]
	}
	return "job-" + strconv.FormatUint(h.jobs.Add(1), 10) + "-" + id
}

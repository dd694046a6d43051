// The cgroup v1 memory mode (cgroup_v1_hard): job cgroups in the v1 memory
// hierarchy, with the pids and freezer hierarchies beside it where they
// exist.

package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// v1Controllers are the v1 controllers a job uses: memory is required,
// pids and freezer are used where they exist.
var v1Controllers = []cgroup1.Name{cgroup1.Memory, cgroup1.Pids, cgroup1.Freezer}

// v1Hierarchy is one v1 controller's hierarchy.
type v1Hierarchy struct {
	name  cgroup1.Name
	mount mount
	// parent is the supervisor's parent cgroup relative to the mount.
	parent string
	sub    cgroup1.Subsystem
}

// dir returns the directory of rel (relative to the mount).
func (h v1Hierarchy) dir(rel string) string { return filepath.Join(h.mount.dir, rel) }

// view returns how /proc/<pid>/cgroup shows rel.
func (h v1Hierarchy) view(rel string) string { return path.Join(h.mount.root, rel) }

// v1Host makes job cgroups in the v1 memory hierarchy, with the pids and
// freezer hierarchies beside it where they exist.
type v1Host struct {
	hier     []v1Hierarchy // memory first
	instance string
	memsw    bool
	pids     int64
	log      *slog.Logger
}

// newV1Host prepares the v1 hierarchies: the memory controller must be
// mounted and its parent writable; pids and freezer are used when they
// are too. It makes this supervisor's instance directory in each.
func newV1Host(mounts map[string]mount, own map[string]string, cfg Config, instance string) (*v1Host, error) {
	h := &v1Host{instance: instance, pids: cfg.PidsLimit, log: cfg.Logger}
	for _, name := range v1Controllers {
		m, ok := mounts[string(name)]
		if !ok || filepath.Base(m.dir) != string(name) {
			if name == cgroup1.Memory {
				return nil, errors.New("no cgroup v1 memory hierarchy at <root>/memory")
			}
			continue
		}
		parent, err := parentPath(m, own[string(name)], cfg.CgroupParent)
		if err != nil {
			return nil, err
		}
		hy := v1Hierarchy{name: name, mount: m, parent: parent}
		root := filepath.Dir(m.dir)
		switch name {
		case cgroup1.Memory:
			hy.sub = cgroup1.NewMemory(root)
		case cgroup1.Pids:
			hy.sub = cgroup1.NewPids(root)
		case cgroup1.Freezer:
			hy.sub = cgroup1.NewFreezer(root)
		}
		if err := os.MkdirAll(hy.dir(path.Join(parent, instance)), 0o755); err != nil {
			if name == cgroup1.Memory {
				return nil, fmt.Errorf("making the v1 memory cgroup: %w", err)
			}
			h.log.Warn("supervisor: cgroup v1 controller not writable; jobs go without it", "controller", name, "error", err)
			continue
		}
		h.hier = append(h.hier, hy)
	}
	mem := h.hier[0]
	_, err := os.Stat(filepath.Join(mem.dir(path.Join(mem.parent, instance)), "memory.memsw.limit_in_bytes"))
	h.memsw = err == nil
	return h, nil
}

func (h *v1Host) subsystems() ([]cgroup1.Subsystem, error) {
	out := make([]cgroup1.Subsystem, len(h.hier))
	for i, hy := range h.hier {
		out[i] = hy.sub
	}
	return out, nil
}

// jobPath returns the path function of a job cgroup below instance.
func (h *v1Host) jobPath(instance, name string) cgroup1.Path {
	return func(n cgroup1.Name) (string, error) {
		for _, hy := range h.hier {
			if hy.name == n {
				return path.Join(hy.parent, instance, name), nil
			}
		}
		return "", cgroup1.ErrControllerNotActive
	}
}

func (h *v1Host) newJob(name string, limit int64) (jobGroup, error) {
	res := &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &limit}}
	if h.memsw {
		res.Memory.Swap = &limit
	}
	if h.pids > 0 {
		res.Pids = &specs.LinuxPids{Limit: &h.pids}
	}
	j := &v1Job{host: h, rel: path.Join(h.instance, name)}
	cg, err := cgroup1.New(h.jobPath(h.instance, name), res, cgroup1.WithHierarchy(h.subsystems))
	if err != nil {
		// What was made of it goes; what cannot keeps the instance
		// directory until Close or the next start's reaping.
		if rmErr := j.rmdirs(time.Now()); rmErr != nil {
			h.log.Warn("supervisor: removing a job cgroup that could not be made", "error", rmErr)
		}
		return nil, fmt.Errorf("making job cgroup %s: %w", name, err)
	}
	j.cg = cg
	return j, nil
}

func (h *v1Host) jobGroups() int {
	mem := h.hier[0]
	return len(subdirs(mem.dir(path.Join(mem.parent, h.instance))))
}

func (h *v1Host) instances() []string {
	var out []string
	for _, hy := range h.hier {
		for _, d := range subdirs(hy.dir(hy.parent)) {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

func (h *v1Host) reapInstance(instance string, deadline time.Time) error {
	var jobs []string
	for _, hy := range h.hier {
		for _, d := range subdirs(hy.dir(path.Join(hy.parent, instance))) {
			if !slices.Contains(jobs, d) {
				jobs = append(jobs, d)
			}
		}
	}
	var errs []error
	for _, name := range jobs {
		j := &v1Job{host: h, rel: path.Join(instance, name)}
		if cg, err := cgroup1.Load(h.jobPath(instance, name), cgroup1.WithHierarchy(h.subsystems)); err == nil {
			j.cg = cg
		}
		if err := j.kill(deadline); err != nil {
			errs = append(errs, err)
		}
		if err := waitEmpty(j, deadline); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := j.remove(deadline); err != nil {
			errs = append(errs, err)
		}
	}
	for _, hy := range h.hier {
		if err := removeDir(hy.dir(path.Join(hy.parent, instance)), deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (h *v1Host) release() error {
	var errs []error
	for _, hy := range h.hier {
		if err := removeDir(hy.dir(path.Join(hy.parent, h.instance)), time.Now()); err != nil {
			errs = append(errs, err)
		}
		removeParent(hy.dir(hy.parent), h.log)
	}
	return errors.Join(errs...)
}

// v1Job is one job's cgroup in the v1 hierarchies.
type v1Job struct {
	host *v1Host
	cg   cgroup1.Cgroup // nil when loading a stale one failed
	// rel is the job's path relative to the parent: instance/name.
	rel string
}

func (j *v1Job) dir(hy v1Hierarchy) string { return hy.dir(path.Join(hy.parent, j.rel)) }

func (j *v1Job) memDir() string { return j.dir(j.host.hier[0]) }

func (j *v1Job) add(pid int) error {
	if j.cg == nil {
		return errors.New("no job cgroup")
	}
	return j.cg.AddProc(uint64(pid))
}

func (j *v1Job) procs() ([]int, error) {
	var out []int
	for _, hy := range j.host.hier {
		dir := j.dir(hy)
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				if p == dir && errors.Is(err, os.ErrNotExist) {
					return filepath.SkipDir
				}
				return err
			}
			if !d.IsDir() {
				return nil
			}
			pids, err := readProcs(filepath.Join(p, "cgroup.procs"))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			for _, pid := range pids {
				if !slices.Contains(out, pid) {
					out = append(out, pid)
				}
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (j *v1Job) contains(pid int) bool {
	mem := j.host.hier[0]
	return inCgroup(pid, func(c string) bool { return slices.Contains(strings.Split(c, ","), "memory") },
		mem.view(path.Join(mem.parent, j.rel)))
}

// freezer returns the job's freezer directory, "" without the controller.
func (j *v1Job) freezer() string {
	for _, hy := range j.host.hier {
		if hy.name == cgroup1.Freezer {
			return j.dir(hy)
		}
	}
	return ""
}

// freeze freezes the job's freezer cgroup and reports whether it reached
// FROZEN before deadline (and at most a second). The containerd freezer
// waits without bound; a task stuck in the kernel must not stall cleanup.
func (j *v1Job) freeze(deadline time.Time) bool {
	dir := j.freezer()
	if dir == "" {
		return false
	}
	until := time.Now().Add(time.Second)
	if deadline.Before(until) {
		until = deadline
	}
	state := filepath.Join(dir, "freezer.state")
	for {
		if err := os.WriteFile(state, []byte("FROZEN"), 0); err != nil {
			return false
		}
		if b, err := os.ReadFile(state); err == nil && strings.TrimSpace(string(b)) == "FROZEN" {
			return true
		}
		if !time.Now().Before(until) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// thaw thaws the job's freezer cgroup. A job cgroup without a freezer
// directory (none in that hierarchy, or gone) has nothing to thaw.
func (j *v1Job) thaw() error {
	dir := j.freezer()
	if dir == "" {
		return nil
	}
	err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		// Its tasks, SIGKILLed while frozen, cannot die.
		return fmt.Errorf("thawing job cgroup %s: %w", j.rel, err)
	}
	return nil
}

func (j *v1Job) kill(deadline time.Time) (err error) {
	frozen := j.freeze(deadline)
	defer func() {
		if thawErr := j.thaw(); thawErr != nil {
			err = errors.Join(err, thawErr)
		}
	}()
	var failed []error
	for {
		pids, err := j.procs()
		if err != nil {
			return fmt.Errorf("listing job cgroup processes: %w", err)
		}
		if len(pids) == 0 {
			return nil
		}
		failed = failed[:0]
		for _, pid := range pids {
			if frozen {
				// A frozen task cannot exit, so its pid cannot be reused
				// before the signal lands.
				if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
					failed = append(failed, fmt.Errorf("killing %d: %w", pid, err))
				}
				continue
			}
			if err := signalOwned(pid, unix.SIGKILL, j.contains); err != nil && !errors.Is(err, errNotOwned) {
				failed = append(failed, err)
			}
		}
		if frozen || !time.Now().Before(deadline) {
			// Frozen tasks die once thawed; the caller waits for that.
			if len(failed) > 0 {
				return fmt.Errorf("killing job cgroup %s: %w", j.rel, errors.Join(failed...))
			}
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

func (j *v1Job) oomKills() (uint64, bool) {
	return readKey(filepath.Join(j.memDir(), "memory.oom_control"), "oom_kill")
}

func (j *v1Job) failures() bool {
	n, ok := readUint(filepath.Join(j.memDir(), "memory.failcnt"))
	return ok && n > 0
}

func (j *v1Job) peak() (int64, bool) {
	n, ok := readUint(filepath.Join(j.memDir(), "memory.max_usage_in_bytes"))
	return int64(n), ok
}

func (j *v1Job) remove(deadline time.Time) error {
	if pids, err := j.procs(); err == nil && len(pids) > 0 {
		return fmt.Errorf("job cgroup %s still holds %d processes", j.rel, len(pids))
	}
	return j.rmdirs(deadline)
}

func (j *v1Job) setLimit(limit int64) error {
	dir := j.memDir()
	files := []string{"memory.limit_in_bytes"}
	if j.host.memsw {
		// memsw never below the memory limit: raised first, lowered last.
		files = append(files, "memory.memsw.limit_in_bytes")
		if cur, ok := readUint(filepath.Join(dir, files[0])); ok && uint64(limit) > cur {
			files[0], files[1] = files[1], files[0]
		}
	}
	v := []byte(strconv.FormatInt(limit, 10))
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), v, 0); err != nil {
			return fmt.Errorf("setting the job's memory limit: %w", err)
		}
	}
	// Writing 0 resets the peak to the current usage and the failure
	// count to zero. Every v1 kernel takes it: a refusal leaves counts
	// that would charge the spare's life to the job, so the spare goes.
	for _, f := range []string{"memory.max_usage_in_bytes", "memory.failcnt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("0"), 0); err != nil {
			return fmt.Errorf("resetting the job's %s: %w", f, err)
		}
	}
	return nil
}

// rmdirs removes the job's directories in every hierarchy.
func (j *v1Job) rmdirs(deadline time.Time) error {
	var errs []error
	for _, hy := range j.host.hier {
		if err := removeTree(j.dir(hy), deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

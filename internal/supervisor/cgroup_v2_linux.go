// The cgroup v2 memory mode (cgroup_v2_hard): job cgroups in a delegated
// cgroup2 subtree.

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

	"github.com/containerd/cgroups/v3/cgroup2"
	"golang.org/x/sys/unix"
)

// v2Host makes job cgroups in a delegated cgroup2 subtree.
type v2Host struct {
	mount    mount
	parent   string // relative to the mount
	instance string
	pids     int64
	swap     bool
	hasPids  bool
	log      *slog.Logger
}

// newV2Host prepares the cgroup2 parent. Its memory controller must be
// available, which is checked before anything is made, so that a host
// without it is left untouched: the parent, when it exists, lists memory
// in its cgroup.controllers; otherwise its nearest existing ancestor
// enables memory for its children (cgroup.subtree_control), as a delegated
// subtree does. The supervisor then makes the missing directories down to
// its instance and enables memory (and pids, where available) below each
// of them and below the parent, which hold no process. It undoes what it
// made when that fails.
func newV2Host(m *mount, own string, cfg Config, instance string) (_ *v2Host, err error) {
	if m == nil {
		return nil, errors.New("no cgroup2 mount")
	}
	parent, err := parentPath(*m, own, cfg.CgroupParent)
	if err != nil {
		return nil, err
	}
	h := &v2Host{mount: *m, parent: parent, instance: instance, pids: cfg.PidsLimit, log: cfg.Logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	parentDir := filepath.Join(m.dir, parent)
	var missing []string // from the parent up
	e := parentDir
	for {
		if _, err := os.Stat(e); err == nil {
			break
		}
		missing = append(missing, e)
		if e = filepath.Dir(e); len(e) < len(m.dir) {
			return nil, errors.New("the cgroup2 mount is gone")
		}
	}
	file := "cgroup.subtree_control"
	if e == parentDir {
		file = "cgroup.controllers"
	}
	b, err := os.ReadFile(filepath.Join(e, file))
	if err != nil {
		return nil, err
	}
	available := strings.Fields(string(b))
	if !slices.Contains(available, "memory") {
		return nil, errors.New("no memory controller for the cgroup2 parent (not a delegated subtree)")
	}
	h.hasPids = slices.Contains(available, "pids")
	enable := "+memory"
	if h.hasPids {
		enable += " +pids"
	}
	var made []string
	defer func() {
		if err != nil {
			for i := len(made) - 1; i >= 0; i-- {
				if rmErr := unix.Rmdir(made[i]); rmErr != nil {
					err = errors.Join(err, fmt.Errorf("removing %s again: %w", made[i], rmErr))
				}
			}
		}
	}()
	slices.Reverse(missing)
	for _, d := range append(missing, filepath.Join(parentDir, instance)) {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("making the cgroup2 parent: %w", err)
		} else if err == nil {
			made = append(made, d)
		}
	}
	below := missing
	if e == parentDir {
		below = []string{parentDir}
	}
	for _, d := range append(below, filepath.Join(parentDir, instance)) {
		if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
			return nil, fmt.Errorf("enabling memory below %s: %w", d, err)
		}
	}
	// The instance's own files say which job files exist: swap accounting
	// may be compiled out.
	_, statErr := os.Stat(filepath.Join(parentDir, instance, "memory.swap.max"))
	h.swap = statErr == nil
	return h, nil
}

func (h *v2Host) group(instance, name string) string {
	return path.Join(h.parent, instance, name)
}

func (h *v2Host) newJob(name string, limit int64) (jobGroup, error) {
	res := &cgroup2.Resources{Memory: &cgroup2.Memory{Max: &limit}}
	yes := true
	res.Memory.OOMGroup = &yes
	if h.swap {
		zero := int64(0)
		res.Memory.Swap = &zero
	}
	if h.hasPids && h.pids > 0 {
		res.Pids = &cgroup2.Pids{Max: h.pids}
	}
	parent, err := cgroup2.Load(path.Join(h.parent, h.instance), cgroup2.WithMountpoint(h.mount.dir))
	if err != nil {
		return nil, err
	}
	mgr, err := parent.NewChild(name, res)
	if err != nil {
		return nil, fmt.Errorf("making job cgroup %s: %w", name, err)
	}
	return &v2Job{host: h, mgr: mgr, rel: h.group(h.instance, name)}, nil
}

func (h *v2Host) jobGroups() int {
	return len(subdirs(filepath.Join(h.mount.dir, h.parent, h.instance)))
}

func (h *v2Host) instances() []string { return subdirs(filepath.Join(h.mount.dir, h.parent)) }

func (h *v2Host) reapInstance(instance string, deadline time.Time) error {
	var errs []error
	for _, name := range subdirs(filepath.Join(h.mount.dir, h.parent, instance)) {
		mgr, err := cgroup2.Load(h.group(instance, name), cgroup2.WithMountpoint(h.mount.dir))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j := &v2Job{host: h, mgr: mgr, rel: h.group(instance, name)}
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
	if err := removeDir(filepath.Join(h.mount.dir, h.parent, instance), deadline); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (h *v2Host) release() error {
	err := removeDir(filepath.Join(h.mount.dir, h.parent, h.instance), time.Now())
	removeParent(filepath.Join(h.mount.dir, h.parent), h.log)
	return err
}

// v2Job is one job's cgroup2 directory.
type v2Job struct {
	host *v2Host
	mgr  *cgroup2.Manager
	rel  string
}

func (j *v2Job) dir() string { return filepath.Join(j.host.mount.dir, j.rel) }

func (j *v2Job) add(pid int) error { return j.mgr.AddProc(uint64(pid)) }

func (j *v2Job) procs() ([]int, error) {
	ps, err := j.mgr.Procs(true)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = int(p)
	}
	return out, nil
}

func (j *v2Job) contains(pid int) bool {
	return inCgroup(pid, func(c string) bool { return c == "" }, path.Join(j.host.mount.root, j.rel))
}

func (j *v2Job) kill(deadline time.Time) error {
	// cgroup.kill (Linux 5.14) kills the whole subtree at once; the
	// library falls back to freeze, kill, thaw.
	if err := j.mgr.Kill(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("killing job cgroup %s: %w", j.rel, err)
	}
	return nil
}

func (j *v2Job) oomKills() (uint64, bool) {
	return readKey(filepath.Join(j.dir(), "memory.events"), "oom_kill")
}

func (j *v2Job) failures() bool {
	n, ok := readKey(filepath.Join(j.dir(), "memory.events"), "max")
	return ok && n > 0
}

func (j *v2Job) peak() (int64, bool) {
	n, ok := readUint(filepath.Join(j.dir(), "memory.peak"))
	return int64(n), ok
}

func (j *v2Job) setLimit(limit int64) error {
	if err := os.WriteFile(filepath.Join(j.dir(), "memory.max"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		return fmt.Errorf("setting the job's memory limit: %w", err)
	}
	// Writing to memory.peak resets it (Linux 6.12); older kernels refuse
	// (EACCES: the file has no write; ENOENT: before 5.19, no peak), and
	// the peak then includes the spare's idle time. Any other refusal
	// leaves a peak that charges the spare's life to the job: the spare goes.
	err := os.WriteFile(filepath.Join(j.dir(), "memory.peak"), []byte("reset"), 0)
	if err != nil && !errors.Is(err, unix.EACCES) && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resetting the job's memory.peak: %w", err)
	}
	return nil
}

func (j *v2Job) remove(deadline time.Time) error {
	if pids, err := j.procs(); err == nil && len(pids) > 0 {
		return fmt.Errorf("job cgroup %s still holds %d processes", j.rel, len(pids))
	}
	return removeTree(j.dir(), deadline)
}

package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// cgroupHost makes and reaps the job cgroups of one memory mode.
type cgroupHost interface {
	// newJob makes the cgroup of one job with its memory limit.
	newJob(name string, limitBytes int64) (jobGroup, error)
	// instances lists the instance directories under the parent, in
	// every hierarchy.
	instances() []string
	// reapInstance kills everything in a stale instance's job cgroups
	// and removes them, then the instance directory.
	reapInstance(name string, deadline time.Time) error
	// release removes this supervisor's own instance directory, and the
	// parent when it is empty.
	release() error
}

// jobGroup is one job's cgroup.
type jobGroup interface {
	// add places pid in the cgroup, in every hierarchy.
	add(pid int) error
	// procs lists the processes in the cgroup and below it.
	procs() ([]int, error)
	// contains reports whether pid is in the cgroup now.
	contains(pid int) bool
	// kill sends SIGKILL to everything in the cgroup, freezing it first
	// where it can so that nothing forks in between.
	kill(deadline time.Time) error
	// oomKills returns the number of OOM kills in the cgroup; false when
	// the kernel does not count them.
	oomKills() (uint64, bool)
	// failures reports whether the cgroup ever hit its limit.
	failures() bool
	// peak returns the most memory the cgroup used, in bytes.
	peak() (int64, bool)
	// remove removes the cgroup once it is empty, retrying until deadline.
	remove(deadline time.Time) error
}

// instancePattern names a supervisor instance directory: the owner's pid,
// its start time, and a sequence number within the owner.
var instancePattern = regexp.MustCompile(`^([0-9]+)-([0-9]+)-([0-9]+)$`)

// instanceOwner returns the identity of the process that made an instance
// directory; false when the name is not an instance's.
func instanceOwner(name string) (identity, bool) {
	m := instancePattern.FindStringSubmatch(name)
	if m == nil {
		return identity{}, false
	}
	pid, err1 := strconv.Atoi(m[1])
	start, err2 := strconv.ParseUint(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return identity{}, false
	}
	return identity{PID: pid, StartTime: start}, true
}

// mount is one cgroup hierarchy as /proc/self/mountinfo describes it.
type mount struct {
	// dir is where the hierarchy is mounted.
	dir string
	// root is the hierarchy's path that is mounted there, usually "/".
	root string
	// options are the super options: "rw,memory" for a v1 hierarchy.
	options []string
}

// cgroupMounts returns the cgroup v1 mounts by controller and the cgroup2
// mount, if any, from /proc/self/mountinfo.
func cgroupMounts() (map[string]mount, *mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	v1 := map[string]mount{}
	var v2 *mount
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		sep := slices.Index(fields, "-")
		if sep < 6 || len(fields) < sep+4 {
			continue
		}
		m := mount{dir: unescapeMount(fields[4]), root: unescapeMount(fields[3]), options: strings.Split(fields[sep+3], ",")}
		switch fields[sep+1] {
		case "cgroup2":
			if v2 == nil {
				v2 = &m
			}
		case "cgroup":
			for _, o := range m.options {
				if _, seen := v1[o]; !seen {
					v1[o] = m
				}
			}
		}
	}
	return v1, v2, s.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups returns this process's cgroup path by v1 controller and its
// cgroup2 path, from /proc/self/cgroup.
func ownCgroups() (map[string]string, string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, "", err
	}
	v1 := map[string]string{}
	v2 := ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v1, v2, nil
}

// parentPath returns the supervisor's parent cgroup as a path relative to
// the hierarchy's mount: parent itself when absolute, else parent below
// the process's own cgroup (own, as /proc/self/cgroup shows it, relative
// to the mounted root). It refuses a path that leaves the mount.
func parentPath(m mount, own, parent string) (string, error) {
	if strings.HasPrefix(parent, "/") {
		p := path.Clean(parent)
		if p == "/" {
			return "", fmt.Errorf("%w: CgroupParent %q is the hierarchy's root", ErrConfig, parent)
		}
		return p, nil
	}
	rel := "/"
	if r, err := filepath.Rel(m.root, own); err == nil && !strings.HasPrefix(r, "..") {
		rel = path.Join("/", r)
	}
	// Cleaned as a relative path, a climb above the mount keeps its "..".
	p := path.Clean(strings.TrimPrefix(rel, "/") + "/" + parent)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%w: CgroupParent %q leaves the cgroup hierarchy from %s", ErrConfig, parent, rel)
	}
	return "/" + p, nil
}

// readUint reads a file holding one unsigned number ("max" is none).
func readUint(name string) (uint64, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// readKey reads the value of key in a flat keyed file ("oom_kill 3").
func readKey(name, key string) (uint64, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// readProcs reads a cgroup.procs file.
func readProcs(name string) ([]int, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// inCgroup reports whether /proc/<pid>/cgroup places pid at or below the
// cgroup view (the path as /proc shows it) of the hierarchy whose line
// matches.
func inCgroup(pid int, match func(controllers string) bool, view string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && match(parts[1]) {
			return parts[2] == view || strings.HasPrefix(parts[2], view+"/")
		}
	}
	return false
}

// removeDir removes an empty cgroup directory, retrying while the kernel
// still reports it busy, until deadline. A missing directory is removed.
func removeDir(dir string, deadline time.Time) error {
	delay := time.Millisecond
	for {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// removeTree removes an empty cgroup directory and the cgroups a job may
// have made below it, deepest first.
func removeTree(dir string, deadline time.Time) error {
	var errs []error
	for _, sub := range subdirs(dir) {
		if err := removeTree(filepath.Join(dir, sub), deadline); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeDir(dir, deadline); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitEmpty waits until j holds no process, or deadline.
func waitEmpty(j jobGroup, deadline time.Time) error {
	delay := time.Millisecond
	for {
		pids, err := j.procs()
		if err == nil && len(pids) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("job cgroup still holds %d processes: %w", len(pids), err)
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// subdirs lists the directories in dir.
func subdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// ---- cgroup v1 ----

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
		j.rmdirs(time.Now())
		return nil, fmt.Errorf("making job cgroup %s: %w", name, err)
	}
	j.cg = cg
	return j, nil
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
		unix.Rmdir(hy.dir(hy.parent)) // only when no other instance is left
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

// freezerHierarchy returns the freezer hierarchy, nil without it.
func (h *v1Host) freezerHierarchy() *v1Hierarchy {
	for i := range h.hier {
		if h.hier[i].name == cgroup1.Freezer {
			return &h.hier[i]
		}
	}
	return nil
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

// thaw thaws the job's freezer cgroup.
func (j *v1Job) thaw() {
	if dir := j.freezer(); dir != "" {
		os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0)
	}
}

func (j *v1Job) kill(deadline time.Time) error {
	frozen := j.freeze(deadline)
	defer j.thaw()
	for {
		pids, err := j.procs()
		if err != nil {
			return fmt.Errorf("listing job cgroup processes: %w", err)
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			if frozen {
				// A frozen task cannot exit, so its pid cannot be reused
				// before the signal lands.
				unix.Kill(pid, unix.SIGKILL)
				continue
			}
			signalOwned(pid, unix.SIGKILL, j.contains)
		}
		if frozen || !time.Now().Before(deadline) {
			// Frozen tasks die once thawed; the caller waits for that.
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

// ---- cgroup v2 ----

// v2Host makes job cgroups in a delegated cgroup2 subtree.
type v2Host struct {
	mount    mount
	parent   string // relative to the mount
	instance string
	pids     int64
	swap     bool
	hasPids  bool
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
	h := &v2Host{mount: *m, parent: parent, instance: instance, pids: cfg.PidsLimit}
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
				unix.Rmdir(made[i])
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
	unix.Rmdir(filepath.Join(h.mount.dir, h.parent))
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

func (j *v2Job) remove(deadline time.Time) error {
	if pids, err := j.procs(); err == nil && len(pids) > 0 {
		return fmt.Errorf("job cgroup %s still holds %d processes", j.rel, len(pids))
	}
	return removeTree(j.dir(), deadline)
}

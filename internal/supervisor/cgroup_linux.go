// What the cgroup v1 and v2 memory modes share: the interfaces a mode
// implements (cgroupHost, jobGroup), the instance directories' names, the
// cgroup mounts and the process's own cgroups read from /proc, and the
// helpers that read cgroup files and remove cgroup directories. The modes
// are in cgroup_v1_linux.go and cgroup_v2_linux.go; host_linux.go chooses.

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
	// jobGroups counts the job cgroups below this supervisor's instance
	// directory now, as the kernel lists them (the memory hierarchy's, on
	// cgroup v1): running items', placed spares', and emptied ones still
	// being removed.
	jobGroups() int
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
	// setLimit changes the memory limit of a cgroup made with another
	// (a spare's, at hand-off) and resets its peak and failure counts
	// where the kernel allows, so that they describe the job alone.
	setLimit(limitBytes int64) error
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
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
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

// removeParent removes the supervisors' parent cgroup directory once the
// last instance below it is gone. A parent that still holds another
// supervisor's instance or a process (ENOTEMPTY, EBUSY), or is gone
// already, stays as it is; another failure leaves it too, and is logged:
// an empty directory costs nothing, and the next start uses it again.
func removeParent(dir string, log *slog.Logger) {
	err := unix.Rmdir(dir)
	if err != nil && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EBUSY) && !errors.Is(err, unix.ENOENT) {
		log.Warn("supervisor: removing the parent cgroup", "dir", dir, "error", err)
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

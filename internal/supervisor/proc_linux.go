package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat is what the supervisor reads of a process in /proc/<pid>/stat.
type procStat struct {
	PID, PPID, PGID, SID int
	State                byte
	// Flags is field 9, the kernel's flags of the task (PF_*).
	Flags uint64
	// StartTime is field 22: clock ticks after boot. A pid names the same
	// process only while its start time is the same.
	StartTime uint64
	// RSSPages is field 24, resident pages.
	RSSPages int64
}

// live reports whether the process still runs: a zombie or a dead task
// runs nothing and holds no memory.
func (p procStat) live() bool { return p.State != 'Z' && p.State != 'X' && p.State != 'x' }

// identity returns the process's identity.
func (p procStat) identity() identity { return identity{PID: p.PID, StartTime: p.StartTime} }

// errStat is returned when a stat line cannot be parsed.
var errStat = errors.New("malformed /proc stat line")

// readStat reads /proc/<pid>/stat ("self" when pid is 0).
func readStat(pid int) (procStat, error) {
	name := "/proc/self/stat"
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses a /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may hold spaces and parentheses: the fields that
// follow start after the last ')'.
func parseStat(b []byte) (procStat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return procStat{}, errStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return procStat{}, errStat
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 || len(f[0]) != 1 {
		return procStat{}, errStat
	}
	p := procStat{PID: pid, State: f[0][0]}
	ints := []struct {
		dst   *int
		field int
	}{{&p.PPID, 4}, {&p.PGID, 5}, {&p.SID, 6}}
	for _, x := range ints {
		if *x.dst, err = strconv.Atoi(string(f[x.field-3])); err != nil {
			return procStat{}, errStat
		}
	}
	if p.Flags, err = strconv.ParseUint(string(f[9-3]), 10, 64); err != nil {
		return procStat{}, errStat
	}
	if p.StartTime, err = strconv.ParseUint(string(f[22-3]), 10, 64); err != nil {
		return procStat{}, errStat
	}
	if p.RSSPages, err = strconv.ParseInt(string(f[24-3]), 10, 64); err != nil {
		return procStat{}, errStat
	}
	return p, nil
}

// scanProcs reads every process of /proc, oldest first. Processes that
// end while the scan runs are skipped.
func scanProcs() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close() //nolint:errcheck // read-only directory: nothing to lose
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		p, err := readStat(pid)
		if err != nil {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b procStat) int {
		if a.StartTime != b.StartTime {
			if a.StartTime < b.StartTime {
				return -1
			}
			return 1
		}
		return a.PID - b.PID
	})
	return out, nil
}

// pfExiting is the kernel's PF_EXITING task flag: the task is in exit.
const pfExiting = 0x4

// exiting reports whether the process is on its way out: in exit, a
// zombie or dead, or stopped.
func (p procStat) exiting() bool {
	return !p.live() || p.Flags&pfExiting != 0 || p.State == 'T' || p.State == 't'
}

// harmlessSignals are the signals an idle worker may have pending without
// being on its way out: the Go runtime's preemption signal, a child's end
// and a terminal's resize.
const harmlessSignals = 1<<(unix.SIGURG-1) | 1<<(unix.SIGCHLD-1) | 1<<(unix.SIGWINCH-1)

// signalPending reports whether /proc/<pid>/status shows a signal pending
// for the process's main thread or the whole process (SigPnd, ShdPnd),
// other than harmlessSignals: a kill(2) that has returned is pending there
// until the process handles it. An unreadable status counts as pending.
func signalPending(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	seen := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || (string(k) != "SigPnd" && string(k) != "ShdPnd") {
			continue
		}
		mask, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
		if err != nil || mask&^harmlessSignals != 0 {
			return true
		}
		seen++
	}
	return seen != 2
}

// alive reports whether id still names a running process.
func alive(id identity) bool {
	p, err := readStat(id.PID)
	return err == nil && p.StartTime == id.StartTime && p.live()
}

// errNotOwned is returned by signalOwned when the pid no longer names a
// process of the job.
var errNotOwned = errors.New("process is not the job's")

// signalOwned sends sig to pid only if owned(pid) holds once a pidfd for
// it is open: the pidfd pins the process the pid named when it was opened,
// so a pid reused after the check can never receive the signal. A process
// that is already gone is not an error.
func signalOwned(pid int, sig unix.Signal, owned func(pid int) bool) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return fmt.Errorf("opening a pidfd for %d: %w", pid, err)
	}
	defer unix.Close(fd) //nolint:errcheck // a pidfd holds nothing to lose
	if !owned(pid) {
		return errNotOwned
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("signalling %d: %w", pid, err)
	}
	return nil
}

// monotonicNS returns CLOCK_MONOTONIC in nanoseconds: the clock every
// process of the host shares, which the job frame's deadlines use.
func monotonicNS() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("supervisor: CLOCK_MONOTONIC: %v", err))
	}
	return ts.Nano()
}

// tree is the job's process tree as /proc shows it, for the
// process_tree_observed mode and as a backstop in every mode: the worker,
// everything in its process group or session, and every descendant by the
// ppid chain, each known by pid and start time. A member stays known after
// its parent dies, so a double-forked descendant seen once is never lost.
type tree struct {
	root  identity
	owned map[int]uint64 // pid → start time
}

func newTree(root identity) *tree {
	return &tree{root: root, owned: map[int]uint64{root.PID: root.StartTime}}
}

// update adds the members found in procs (oldest first, as scanProcs
// returns them) and returns the live ones.
func (t *tree) update(procs []procStat) []procStat {
	byPID := make(map[int]procStat, len(procs))
	for _, p := range procs {
		byPID[p.PID] = p
	}
	var live []procStat
	for _, p := range procs {
		if p.StartTime < t.root.StartTime {
			continue
		}
		start, known := t.owned[p.PID]
		member := known && start == p.StartTime
		if !member {
			parent, ok := byPID[p.PPID]
			switch {
			case p.PGID == t.root.PID || p.SID == t.root.PID:
				member = true
			case ok && t.owned[p.PPID] == parent.StartTime && parent.StartTime <= p.StartTime:
				_, member = t.owned[p.PPID]
			}
			if member {
				t.owned[p.PID] = p.StartTime
			}
		}
		if member && p.live() {
			live = append(live, p)
		}
	}
	return live
}

// owns reports whether pid names a known member now.
func (t *tree) owns(pid int) bool {
	start, ok := t.owned[pid]
	if !ok {
		return false
	}
	p, err := readStat(pid)
	return err == nil && p.StartTime == start
}

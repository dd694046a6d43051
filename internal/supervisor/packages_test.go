//go:build linux

package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// probeIn is the probe tool's input: mode says what the worker does.
type probeIn struct {
	Operation string `json:"operation"`
	Mode      string `json:"mode"`
	Text      string `json:"text,omitempty"`
	// File is where the worker reports the processes it started, one
	// "pid start_time" line each, its own first.
	File string `json:"file,omitempty"`
	// Bytes is how much memory the hog touches.
	Bytes int64 `json:"bytes,omitempty"`
}

// probeOut is its output.
type probeOut struct {
	Text string `json:"text"`
}

// probeDeclaration declares the probe package at implementation version
// impl.
func probeDeclaration(impl string) []byte {
	text := guest.Text{Name: "Probe", Description: "Does what a supervisor test needs."}
	b, err := guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: impl,
		Services: []guest.Declaration{&guest.Service[probeIn, probeOut]{
			Code:          "probe",
			Name:          text.Name,
			Description:   text.Description,
			Texts:         map[string]guest.Text{"en": text, "it": text, "fr": text, "es": text},
			Category:      "test",
			IconKey:       "probe",
			UI:            guest.UI{Kind: "custom", ComponentKey: "probe", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/probe", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "run"}},
			Compute:       native.InWorker[probeIn, probeOut],
		}},
	}.Declaration()
	if err != nil {
		panic(err)
	}
	return b
}

// probePackage is the probe package at implementation version impl.
func probePackage(impl string) *native.Package {
	return &native.Package{Name: "probe", Declaration: probeDeclaration(impl), Compute: probeCompute}
}

// testPackages are the packages the test worker holds.
func testPackages() []*native.Package { return []*native.Package{probePackage("1.0.0")} }

// probeCompute does what the input's mode says.
func probeCompute(ctx *native.Context, call native.Call) ([]byte, error) {
	var in probeIn
	if err := json.Unmarshal(call.Parameters, &in); err != nil {
		return nil, err
	}
	echo := func(s string) ([]byte, error) { return json.Marshal(probeOut{Text: s}) }
	report := func(pids ...int) error {
		if in.File == "" {
			return nil
		}
		var b strings.Builder
		for _, pid := range append([]int{os.Getpid()}, pids...) {
			st, err := readStat(pid)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%d %d\n", pid, st.StartTime)
		}
		return os.WriteFile(in.File, []byte(b.String()), 0o600)
	}
	waitEnd := func() ([]byte, error) {
		<-ctx.Context().Done()
		return nil, ctx.Context().Err()
	}
	switch in.Mode {
	case "echo":
		return echo(in.Text)
	case "self":
		// Who computes: "pid start_time", then the worker's cgroups.
		st, err := readStat(0)
		if err != nil {
			return nil, err
		}
		cg, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return nil, err
		}
		return echo(fmt.Sprintf("%d %d\n%s", st.PID, st.StartTime, cg))
	case "sleep":
		if err := report(); err != nil {
			return nil, err
		}
		return waitEnd()
	case "scratch":
		// What the PAC allocator's solve does: a folder from
		// os.MkdirTemp("", "pac-") holding the model (Text, the caller's
		// data), the solver's log in the item's scratch folder, and an
		// engine running in the folder until the item ends. Nothing here
		// removes them: the supervisor must.
		dir, err := os.MkdirTemp("", "pac-")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "model.lp"), []byte(in.Text), 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(ctx.ScratchDir(), "cbc.log"), []byte(in.Text), 0o600); err != nil {
			return nil, err
		}
		cmd := exec.Command("sleep", "60")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if err := report(cmd.Process.Pid); err != nil {
			return nil, err
		}
		return waitEnd()
	case "checkpoint":
		for {
			if err := ctx.Checkpoint(); err != nil {
				return nil, err
			}
			time.Sleep(5 * time.Millisecond)
		}
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		if err := report(); err != nil {
			return nil, err
		}
		for {
			time.Sleep(time.Hour)
		}
	case "spawn", "spawn-wait":
		pids, err := spawnDescendants()
		if err != nil {
			return nil, err
		}
		if err := report(pids...); err != nil {
			return nil, err
		}
		if in.Mode == "spawn-wait" {
			return waitEnd()
		}
		return echo(strconv.Itoa(len(pids)))
	case "hold-pipe":
		// A grandchild inherits the result pipe's write end.
		fd, err := syscall.Dup(resultFD)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), "result-dup")
		cmd := exec.Command("sleep", "60")
		cmd.ExtraFiles = []*os.File{f}
		err = cmd.Start()
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := report(cmd.Process.Pid); err != nil {
			return nil, err
		}
		return echo("held")
	case "frozen-child":
		// A child in a freezer cgroup of its own below the job's, frozen:
		// SIGKILL cannot end it until someone thaws it.
		dir, err := ownFreezer()
		if err != nil {
			return nil, err
		}
		stuck := filepath.Join(dir, "stuck")
		if err := os.Mkdir(stuck, 0o755); err != nil {
			return nil, err
		}
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(stuck, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(stuck, "freezer.state"), []byte("FROZEN"), 0); err != nil {
			return nil, err
		}
		if err := report(cmd.Process.Pid); err != nil {
			return nil, err
		}
		return echo(stuck)
	case "fork-bomb":
		if err := report(); err != nil {
			return nil, err
		}
		if err := exec.Command("sh", "-c", "f() { f | f & }; f").Start(); err != nil {
			return nil, err
		}
		return waitEnd()
	case "touch":
		// Touches Bytes of memory, then answers.
		keep := make([]byte, in.Bytes)
		for i := 0; i < len(keep); i += 4096 {
			keep[i] = 1
		}
		return echo(strconv.Itoa(len(keep)))
	case "hog":
		var keep [][]byte
		for n := int64(0); n < in.Bytes; n += 1 << 20 {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		_, err := waitEnd()
		return nil, errors.Join(err, fmt.Errorf("%d chunks", len(keep)))
	case "exit":
		os.Exit(3)
	case "panic":
		panic("probe panics")
	case "kill-self":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		return waitEnd()
	case "segv":
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		return waitEnd()
	case "invalid-output":
		return []byte(`{"wrong":true}`), nil
	case "not-json":
		return []byte(`not json`), nil
	case "tool-error":
		e := toolerr.Raised(toolerr.InvalidParameters, false, toolerr.NewIssue("bad_value", "text"))
		e.Message = "text is not usable"
		return nil, e
	case "platform-code":
		return nil, toolerr.New(toolerr.MemoryLimit)
	case "plain-error":
		return nil, errors.New("secret caller data")
	}
	return nil, fmt.Errorf("unknown mode %q", in.Mode)
}

// ownFreezer returns this process's v1 freezer cgroup directory.
func ownFreezer() (string, error) {
	mounts, _, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	own, _, err := ownCgroups()
	if err != nil {
		return "", err
	}
	m, ok := mounts["freezer"]
	if !ok {
		return "", errors.New("no freezer hierarchy")
	}
	rel, err := filepath.Rel(m.root, own["freezer"])
	if err != nil {
		return "", err
	}
	return filepath.Join(m.dir, rel), nil
}

// spawnDescendants starts the descendants a job may leave behind: a
// child, a double-forked grandchild, a child in a session of its own, a
// double-forked grandchild in a session of its own, and a child that
// ignores SIGTERM. It returns their pids.
func spawnDescendants() ([]int, error) {
	var pids []int
	start := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		if err := cmd.Start(); err != nil {
			return err
		}
		pids = append(pids, cmd.Process.Pid)
		return nil
	}
	background := func(script string) error {
		out, err := exec.Command("sh", "-c", script+" </dev/null >/dev/null 2>&1 & echo $!").Output()
		if err != nil {
			return err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			return err
		}
		pids = append(pids, pid)
		return nil
	}
	steps := []func() error{
		func() error { return start("sleep", "60") },
		func() error { return background("sleep 60") },
		func() error { return start("setsid", "sleep", "60") },
		func() error { return background("setsid sleep 60") },
		func() error { return start("sh", "-c", "trap '' TERM; exec sleep 60") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return pids, err
		}
	}
	// Wait until each has exec'd (a start time read after the exec is the
	// same as before it, but setsid must have run before the report).
	time.Sleep(50 * time.Millisecond)
	return pids, nil
}

// misbehave is a worker that breaks the protocol as mode says.
func misbehave(mode string) int {
	w, err := workerSetup(testPackages())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ready := readyFrame{Frame: kindReady, Protocol: Protocol, WorkerID: w.workerID,
		PID: w.self.PID, PGID: w.pgid, StartTime: w.self.StartTime}
	hang := func() int {
		io.Copy(io.Discard, w.in) // until the supervisor closes the pipe or kills us
		time.Sleep(time.Hour)
		return 0
	}
	// afterJob sends a correct ready frame, takes the ACK and the job.
	afterJob := func() *jobFrame {
		writeFrame(w.out, ready)
		var ack [1]byte
		if _, err := io.ReadFull(w.in, ack[:]); err != nil {
			os.Exit(1)
		}
		payload, err := readFrame(w.in, MaxJobFrameBytes)
		if err != nil {
			os.Exit(1)
		}
		w.out.Write([]byte{Taken})
		var job jobFrame
		if err := decodeFrame(payload, kindJob, &job); err != nil {
			os.Exit(1)
		}
		return &job
	}
	switch mode {
	case "wrong-id":
		ready.WorkerID += "-other"
	case "wrong-pid":
		ready.PID++
		ready.PGID++
	case "wrong-pgid":
		ready.PGID = 1
	case "wrong-start":
		ready.StartTime++
	case "wrong-protocol":
		ready.Protocol++
	case "unknown-field":
		w.out.Write(frameBytes(`{"frame":"ready","protocol":` + strconv.Itoa(Protocol) + `,"worker_id":"` + w.workerID + `","pid":` +
			strconv.Itoa(w.self.PID) + `,"pgid":` + strconv.Itoa(w.pgid) + `,"start_time":` +
			strconv.FormatUint(w.self.StartTime, 10) + `,"extra":1}`))
		return hang()
	case "garbage":
		w.out.Write([]byte("this is not a frame at all\n"))
		return hang()
	case "garbage-json":
		w.out.Write(frameBytes(`{"frame":"ready",`))
		return hang()
	case "oversized":
		w.out.Write(frameBytes(strings.Repeat(" ", MaxReadyFrameBytes+1)))
		return hang()
	case "silent-exit":
		return 0
	case "silent-hang":
		return hang()
	case "no-result":
		afterJob()
		return 0
	case "partial-result":
		afterJob()
		w.out.Write(append([]byte{0, 0, 0, 100}, `{"frame":"res`...))
		return 0
	case "garbage-result":
		afterJob()
		w.out.Write(frameBytes(`{{{{`))
		return hang()
	case "foreign-result":
		job := afterJob()
		writeFrame(w.out, resultFrame{Frame: kindResult, ExecutionID: job.ExecutionID + "-other", Result: json.RawMessage(`{"text":"x"}`)})
		return hang()
	case "bad-code":
		job := afterJob()
		writeFrame(w.out, resultFrame{Frame: kindResult, ExecutionID: job.ExecutionID, Error: &toolerr.Error{Code: "made_up", Issues: []toolerr.Issue{}}})
		return hang()
	case "unvalidated-result":
		// A result the worker should have refused: the supervisor checks
		// it again.
		job := afterJob()
		writeFrame(w.out, resultFrame{Frame: kindResult, ExecutionID: job.ExecutionID, Result: json.RawMessage(`{"wrong":1}`)})
		return hang()
	default:
		fmt.Fprintf(os.Stderr, "unknown misbehaviour %q\n", mode)
		return 2
	}
	writeFrame(w.out, ready)
	return hang()
}

// frameBytes frames payload as it is.
func frameBytes(payload string) []byte {
	n := len(payload)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, payload...)
}

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// EnvWorkerID is the environment variable that holds the id the
// supervisor gave a worker at spawn, which its ready frame repeats. A
// worker without it refuses to run. It names the worker, not the
// execution: a spare worker is started before its item exists and learns
// the execution id from the job frame.
const EnvWorkerID = "TOOLHOST_WORKER_ID"

// EnvSpare is set (to "1") in the environment of a worker started as a
// spare, ahead of its item: it has time to spend before its ready frame
// that a fresh worker's item would wait for.
const EnvSpare = "TOOLHOST_WORKER_SPARE"

// The worker's file descriptors beside stdin, stdout and stderr.
const (
	// jobFD is the read end of the pipe that carries the ACK and the job.
	jobFD = 3
	// resultFD is the write end of the pipe that carries the ready and
	// result frames.
	resultFD = 4
)

// identity is a process as the kernel knows it: a pid is only the same
// process while its start time is the same.
type identity struct {
	PID       int
	StartTime uint64
}

// workerIO is one worker's side of the protocol.
type workerIO struct {
	in       io.Reader
	out      io.Writer
	workerID string
	self     identity
	pgid     int
	// services are the worker's own packages, decoded before the ready
	// frame so that a spare does it before its item exists.
	services workerServices
	// spare is set for a worker started ahead of its item (EnvSpare).
	spare bool
	// monotonic returns CLOCK_MONOTONIC in nanoseconds.
	monotonic func() int64
}

// workerService is one service of the worker's packages as the worker
// decoded it: its definition and compiled schemas (nil when they do not
// compile: its items fail with execution_failed).
type workerService struct {
	def           *tooldef.Definition
	pkg           *native.Package
	input, output *schema.Validator
}

// workerServices holds the services of the worker's packages by package
// name, then tool code. A package whose declaration does not decode has
// no entry: its items answer version_mismatch.
type workerServices map[string]map[string]*workerService

// decodeServices decodes the declarations of pkgs as the registry does
// and compiles their schemas.
func decodeServices(pkgs []*native.Package) workerServices {
	out := workerServices{}
	for _, p := range pkgs {
		if p == nil || p.Compute == nil {
			continue
		}
		if _, seen := out[p.Name]; seen {
			continue // the first package of a name is the one resolved
		}
		decl, err := tooldef.Decode(p.Declaration, tooldef.Options{})
		if err != nil {
			out[p.Name] = nil
			continue
		}
		svcs := map[string]*workerService{}
		for _, d := range decl.Services {
			if d.Definition == nil {
				continue
			}
			if _, seen := svcs[d.Definition.ToolCode]; seen {
				continue
			}
			ws := &workerService{def: d.Definition, pkg: p}
			in, err1 := schema.Compile(d.Definition.InputSchema)
			outV, err2 := schema.Compile(d.Definition.OutputSchema)
			if err1 == nil && err2 == nil {
				ws.input, ws.output = in, outV
			}
			svcs[d.Definition.ToolCode] = ws
		}
		out[p.Name] = svcs
	}
	return out
}

// errNoACK is returned by serve when the supervisor closes the pipe or
// writes anything but the ACK: the worker must not start.
var errNoACK = errors.New("no ACK from the supervisor")

// serve speaks the worker's side of the protocol: the ready frame, the
// ACK, the job, the Taken byte, the result frame. It returns an error when the protocol
// fails; a failed item is a result frame with an error and a nil return.
// A spare worker waits for the ACK, idle, for as long as the supervisor
// keeps it.
func (w workerIO) serve() error {
	// What the start allocated (package initialisation, the declarations
	// decoded, their schemas compiled) is garbage by now but still
	// resident: a spare collects it and gives its pages back before it
	// waits. It then idles with ≈ 2 MB less resident, and its exit — which
	// frees each resident page, and which the item's cleanup waits for —
	// is shorter (docs/performance.md, "Native items"). A fresh worker's
	// item would wait the ≈ 3 ms it takes, so a fresh worker does not.
	if w.spare {
		debug.FreeOSMemory()
	}
	if err := writeFrame(w.out, readyFrame{
		Frame: kindReady, Protocol: Protocol, WorkerID: w.workerID,
		PID: w.self.PID, PGID: w.pgid, StartTime: w.self.StartTime,
	}); err != nil {
		return fmt.Errorf("sending the ready frame: %w", err)
	}
	var ack [1]byte
	if _, err := io.ReadFull(w.in, ack[:]); err != nil || ack[0] != ACK {
		return errNoACK
	}
	payload, err := readFrame(w.in, MaxJobFrameBytes)
	if err != nil {
		return fmt.Errorf("reading the job frame: %w", err)
	}
	if _, err := w.out.Write([]byte{Taken}); err != nil {
		return fmt.Errorf("sending the taken byte: %w", err)
	}
	var job jobFrame
	if err := decodeFrame(payload, kindJob, &job); err != nil {
		return err
	}
	if job.ExecutionID == "" {
		return fmt.Errorf("%w: the job names no execution", errFrameMalformed)
	}
	now := time.Now()
	mono := w.monotonic()
	soft := now.Add(time.Duration(job.SoftDeadlineNS - mono))
	hard := now.Add(time.Duration(job.HardDeadlineNS - mono))
	res := execute(&job, w.services, soft, hard)
	if err := writeFrame(w.out, res); err != nil {
		return fmt.Errorf("sending the result frame: %w", err)
	}
	// The worker stays until the supervisor ends it (SIGTERM to the group)
	// or closes the job pipe: while it lives, descendants orphaned by the
	// computation stay its children (it is their subreaper), so the
	// supervisor's last census of the tree finds them by their parent.
	// Whatever ends the read, the job is done.
	io.Copy(io.Discard, w.in) //nolint:errcheck // see above
	return nil
}

// execute runs one job in this process: identity pins, input, Compute,
// output. It always returns a result frame; a failure is its error.
func execute(job *jobFrame, services workerServices, soft, hard time.Time) resultFrame {
	rf := resultFrame{Frame: kindResult, ExecutionID: job.ExecutionID}
	fail := func(e *toolerr.Error) resultFrame {
		rf.Error = e
		return rf
	}
	svc := services[job.Package][job.ToolCode]
	if svc == nil {
		return fail(toolerr.New(toolerr.VersionMismatch, toolerr.NewIssue(tooldef.IssueMismatch, "tool_code")))
	}
	def, pkg := svc.def, svc.pkg
	// A worker built from another binary than its supervisor has other pins.
	if e := def.CheckPins(job.ContractVersion, job.ImplementationVersion, job.SchemaFingerprint); e != nil {
		return fail(e)
	}
	eff := job.Policy
	if job.Operation != eff.Name || !slices.Contains(def.OperationNames(), job.Operation) {
		return fail(toolerr.New(toolerr.ExecutionFailed))
	}

	start := time.Now()
	// A validation phase that refuses keeps its duration: it ran.
	refusedInput := func(e *toolerr.Error) resultFrame {
		rf.Phases.InputValidation = nanos(time.Since(start))
		return fail(e)
	}
	params := []byte(job.Parameters)
	if int64(len(params)) > eff.MaxParameterBytes {
		return refusedInput(toolerr.New(toolerr.InputLimitExceeded))
	}
	doc, err := wire.Decode(params, wire.Limits{MaxBytes: int(eff.MaxParameterBytes), MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooDeep) || errors.Is(err, wire.ErrTooLarge) {
			return refusedInput(toolerr.New(toolerr.InputLimitExceeded))
		}
		return refusedInput(toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("invalid_json")))
	}
	if svc.input == nil {
		return fail(toolerr.New(toolerr.ExecutionFailed))
	}
	if err := svc.input.Validate(doc, toolerr.InvalidParameters); err != nil {
		var te *toolerr.Error
		errors.As(err, &te)
		return refusedInput(te)
	}
	if op, _ := doc.(map[string]any)["operation"].(string); op != job.Operation {
		return refusedInput(toolerr.New(toolerr.ExecutionFailed))
	}
	rf.Phases.InputValidation = nanos(time.Since(start))

	ctx, cancel := context.WithDeadline(context.Background(), hard)
	defer cancel()
	computed := time.Now()
	if job.ScratchDir != "" {
		// One item per worker: whatever the engines or a library put in
		// the temporary folder lands in the item's scratch folder too.
		if err := os.Setenv("TMPDIR", job.ScratchDir); err != nil {
			return fail(toolerr.New(toolerr.ExecutionFailed))
		}
	}
	nctx := native.NewContext(ctx, job.ExecutionID, soft, time.Duration(eff.EngineTimeoutMS)*time.Millisecond).WithScratchDir(job.ScratchDir)
	out, err := pkg.Compute(nctx,
		native.Call{ToolCode: job.ToolCode, Operation: job.Operation, Parameters: params, Files: job.Files, OutDir: job.OutDir})
	rf.Phases.Compute = nanos(time.Since(computed))
	if !time.Now().Before(hard) {
		return fail(toolerr.New(toolerr.ExecutionTimeout))
	}
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return fail(te)
		}
		// Any other error's text may hold caller data: it is not sent.
		return fail(toolerr.New(toolerr.ExecutionFailed))
	}

	validated := time.Now()
	refusedOutput := func(e *toolerr.Error) resultFrame {
		rf.Phases.OutputValidation = nanos(time.Since(validated))
		return fail(e)
	}
	result, err := wire.Decode(out, wire.Limits{MaxBytes: int(eff.MaxResultBytes), MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		if errors.Is(err, wire.ErrTooLarge) {
			return refusedOutput(toolerr.New(toolerr.OutputLimitExceeded))
		}
		return refusedOutput(toolerr.New(toolerr.InvalidOutput, toolerr.NewIssue("invalid_json")))
	}
	if err := svc.output.Validate(result, toolerr.InvalidOutput); err != nil {
		var te *toolerr.Error
		errors.As(err, &te)
		return refusedOutput(te)
	}
	rf.Phases.OutputValidation = nanos(time.Since(validated))

	encoded := time.Now()
	canonical, err := wire.Encode(result, wire.Limits{MaxBytes: int(eff.MaxResultBytes)})
	if err != nil {
		return fail(toolerr.New(toolerr.OutputLimitExceeded))
	}
	rf.Phases.Serialization = nanos(time.Since(encoded))
	if !time.Now().Before(hard) {
		return fail(toolerr.New(toolerr.ExecutionTimeout))
	}
	rf.Result = canonical
	return rf
}

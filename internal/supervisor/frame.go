package supervisor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// Protocol is the version of the frame protocol a worker speaks; it is in
// the ready frame, and a supervisor refuses any other. Version 2 names the
// worker, not the execution, in the environment and the ready frame: a
// spare worker is started before its item exists, and learns the
// execution id from the job frame. Version 3 adds the Taken byte.
const Protocol = 3

// ACK is the one byte the supervisor writes once the worker is verified and
// confined, before the job frame.
const ACK byte = 0x00

// Taken is the one byte the worker writes once it has read its job frame,
// before it starts on the job. A spare that dies before it (a signal from
// outside that landed while it idled, after the supervisor's last look)
// never began the item, which the supervisor then gives a fresh worker.
const Taken byte = 0x01

// Frame bounds. A frame longer than its bound is refused before it is read.
const (
	// MaxReadyFrameBytes bounds the ready frame.
	MaxReadyFrameBytes = 1 << 10
	// MaxJobFrameBytes bounds the job frame a worker accepts.
	MaxJobFrameBytes = 16 << 20
	// FrameReserveBytes is what a job or result frame may hold beyond the
	// parameters or the result: identity, policy, phases, an error's issues.
	FrameReserveBytes = 64 << 10
)

// The frame kinds, the "frame" member of every frame.
const (
	kindReady  = "ready"
	kindJob    = "job"
	kindResult = "result"
)

// The refusals of the frame codec. Each one is a protocol violation by the
// peer: the supervisor ends the item with worker_crashed.
var (
	// errFrameTooLarge is returned when a frame's length passes its bound.
	errFrameTooLarge = errors.New("frame exceeds its bound")
	// errFrameEmpty is returned when a frame's length is zero.
	errFrameEmpty = errors.New("frame is empty")
	// errFrameTruncated is returned when the stream ends inside a frame.
	errFrameTruncated = errors.New("stream ends inside a frame")
	// errFrameMalformed is returned when a frame is not the JSON object of
	// its kind.
	errFrameMalformed = errors.New("frame is malformed")
)

// readyFrame is the worker's first frame: who it is, as the kernel knows
// it. The supervisor checks every field against /proc before it confines
// the worker and sends the ACK.
type readyFrame struct {
	Frame    string `json:"frame"`
	Protocol int    `json:"protocol"`
	// WorkerID is the id the supervisor gave this worker at spawn
	// ([EnvWorkerID]).
	WorkerID string `json:"worker_id"`
	PID      int    `json:"pid"`
	PGID     int    `json:"pgid"`
	// StartTime is field 22 of /proc/<pid>/stat: clock ticks after boot.
	StartTime uint64 `json:"start_time"`
}

// jobFrame is the item, sent after the ACK.
type jobFrame struct {
	Frame string `json:"frame"`
	// ExecutionID is the item's: the worker learns it here, and its result
	// frame names it.
	ExecutionID string `json:"execution_id"`
	// Package names the native package that holds the service.
	Package string `json:"package"`
	// The four identity pins, as the supervisor decoded them.
	ToolCode              string `json:"tool_code"`
	ContractVersion       string `json:"contract_version"`
	ImplementationVersion string `json:"implementation_version"`
	SchemaFingerprint     string `json:"schema_fingerprint"`
	Operation             string `json:"operation"`
	// Policy is the operation's effective policy.
	Policy policy.Effective `json:"policy"`
	// SoftDeadlineNS and HardDeadlineNS are absolute CLOCK_MONOTONIC
	// readings in nanoseconds: one clock for every process of the host,
	// immune to wall-clock steps.
	SoftDeadlineNS int64 `json:"soft_deadline_ns"`
	HardDeadlineNS int64 `json:"hard_deadline_ns"`
	// Parameters is the caller's parameters document, verbatim.
	Parameters json.RawMessage `json:"parameters"`
	// Files are the item's input files, by path: the worker opens them
	// read-only where they are (docs/supervisor.md, "Files").
	Files []engine.File `json:"files,omitempty"`
	// OutDir is the job's output folder, when the item has one.
	OutDir string `json:"out_dir,omitempty"`
	// ScratchDir is the item's scratch folder, which the supervisor made
	// and removes after the item's cleanup.
	ScratchDir string `json:"scratch_dir"`
}

// resultFrame is the worker's answer: a result or an error, and the phases
// it measured. It is not a cleanup acknowledgement.
type resultFrame struct {
	Frame       string          `json:"frame"`
	ExecutionID string          `json:"execution_id"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *toolerr.Error  `json:"error,omitempty"`
	Phases      phaseFrame      `json:"phases_ns"`
}

// phaseFrame carries the worker's measured phases in nanoseconds; null is a
// phase it did not reach.
type phaseFrame struct {
	InputValidation  *int64 `json:"input_validation"`
	Compute          *int64 `json:"compute"`
	OutputValidation *int64 `json:"output_validation"`
	Serialization    *int64 `json:"serialization"`
}

// nanos returns d as a phase value.
func nanos(d time.Duration) *int64 {
	n := int64(d)
	return &n
}

// writeFrame writes v as one frame: a 4-byte big-endian length, then the
// JSON object. HTML characters are not escaped, so raw members (parameters,
// results) go out byte for byte.
func writeFrame(w io.Writer, v any) error {
	b, err := appendFrame(nil, v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// appendFrame appends v, framed as writeFrame writes it, to b.
func appendFrame(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	head := buf.Len()
	buf.Write([]byte{0, 0, 0, 0})
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, fmt.Errorf("encoding frame: %w", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	binary.BigEndian.PutUint32(out[head:], uint32(len(out)-head-4))
	return out, nil
}

// readFrame reads one frame of at most limit payload bytes. It reads the
// length, then exactly that many bytes: it never waits for the end of the
// stream, so a descendant that keeps the pipe open cannot hold it.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errFrameTruncated
		}
		return nil, err // io.EOF: nothing was sent
	}
	n := binary.BigEndian.Uint32(head[:])
	switch {
	case n == 0:
		return nil, errFrameEmpty
	case uint64(n) > uint64(limit):
		return nil, errFrameTooLarge
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errFrameTruncated
		}
		return nil, err
	}
	return payload, nil
}

// decodeFrame decodes payload strictly into v, a pointer to a frame struct
// whose Frame member must be kind: strict JSON (package wire: no duplicate
// names, valid UTF-8), no unknown member, nothing after the object.
func decodeFrame(payload []byte, kind string, v any) error {
	if _, err := wire.Decode(payload, wire.Limits{MaxDepth: wire.DefaultMaxDepth + 4}); err != nil {
		return fmt.Errorf("%w: %w", errFrameMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", errFrameMalformed, err)
	}
	var got struct {
		Frame string `json:"frame"`
	}
	if err := json.Unmarshal(payload, &got); err != nil || got.Frame != kind {
		return fmt.Errorf("%w: not a %s frame", errFrameMalformed, kind)
	}
	return nil
}

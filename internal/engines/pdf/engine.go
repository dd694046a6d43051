package pdf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

const (
	// maxCapturedBytes bounds what is kept of an engine's standard
	// output; the rest is discarded.
	maxCapturedBytes = 16 << 10
	// waitDelay bounds the wait for an engine's pipes after it exits or
	// is killed.
	waitDelay = time.Second
	// inputName is the input file in the job directory.
	inputName = "in.pdf"
	// jobJSONName is the job file that carries qpdf's job JSON.
	jobJSONName = "job.json"
)

// job is one item's engine work: its claimed engine window, its private
// directory and its input. A job is used by one goroutine.
type job struct {
	item    context.Context // the execution: ends at the hard deadline or on cancellation
	engines context.Context // the engine window: item, ending at the window's deadline
	cancel  context.CancelFunc
	window  native.Window
	dir     string
	// input is the absolute path of the PDF the engines read: the job's
	// input file where it is (never written to), a copy of the
	// parameters' bytes in dir, or a decrypted copy in dir.
	input string
	// outDir is the job's output folder, empty for an item that returns
	// its output in the result.
	outDir string
}

// source is where an item's PDF comes from: the job's input file "file",
// or the base64 bytes of the parameters' "file" (a compute-route item).
type source struct {
	file  *engine.File
	bytes []byte
}

// sourceOf returns the PDF of call: its job file "file" when it has one
// (the parameters' "file" is then empty, a placeholder), else the bytes
// of the parameters' "file".
func sourceOf(call native.Call, param []byte) (source, error) {
	if f, ok := call.File("file"); ok {
		if len(param) > 0 {
			return source{}, native.Refuse(toolerr.InvalidParameters, "file is given twice: as a job file and in the parameters")
		}
		return source{file: &f}, nil
	}
	return source{bytes: param}, nil
}

// startJob checks the item's PDF (size at most maxFileBytes for a job
// file, the header), claims the item's engine window and makes a private
// directory (0700) in the item's scratch folder; a PDF that came in the
// parameters is written there (0600). The caller must call close, which
// removes the directory.
func startJob(ctx *native.Context, call native.Call, src source, maxFileBytes int64) (*job, error) {
	if src.file != nil {
		if err := checkFile(src.file.Path, maxFileBytes); err != nil {
			return nil, err
		}
	} else if err := checkHeader(src.bytes); err != nil {
		return nil, err
	}
	w, err := ctx.ClaimEngineWindow(postEngineReserve)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(ctx.ScratchDir(), "toolhost-pdf-")
	if err != nil {
		return nil, fmt.Errorf("making the job directory: %w", err)
	}
	engines, cancel := context.WithDeadline(ctx.Context(), w.Deadline)
	j := &job{item: ctx.Context(), engines: engines, cancel: cancel, window: w, dir: dir, outDir: call.OutDir}
	if src.file != nil {
		j.input = src.file.Path
		return j, nil
	}
	if err := j.write(inputName, src.bytes); err != nil {
		j.close()
		return nil, err
	}
	j.input = j.path(inputName)
	return j, nil
}

// checkFile refuses a job file larger than maxBytes or without the PDF
// header, reading only its head. The file is opened read-only.
func checkFile(path string, maxBytes int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the input: %w", err)
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("opening the input: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return native.Refuse(toolerr.InvalidParameters, "file is not a regular file")
	}
	if fi.Size() > maxBytes {
		return native.Refuse(toolerr.InvalidParameters, "file takes %d bytes; the limit is %d", fi.Size(), maxBytes)
	}
	head := make([]byte, 1024)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the input: %w", err)
	}
	if !bytes.Contains(head[:n], []byte("%PDF-")) {
		return native.Refuse(toolerr.InvalidParameters, "file is not a PDF: no %%PDF- header in its first 1024 bytes")
	}
	return nil
}

// output returns the path where the engine writes the output named name:
// in the job's output folder when the item has one, else in the private
// directory, from where it is read into the result.
func (j *job) output(name string) string {
	if j.outDir != "" {
		return filepath.Join(j.outDir, name)
	}
	return j.path(name)
}

// close ends the engine window and removes the job directory. It is safe
// to call more than once.
func (j *job) close() {
	j.cancel()
	if j.dir != "" {
		_ = os.RemoveAll(j.dir)
		j.dir = ""
	}
}

// path returns the path of name in the job directory.
func (j *job) path(name string) string { return filepath.Join(j.dir, name) }

// write writes a file of the job, readable by its owner alone.
func (j *job) write(name string, data []byte) error {
	f, err := os.OpenFile(j.path(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// remove removes a file of the job now rather than at close.
func (j *job) remove(name string) { _ = os.Remove(j.path(name)) }

// move moves a file of the private directory into the job's output
// folder as name, copying it where a rename cannot cross file systems.
func (j *job) move(from, name string) error {
	to := filepath.Join(j.outDir, name)
	if err := os.Rename(j.path(from), to); err == nil {
		return nil
	}
	src, err := os.Open(j.path(from))
	if err != nil {
		return fmt.Errorf("moving %s: %w", from, err)
	}
	defer src.Close() //nolint:errcheck // read-only file: nothing to lose
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("moving %s: %w", from, err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("moving %s: %w", from, err)
	}
	return nil
}

// read reads a file the engine wrote (at path), refusing one larger than maxBytes
// before reading it; refusal makes the error from the size.
func (j *job) read(path string, maxBytes int64, refusal func(size int64) error) ([]byte, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if fi.Size() > maxBytes {
		return nil, refusal(fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(b)) > maxBytes {
		return nil, refusal(int64(len(b)))
	}
	return b, nil
}

// exit is how an engine run ended: its exit status and its captured,
// bounded standard output.
type exit struct {
	code   int
	stdout []byte
}

// run runs engine with args in the job directory, inside the engine
// window, and returns its exit status. An engine that could not start,
// was killed by a signal, or ran past the window is an error here: a
// *toolerr.Error with execution_failed or execution_limit.
func (j *job) run(engine string, args ...string) (exit, error) {
	cmd := exec.CommandContext(j.engines, engine, args...)
	cmd.Dir = j.dir
	// A minimal environment: nothing of the worker's reaches the engine,
	// and whatever caches an engine writes land in the job directory.
	cmd.Env = []string{"LC_ALL=C", "HOME=" + j.dir, "TMPDIR=" + j.dir}
	// Standard error goes to /dev/null: it is never shown to callers,
	// since it may quote the file.
	var stdout capped
	cmd.Stdout = &stdout
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	switch {
	case err == nil:
		// Finished in time, or at the very end of the window: the next
		// checkpoint sees an execution that has ended.
		return exit{code: 0, stdout: stdout.buf}, nil
	case j.item.Err() != nil:
		// The execution ended (hard deadline, cancellation): the platform
		// reports the item's own outcome.
		return exit{}, toolerr.New(toolerr.ExecutionLimit)
	case j.engines.Err() != nil:
		return exit{}, limit("%s did not finish within the engine window of %d ms", engine, j.window.Timeout.Milliseconds())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if errors.Is(err, exec.ErrNotFound) {
			return exit{}, native.Refuse(toolerr.ExecutionFailed, "%s is not installed on this host", engine)
		}
		return exit{}, native.Refuse(toolerr.ExecutionFailed, "%s could not be run", engine)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exit{}, native.Refuse(toolerr.ExecutionFailed, "%s ended with signal %s", engine, ws.Signal())
	}
	return exit{code: ee.ExitCode(), stdout: stdout.buf}, nil
}

// runQPDF runs qpdf on the job JSON spec (qpdf --job-json-help), which it
// reads from a job file readable by the worker's user alone and removed
// as soon as qpdf exits. Passwords travel in spec, never on a command
// line: other users can read a process's arguments in /proc.
func (j *job) runQPDF(spec any) (exit, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return exit{}, fmt.Errorf("encoding the qpdf job: %w", err)
	}
	if err := j.write(jobJSONName, b); err != nil {
		return exit{}, err
	}
	defer j.remove(jobJSONName)
	return j.run(QPDF, "--job-json-file="+jobJSONName)
}

// unexpected is the execution_failed error of an engine exit status the
// caller has no meaning for.
func unexpected(engine string, code int) error {
	return native.Refuse(toolerr.ExecutionFailed, "%s exited with status %d", engine, code)
}

// capped is an io.Writer that keeps the first maxCapturedBytes written to
// it and discards the rest.
type capped struct{ buf []byte }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxCapturedBytes - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

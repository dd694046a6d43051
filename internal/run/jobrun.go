// The job handler of the job tools (ADR-027): a job of type T whose input
// names operation O under "tool" runs the tool whose run.job is {T, O},
// resolved in the live snapshot when the job runs, as one item through
// the same item path as every run (App.Item, the executor, the outcome).

package run

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// ResolveJob is the jobs subsystem's Config.Resolve: a job type has a
// handler while a tool of the live snapshot declares it, asked at each
// submission and when the job's turn comes, so the job types of a tool
// dropped into the folder run without a restart. A job whose type no tool
// declares any more when its turn comes fails with unknown_tool (the jobs
// subsystem's code), and one whose operation is gone from a type that
// remains fails with unknown_tool too (runJob): either way, its tool left
// the catalogue. Runs are not Retryable: a tool run is not known to be
// safe to repeat after a crash.
//
// While the first scan of the tools folder still loads (a server that
// listens first), a type no published tool declares yet may belong to a
// module still loading: ResolveJob waits for the scan to end (each load
// ends by its phase deadlines) before it answers, so that a job queued
// before a restart is not failed for its module being late.
func (a *App) ResolveJob(jobType string) (jobs.Handler, bool) {
	if a.declares(jobType) {
		return jobs.Handler{Run: a.runJob}, true
	}
	if a.cfg.Started != nil {
		select {
		case <-a.cfg.Started:
		default:
			<-a.cfg.Started
			if a.declares(jobType) {
				return jobs.Handler{Run: a.runJob}, true
			}
		}
	}
	return jobs.Handler{}, false
}

// declares reports whether a tool of the live snapshot declares jobType.
func (a *App) declares(jobType string) bool {
	return slices.Contains(a.cfg.Snapshot().JobTypes(), jobType)
}

// runJob runs one job of a job tool. The tool still speaks in parameters
// and results: each declared file input is read from the job's input files
// and passed base64-encoded under its name, and every string of the result
// that the output schema marks contentEncoding base64 is written out as an
// output file and replaced by the file's name.
func (a *App) runJob(ctx context.Context, job *jobs.Run) (_ json.RawMessage, err error) {
	p := a.cfg.Platform
	doc, err := wire.Decode(job.Input, wire.Limits{MaxDepth: 2 * p.MaxJSONDepth})
	input, ok := doc.(map[string]any)
	if err != nil || !ok {
		return nil, toolerr.New(toolerr.InvalidParameters)
	}
	op, _ := input["tool"].(string)
	svc, ok := a.cfg.Snapshot().JobTool(job.Type, op)
	if !ok {
		return nil, toolerr.New(toolerr.UnknownTool)
	}
	d := svc.Definition
	start := time.Now()
	defer func() { a.countJob(ctx, svc.Code(), err, time.Since(start)) }()
	params := JobParameters(input)
	// A native tool gets the job's files as files, by path (the worker
	// opens them read-only), and writes its outputs into the job's output
	// folder; its parameter for each file is an empty placeholder. A WASM
	// tool has no filesystem: it gets each file base64 in its parameters.
	native := strings.HasPrefix(svc.Source, "builtin/")
	var files []engine.File
	for _, in := range d.Platform.Files {
		i := indexFile(job.Files, in.Name)
		if i < 0 {
			continue // the tool's input schema says whether it is required
		}
		f := job.Files[i]
		if native {
			files = append(files, engine.File{Name: f.Name, Path: f.Path, MediaType: f.MediaType, SizeBytes: f.SizeBytes})
			params[in.Name] = ""
			continue
		}
		b, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, fmt.Errorf("reading input %s: %w", in.Name, err)
		}
		params[in.Name] = base64.StdEncoding.EncodeToString(b)
	}
	job.Progress(jobs.Progress{Done: 0, Total: 1})
	it, terr := a.Item(svc, "job", params)
	if terr != nil {
		return nil, terr
	}
	if native {
		it.Files, it.OutDir = files, job.OutDir
	}
	r, err := a.execute(ctx, it)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err() // cancelled: the subsystem decides what that means
	case err != nil:
		return nil, jobError(err)
	case !r.Succeeded:
		if r.Error != nil {
			return nil, r.Error
		}
		return nil, toolerr.New(toolerr.ExecutionFailed)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Result))
	dec.UseNumber()
	var result any
	if err := dec.Decode(&result); err != nil {
		return nil, fmt.Errorf("decoding the result: %w", err)
	}
	w := fileWriter{dir: job.OutDir, defs: defsOf(d.OutputSchema)}
	if result, err = w.walk(d.OutputSchema, result, nil); err != nil {
		return nil, err
	}
	out, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	job.Progress(jobs.Progress{Done: 1, Total: 1})
	return out, nil
}

// jobError is the platform error a job fails with when the executor
// refused its item.
func jobError(err error) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	if r, ok := AsRefusal(err); ok {
		switch r.Code {
		case Overloaded:
			return toolerr.New(toolerr.QueueFull)
		case Timeout:
			return toolerr.New(toolerr.QueueTimeout)
		case ToolUnavailable:
			return toolerr.New(toolerr.ToolUnavailable)
		}
	}
	return toolerr.New(toolerr.ServiceUnavailable)
}

// countJob counts one job run of tool that ended with err in the metrics:
// the outcome is the item's ("success"), the error's code, or "cancelled"
// when the job's context ended; the duration is the handler's, from the
// tool's resolution to its result files written.
func (a *App) countJob(ctx context.Context, tool string, err error, d time.Duration) {
	m := a.cfg.Metrics
	if m == nil {
		return
	}
	outcome := outcomeSuccess
	var te *toolerr.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome = "cancelled"
	case errors.As(err, &te):
		outcome = string(te.Code)
	default:
		outcome = string(toolerr.ExecutionFailed)
	}
	m.CountRun(tool, outcome)
	m.ObserveItemDuration(tool, d)
}

func indexFile(files []jobs.InputFile, name string) int {
	for i, f := range files {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// defsOf returns the $defs of a schema, for its local $refs.
func defsOf(schema any) map[string]any {
	m, _ := schema.(map[string]any)
	defs, _ := m["$defs"].(map[string]any)
	return defs
}

// fileWriter turns the base64 strings of a result into output files.
type fileWriter struct {
	dir  string
	defs map[string]any
	// depth bounds $ref chains.
	depth int
}

// walk returns v with each string that schema marks contentEncoding
// base64 written to a file and replaced by the file's name. path is v's
// location in the result, which names the file.
func (w *fileWriter) walk(schema, v any, path []string) (any, error) {
	s, ok := schema.(map[string]any)
	if !ok || v == nil {
		return v, nil
	}
	if ref, ok := s["$ref"].(string); ok {
		if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok && w.depth < 32 {
			w.depth++
			defer func() { w.depth-- }()
			return w.walk(w.defs[name], v, path)
		}
		return v, nil
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := s[key].([]any)
		for _, alt := range alts {
			var err error
			if v, err = w.walk(alt, v, path); err != nil {
				return nil, err
			}
		}
	}
	switch x := v.(type) {
	case string:
		if s["contentEncoding"] != "base64" {
			return v, nil
		}
		return w.write(x, path)
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, pv := range x {
			ps, ok := props[k]
			if !ok {
				continue
			}
			nv, err := w.walk(ps, pv, append(path, k))
			if err != nil {
				return nil, err
			}
			x[k] = nv
		}
	case []any:
		for i, iv := range x {
			nv, err := w.walk(s["items"], iv, append(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
	}
	return v, nil
}

// write decodes one base64 value into an output file named from its path
// and its sniffed type, and returns the name.
func (w *fileWriter) write(value string, path []string) (any, error) {
	b, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		// Not base64 after all (a tool bug): the result keeps it.
		return value, nil
	}
	name := strings.Join(path, "-")
	if name == "" {
		name = "result"
	}
	name += extension(sniff.Detect(head(b)))
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating output %s: %w", name, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing output %s: %w", name, err)
	}
	return name, nil
}

func head(b []byte) []byte {
	if len(b) > sniff.HeadBytes {
		return b[:sniff.HeadBytes]
	}
	return b
}

// extension returns the file name extension of a sniffed media type.
func extension(mediaType string) string {
	mt, _, _ := strings.Cut(mediaType, ";")
	switch strings.TrimSpace(mt) {
	case "application/pdf":
		return ".pdf"
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "application/zip":
		return ".zip"
	case "text/plain":
		return ".txt"
	}
	return ".bin"
}

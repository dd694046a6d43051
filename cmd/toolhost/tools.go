package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolhost/toolhost/internal/cachedir"
	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	runpath "github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/internal/wire"
)

// toolFlags are the settings of the commands that see the tools as the
// server does, with serve's defaults and sources, so that a command run
// beside a server sees its folder and shares its compilation cache.
type toolFlags struct {
	toolsDir   string
	cacheDir   string
	cacheMax   int64
	probeAllow string
}

// register adds --tools-dir, --cache-dir, --cache-max-bytes and
// --probe-allow.
func (f *toolFlags) register(o *options) {
	f.registerCache(o)
	o.register("tools-dir", &stringValue{p: &f.toolsDir})
	o.register("probe-allow", &stringValue{p: &f.probeAllow})
}

// registerCache adds --cache-dir and --cache-max-bytes alone.
func (f *toolFlags) registerCache(o *options) {
	o.register("cache-dir", &stringValue{p: &f.cacheDir})
	o.register("cache-max-bytes", &bytesValue{p: &f.cacheMax})
}

// bound keeps the cache folder within --cache-max-bytes while the command
// runs (docs/configuration.md, "The cache folder"). The caller closes it,
// which prunes what the command wrote.
func (f *toolFlags) bound(log *slog.Logger) (*cachedir.Bound, error) {
	b, err := cachedir.Open(cachedir.Config{Dir: f.cacheDir, MaxBytes: f.cacheMax, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("opening the cache folder %s: %w", f.cacheDir, err)
	}
	return b, nil
}

// defaultCacheDir is the user's cache folder, or none when it is unknown.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolhost", "compiled")
}

// open composes the tools as serve does (server.OpenTools): the tools
// folder, the native packages in supervised workers, the page-only tools,
// on platform — but static (no watcher) and waiting for every load, as a
// one-shot command should — with the cache folder kept within its bound.
// The caller calls close, which releases them.
func (f *toolFlags) open(ctx context.Context, platform policy.Platform, log *slog.Logger) (tools *server.Tools, close func() error, err error) {
	bound, err := f.bound(log)
	if err != nil {
		return nil, nil, err
	}
	tools, err = server.OpenTools(ctx, server.ToolsConfig{
		Dir: f.toolsDir, CacheDir: f.cacheDir, Platform: platform,
		Natives: engines.Packages(), ProbeAllow: f.probeAllow,
		Static: true, Logger: log,
	})
	if err != nil {
		return nil, nil, errors.Join(err, bound.Close())
	}
	return tools, func() error { return errors.Join(tools.Close(ctx), bound.Close()) }, nil
}

// parseWithPositional parses flags that may follow positional arguments.
func parseWithPositional(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for len(args) > 0 {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	return positional, nil
}

// runList prints every tool the server would serve from the tools folder
// and the binary — the folder's modules, the native packages, the
// page-only tools — with its availability, and every refusal
// (docs/registry.md, "toolhost list").
func runList(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var tf toolFlags
	tf.register(o)
	if rest, err := o.parse(args, false); err != nil || len(rest) != 0 {
		return usageOr(err, fmt.Errorf("%w: list takes only flags", errUsage))
	}
	ctx := context.Background()
	tools, closeTools, err := tf.open(ctx, policy.DefaultPlatform(), quietLog())
	if err != nil {
		return err
	}
	defer closeReporting(&err, closeTools)
	return printCanonical(stdout, listing(tools.Registry.Snapshot()))
}

// listed is one service in toolhost list's document.
type listed struct {
	ToolCode string `json:"tool_code"`
	Name     string `json:"name"`
	// Source is "NAME.wasm" or "builtin/NAME".
	Source    string              `json:"source"`
	Execution contracts.Execution `json:"execution"`
	// Status is the tools.tool@1 status, as the descriptor gives it.
	Status contracts.Status `json:"status"`
	// Available says whether the server runs the tool; Reason says why
	// not: page_only, or the descriptor's statusReason.
	Available             bool     `json:"available"`
	Reason                string   `json:"reason,omitempty"`
	ContractVersion       string   `json:"contract_version"`
	ImplementationVersion string   `json:"implementation_version"`
	SchemaFingerprint     string   `json:"schema_fingerprint"`
	Operations            []string `json:"operations"`
}

// listing is toolhost list's document: every published service, sorted by
// tool code, and every refusal of the snapshot.
func listing(snap *registry.Snapshot) map[string]any {
	services := []listed{}
	for _, svc := range snap.Services() {
		d := svc.Definition
		l := listed{
			ToolCode: d.ToolCode, Name: d.Name, Source: svc.Source,
			Execution: d.Platform.Execution, Status: d.Platform.Status, Available: true,
			ContractVersion: d.ContractVersion, ImplementationVersion: d.ImplementationVersion,
			SchemaFingerprint: d.Fingerprint, Operations: d.OperationNames(),
		}
		switch {
		case !d.Platform.API:
			// Listed by the catalogue, run by no API (ADR-027).
			l.Available, l.Reason = false, catalog.UnavailablePageOnly
		case !svc.Available():
			l.Status, l.Available, l.Reason = contracts.StatusUnavailable, false, svc.StatusReason()
		}
		services = append(services, l)
	}
	failures := snap.Failures()
	if failures == nil {
		failures = []registry.Failure{}
	}
	return map[string]any{"services": services, "failures": failures}
}

// describeModule is the report of one module file: its services, or why it
// was refused.
func describeModule(file string, t *wasmtool.Tool, err error) map[string]any {
	if err != nil {
		return map[string]any{"file": file, "refused": loadRefusal(err)}
	}
	var services []any
	for _, s := range t.Services() {
		entry := map[string]any{"tool_code": s.ToolCode}
		switch {
		case s.Refusal != nil:
			entry["refused"] = map[string]any{"reason": s.Refusal.Reason, "path": s.Refusal.Path, "detail": s.Refusal.Error()}
		case s.Unavailable != nil:
			entry["unavailable"] = s.Unavailable.Error()
		default:
			d := s.Definition
			entry["name"] = d.Name
			entry["schema_fingerprint"] = d.Fingerprint
			entry["operations"] = d.OperationNames()
		}
		services = append(services, entry)
	}
	return map[string]any{
		"file":                   file,
		"contract_version":       t.ContractVersion(),
		"implementation_version": t.ImplementationVersion(),
		"services":               services,
	}
}

func loadRefusal(err error) map[string]any {
	var le *wasmtool.LoadError
	if errors.As(err, &le) {
		return map[string]any{"reason": le.Reason, "detail": le.Error()}
	}
	return map[string]any{"reason": "unreadable", "detail": err.Error()}
}

// checkFlags is the flag set of `check MODULE.wasm`, whose settings it
// registers in tf.
func checkFlags(tf *toolFlags) *options {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	tf.registerCache(o)
	return o
}

// runCheckModule is `check MODULE.wasm [--cache-dir DIR] [--cache-max-bytes SIZE]`.
func runCheckModule(path string, args []string, stdout io.Writer) error {
	var tf toolFlags
	o := checkFlags(&tf)
	if rest, err := o.parse(args, false); err != nil || len(rest) != 0 {
		return usageOr(err, fmt.Errorf("%w: check MODULE.wasm takes only flags after the module", errUsage))
	}
	return checkModule(path, tf, stdout)
}

// checkModule loads one module file with the server's loader, caching
// what it compiles in tf's cache folder, and reports its services or
// refusals, with the full reasons; it fails when anything was refused.
func checkModule(path string, tf toolFlags, stdout io.Writer) (err error) {
	ctx := context.Background()
	log := quietLog()
	bound, err := tf.bound(log)
	if err != nil {
		return err
	}
	defer closeReporting(&err, bound.Close)
	// No folder and no natives: only the loader is used.
	tools, err := server.OpenTools(ctx, server.ToolsConfig{
		CacheDir: tf.cacheDir, Static: true, Logger: log,
	})
	if err != nil {
		return err
	}
	defer closeReporting(&err, func() error { return tools.Close(ctx) })
	t, err := tools.Loader.LoadFile(ctx, path)
	if t != nil {
		defer closeReporting(&err, func() error { return t.Close(ctx) })
	}
	if perr := printCanonical(stdout, describeModule(filepath.Base(path), t, err)); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	for _, s := range t.Services() {
		if s.Refusal != nil || s.Unavailable != nil {
			return fmt.Errorf("%s: service %q is not usable", path, s.ToolCode)
		}
	}
	return nil
}

// runRun runs one item: the parameters document from a file or standard
// input, the result document (or the platform error) to stdout.
func runRun(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var tf toolFlags
	tf.register(o)
	input := fs.String("input", "-", "the parameters document: a `file`, or - for standard input")
	positional, err := o.parse(args, true)
	if err != nil || len(positional) != 1 {
		return usageOr(err, fmt.Errorf("%w: run takes one TOOL_CODE", errUsage))
	}
	code := positional[0]
	var params []byte
	if *input == "-" {
		params, err = io.ReadAll(io.LimitReader(stdin, 8<<20))
	} else {
		params, err = os.ReadFile(*input)
	}
	if err != nil {
		return err
	}
	ctx := context.Background()
	res, err := runItem(ctx, tf, code, params)
	if err != nil {
		return err
	}
	if res.Succeeded {
		_, err := stdout.Write(append(res.Result, '\n'))
		return err
	}
	if err := printCanonical(stdout, res.Error); err != nil {
		return err
	}
	return fmt.Errorf("%s failed: %s", code, res.Error.Code)
}

// openRegistry opens the tools as the server composes them (toolFlags.open)
// and returns their registry; close releases everything.
func openRegistry(ctx context.Context, tf toolFlags, platform policy.Platform, log *slog.Logger) (reg *registry.Registry, close func() error, err error) {
	tools, closeTools, err := tf.open(ctx, platform, log)
	if err != nil {
		return nil, nil, err
	}
	return tools.Registry, closeTools, nil
}

// quietLog is the operator's log of one-shot commands: warnings and errors
// only, on stderr.
func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runItem runs one item of code as the server would: the tools folder and
// the native packages composed as serve composes them, the item through
// the application layer's item path and the executor (so the same pins,
// checks, limits, deadlines and sandboxes apply), native tools in
// supervised workers. A parameters document that is not strict JSON is an
// invalid_parameters result, as it is per item in a batch.
func runItem(ctx context.Context, tf toolFlags, code string, params []byte) (*runpath.Result, error) {
	platform := policy.DefaultPlatform()
	doc, err := wire.Decode(params, wire.Limits{MaxBytes: int(platform.MaxRequestBodyBytes), MaxDepth: 2 * platform.MaxJSONDepth})
	if err != nil {
		return &runpath.Result{Tool: code, Error: toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueInvalid))}, nil
	}
	log := quietLog()
	tools, closeTools, err := tf.open(ctx, platform, log)
	if err != nil {
		return nil, err
	}
	defer closeLogging(log, "the tools", closeTools)
	reg := tools.Registry
	ex, err := executor.New(executor.Config{Platform: platform, Snapshot: reg.Snapshot, Logger: log})
	if err != nil {
		return nil, err
	}
	defer closeLogging(log, "the executor", func() error { return ex.Shutdown(ctx) })
	app, err := runpath.New(runpath.Config{Platform: platform, Snapshot: reg.Snapshot, Executor: ex, Logger: log})
	if err != nil {
		return nil, err
	}
	return app.Local(ctx, code, doc)
}

// isModulePath reports whether a check argument names a module file.
func isModulePath(arg string) bool { return strings.HasSuffix(arg, ".wasm") }

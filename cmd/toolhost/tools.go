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
	"slices"
	"strings"
	"time"

	"toolhost/host"
	"toolhost/internal/engines"
	"toolhost/internal/engines/pages"
	"toolhost/internal/executor"
	"toolhost/internal/policy"
	"toolhost/internal/registry"
	"toolhost/internal/schema"
	"toolhost/internal/supervisor"
	"toolhost/internal/toolerr"
	"toolhost/internal/wasmtool"
	"toolhost/internal/wire"
)

// toolFlags are the flags of the commands that load tool modules.
type toolFlags struct {
	toolsDir string
	cacheDir string
}

func (f *toolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.toolsDir, "tools-dir", "wasm", "the folder of tool modules")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "where compiled modules are cached")
}

// defaultCacheDir is the user's cache folder, or none when it is unknown.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolhost", "compiled")
}

// loader opens a host runtime and a loader on the default platform.
func (f *toolFlags) loader(ctx context.Context) (*host.Runtime, *wasmtool.Loader, error) {
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: f.cacheDir})
	if err != nil {
		return nil, nil, err
	}
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		rt.Close(ctx)
		return nil, nil, err
	}
	return rt, l, nil
}

// parseWithPositional parses flags that may follow positional arguments.
func parseWithPositional(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
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

// loadedModule is one module of the tools folder, loaded or refused.
type loadedModule struct {
	file string
	tool *wasmtool.Tool
	err  error
}

// loadDir loads every .wasm module of dir, in name order.
func loadDir(ctx context.Context, l *wasmtool.Loader, dir string) ([]loadedModule, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("reading the tools folder: %w", err)
	}
	slices.Sort(files)
	mods := make([]loadedModule, len(files))
	for i, file := range files {
		t, err := l.LoadFile(ctx, file)
		mods[i] = loadedModule{file: filepath.Base(file), tool: t, err: err}
	}
	return mods, nil
}

func closeAll(ctx context.Context, mods []loadedModule) {
	for _, m := range mods {
		if m.tool != nil {
			m.tool.Close(ctx)
		}
	}
}

// runList prints every service of the tools folder, and every refusal.
func runList(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var tf toolFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return fmt.Errorf("%w: list takes only flags", errUsage)
	}
	ctx := context.Background()
	rt, l, err := tf.loader(ctx)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	mods, err := loadDir(ctx, l, tf.toolsDir)
	if err != nil {
		return err
	}
	defer closeAll(ctx, mods)
	var out []any
	for _, m := range mods {
		out = append(out, describeModule(m))
	}
	return printCanonical(stdout, map[string]any{"modules": out})
}

// describeModule is a module's report: its services or its refusal.
func describeModule(m loadedModule) map[string]any {
	if m.err != nil {
		return map[string]any{"file": m.file, "refused": loadRefusal(m.err)}
	}
	var services []any
	for _, s := range m.tool.Services() {
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
		"file":                   m.file,
		"contract_version":       m.tool.ContractVersion(),
		"implementation_version": m.tool.ImplementationVersion(),
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

// checkModule loads one module file and reports its services or refusals;
// it fails when anything was refused.
func checkModule(path string, stdout io.Writer) error {
	ctx := context.Background()
	var tf toolFlags
	tf.cacheDir = defaultCacheDir()
	rt, l, err := tf.loader(ctx)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	t, err := l.LoadFile(ctx, path)
	m := loadedModule{file: filepath.Base(path), tool: t, err: err}
	defer closeAll(ctx, []loadedModule{m})
	if perr := printCanonical(stdout, describeModule(m)); perr != nil {
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
	var tf toolFlags
	tf.register(fs)
	input := fs.String("input", "-", "the parameters document: a file, or - for standard input")
	positional, err := parseWithPositional(fs, args)
	if err != nil || len(positional) != 1 {
		return fmt.Errorf("%w: run takes one TOOL_CODE", errUsage)
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
	if res.Status == executor.StatusSuccess {
		_, err := stdout.Write(append(res.Result, '\n'))
		return err
	}
	if err := printCanonical(stdout, res.Error); err != nil {
		return err
	}
	return fmt.Errorf("%s failed: %s", code, res.Error.Code)
}

// openRegistry opens what a one-shot command needs to see the tools as the
// server does: a host runtime, a supervisor for the native packages, and a
// static registry over the tools folder and those packages. close releases
// them, in reverse order.
func openRegistry(ctx context.Context, tf toolFlags, platform policy.Platform, log *slog.Logger) (reg *registry.Registry, close func(), err error) {
	var closers []func()
	close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			close()
		}
	}()
	rt, l, err := tf.loader(ctx)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { rt.Close(ctx) })
	sup, err := supervisor.New(supervisor.Config{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { sup.Close(ctx) })
	builtins := []registry.Builtin{{Name: pages.Name, Declaration: pages.Declaration(), Runner: pages.Runner{}}}
	for _, p := range engines.Packages() {
		builtins = append(builtins, registry.Builtin{Name: p.Name, Declaration: p.Declaration,
			Runner: sup.Runner(p), MissingEngines: p.MissingEngines()})
	}
	reg, err = registry.Open(ctx, registry.Config{Dir: tf.toolsDir, Loader: l, Platform: platform,
		Builtins: builtins, Static: true, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { reg.Close(ctx) })
	return reg, close, nil
}

// quietLog is the operator's log of one-shot commands: warnings and errors
// only, on stderr.
func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runItem runs one item of code as the server would: the tools folder and
// the native packages in a registry, the item through the executor (so the
// same pins, limits, deadlines and sandboxes apply), native tools in
// supervised workers. A parameters document that is not strict JSON is an
// invalid_parameters result, as it is per item in a batch.
func runItem(ctx context.Context, tf toolFlags, code string, params []byte) (*executor.ItemResult, error) {
	platform := policy.DefaultPlatform()
	doc, err := wire.Decode(params, wire.Limits{MaxBytes: int(platform.MaxRequestBodyBytes), MaxDepth: 2 * platform.MaxJSONDepth})
	if err != nil {
		return &executor.ItemResult{ToolCode: code, Status: executor.StatusError,
			Error: toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue(schema.IssueInvalid))}, nil
	}
	canonical, err := wire.Encode(doc, wire.Limits{MaxDepth: 2 * platform.MaxJSONDepth})
	if err != nil {
		return nil, err
	}
	log := quietLog()
	reg, closeReg, err := openRegistry(ctx, tf, platform, log)
	if err != nil {
		return nil, err
	}
	defer closeReg()
	ex, err := executor.New(executor.Config{Platform: platform, Snapshot: reg.Snapshot, Logger: log})
	if err != nil {
		return nil, err
	}
	defer ex.Shutdown(ctx)
	item := executor.Item{CorrelationID: "cli", ToolCode: code, Parameters: canonical}
	if svc, ok := reg.Snapshot().Service(code); ok {
		// The command line runs what is there: it pins the live definition.
		d := svc.Definition
		item.ContractVersion, item.ImplementationVersion, item.SchemaFingerprint = d.ContractVersion, d.ImplementationVersion, d.Fingerprint
	}
	items := []executor.Item{item}
	ctx, cancel := context.WithTimeout(ctx, ex.BatchRequestTimeout(items))
	defer cancel()
	res, err := ex.Compute(ctx, executor.Batch{RequestID: "cli", Principal: "cli", Items: items, Start: time.Now()})
	if err != nil {
		return nil, err
	}
	return &res.Results[0], nil
}

// isModulePath reports whether a check argument names a module file.
func isModulePath(arg string) bool { return strings.HasSuffix(arg, ".wasm") }

// Command startbench measures how Toolhost starts (issue 14's goal table):
// the bundled modules' sizes, each module's cold and warm load through
// `toolhost check`, `toolhost serve` from its start to listening, to ready
// and to the first successful hash run on a cold and on a warm cache, the
// idle RSS of serve after ready, and how long a module dropped into the
// tools folder of a running server takes to serve a run. It prints
// Markdown tables, each figure beside its goal. `make bench-start` builds
// and runs it; bench/README.md says what each figure is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	toolhost  string
	toolsDir  string
	hashIn    string // the module that holds the hash tool, by file name
	guestDir  string // the guest SDK for the hello-world tool; "" skips it
	goTool    string
	coldRuns  int
	warmRuns  int
	idle      time.Duration
	poll      time.Duration
	limit     time.Duration
	keep      bool
	skipDrop  bool
	skipCheck bool
}

func main() {
	var c config
	flag.StringVar(&c.toolhost, "toolhost", "bin/toolhost", "the toolhost binary (make build)")
	flag.StringVar(&c.toolsDir, "tools-dir", "wasm", "the folder of the modules to measure (the bundled ones: make wasm); they are copied, the folder is not served")
	flag.StringVar(&c.hashIn, "hash-module", "codec.wasm", "the module of -tools-dir that holds the hash tool: the one dropped into a running server")
	flag.StringVar(&c.guestDir, "guest", "guest", "the guest SDK's folder: a hello-world tool is made with `toolhost new hello --guest-replace` against it and built; empty skips it")
	flag.StringVar(&c.goTool, "go", "go", "the go command that builds the hello-world tool")
	flag.IntVar(&c.coldRuns, "cold-runs", 1, "serve starts on an empty cache (each compiles every module)")
	flag.IntVar(&c.warmRuns, "warm-runs", 3, "serve restarts on the cache of the last cold start, and warm loads per module")
	flag.DurationVar(&c.idle, "idle", 3*time.Second, "how long serve idles after /readyz turned 200 before its VmRSS is read")
	flag.DurationVar(&c.poll, "poll", 10*time.Millisecond, "the polling interval of /healthz, /readyz and the run route")
	flag.DurationVar(&c.limit, "limit", 5*time.Minute, "how long one start may take before the run fails")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary folder (caches, data folders, serve's logs) and print its path")
	flag.BoolVar(&c.skipDrop, "skip-drop", false, "skip the dropped-module figure")
	flag.BoolVar(&c.skipCheck, "skip-check", false, "skip the per-module loads with toolhost check")
	flag.Parse()
	if c.coldRuns < 1 || c.warmRuns < 1 || c.poll <= 0 {
		fmt.Fprintln(os.Stderr, "startbench: -cold-runs ≥ 1, -warm-runs ≥ 1, -poll > 0")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "startbench:", err)
		os.Exit(1)
	}
}

// results are the figures of one run of the benchmark.
type results struct {
	modules []moduleFigures
	hello   *moduleFigures // the hello-world tool, nil when skipped
	cold    []startFigures
	warm    []startFigures
	drop    time.Duration // 0 when skipped
	dropErr error
}

// moduleFigures are one module's size and loads.
type moduleFigures struct {
	name       string
	sizeBytes  int64
	cold       time.Duration   // wall
	coldCPU    time.Duration   // user and system
	warm       []time.Duration // wall
	warmCPU    []time.Duration
	cacheBytes int64 // what the cold load left in its cache folder
}

func run(ctx context.Context, c config) error {
	toolhost, err := filepath.Abs(c.toolhost)
	if err != nil {
		return err
	}
	if _, err := os.Stat(toolhost); err != nil {
		return fmt.Errorf("%w (make build)", err)
	}
	modules, err := filepath.Glob(filepath.Join(c.toolsDir, "*.wasm"))
	if err != nil {
		return err
	}
	if len(modules) == 0 {
		return fmt.Errorf("no modules in %s (make wasm)", c.toolsDir)
	}
	sort.Strings(modules)
	tmp, err := os.MkdirTemp("", "startbench-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(os.Stderr, "startbench: keeping", tmp)
	} else {
		defer func() {
			if err := os.RemoveAll(tmp); err != nil {
				fmt.Fprintln(os.Stderr, "startbench: removing the temporary folder:", err)
			}
		}()
	}
	b := &bench{c: c, toolhost: toolhost, tmp: tmp}
	var r results

	// Sizes, then each module alone through toolhost check.
	for _, m := range modules {
		st, err := os.Stat(m)
		if err != nil {
			return err
		}
		r.modules = append(r.modules, moduleFigures{name: filepath.Base(m), sizeBytes: st.Size()})
	}
	if !c.skipCheck {
		for i := range r.modules {
			mf := &r.modules[i]
			progress("toolhost check %s, cold and %d× warm", mf.name, c.warmRuns)
			if err := b.check(ctx, filepath.Join(c.toolsDir, mf.name), mf); err != nil {
				return err
			}
		}
	}
	if c.guestDir != "" {
		progress("toolhost new hello, built for wasip1, cold and %d× warm", c.warmRuns)
		path, err := b.buildHello(ctx)
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		r.hello = &moduleFigures{name: "hello.wasm", sizeBytes: st.Size()}
		if !c.skipCheck {
			if err := b.check(ctx, path, r.hello); err != nil {
				return err
			}
		}
	}

	// serve on every module: cold starts, each on its own empty cache, then
	// warm restarts on the last cold start's cache and data folder.
	tools := filepath.Join(tmp, "tools")
	if err := copyModules(modules, tools); err != nil {
		return err
	}
	var cache, data string
	for i := range c.coldRuns {
		cache = filepath.Join(tmp, fmt.Sprintf("cache-%d", i+1))
		data = filepath.Join(tmp, fmt.Sprintf("data-%d", i+1))
		progress("serve, cold cache (%d of %d)", i+1, c.coldRuns)
		f, err := b.start(ctx, fmt.Sprintf("cold-%d", i+1), tools, cache, data)
		if err != nil {
			return err
		}
		r.cold = append(r.cold, f)
	}
	for i := range c.warmRuns {
		progress("serve, warm restart (%d of %d)", i+1, c.warmRuns)
		f, err := b.start(ctx, fmt.Sprintf("warm-%d", i+1), tools, cache, data)
		if err != nil {
			return err
		}
		r.warm = append(r.warm, f)
	}

	if !c.skipDrop {
		progress("serve on an empty folder and cache, then %s dropped in", c.hashIn)
		r.drop, r.dropErr = b.drop(ctx, filepath.Join(c.toolsDir, c.hashIn))
		if r.dropErr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	var out strings.Builder
	report(&out, c, toolhost, r)
	_, err = os.Stdout.WriteString(out.String())
	return err
}

// progress says on stderr what the benchmark is doing, so that stdout is
// the tables alone.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "startbench: "+format+"\n", args...)
}

// copyModules copies each module into dir.
func copyModules(modules []string, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, m := range modules {
		b, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(m)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	// The walk's function never fails, so neither does the walk.
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error { //nolint:errcheck // see above
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}

// errNotReady is returned when a start did not reach a figure within the
// limit.
var errNotReady = errors.New("not reached within -limit")

// joinLines is the last n lines of s, indented, for an error message.
func joinLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\t" + strings.Join(lines, "\n\t")
}

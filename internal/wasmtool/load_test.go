package wasmtool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// phaseLoader is a loader with the given phase deadlines and load bound,
// on a runtime without a compilation cache. Its loads, abandoned ones
// included, are waited for when the test ends.
func phaseLoader(t *testing.T, cfg wasmtool.Config) *wasmtool.Loader {
	t.Helper()
	rt, err := host.NewRuntime(context.Background(), host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Platform = policy.DefaultPlatform()
	l, err := wasmtool.NewLoader(rt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := l.Wait(ctx); err != nil {
			t.Errorf("abandoned loads never ended: %v", err)
		}
		rt.Close(context.Background())
	})
	return l
}

// within runs f and fails the test if it has not returned after limit:
// the bound of something that must not block.
func within[T any](t *testing.T, limit time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(limit):
		t.Fatalf("%s still blocked after %v", what, limit)
		panic("unreachable")
	}
}

func wantReason(t *testing.T, err error, reason wasmtool.LoadReason, detail string) {
	t.Helper()
	var le *wasmtool.LoadError
	if !errors.As(err, &le) || le.Reason != reason || le.Detail != detail {
		t.Fatalf("error %v, want %s with detail %q", err, reason, detail)
	}
}

// A FIFO, or a link to one, is refused without blocking in open() and
// without a read; so is a sidecar that is one.
func TestLoadFileRefusesFIFOs(t *testing.T) {
	l := newLoader(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.wasm")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.wasm")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	ping := filepath.Join(dir, "ping.wasm")
	if err := os.WriteFile(ping, testkit.WAT(t, "ping"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "ping.tool.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link, ping} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			err := within(t, 10*time.Second, "LoadFile", func() error {
				_, err := l.LoadFile(context.Background(), path)
				return err
			})
			wantReason(t, err, wasmtool.NotRegular, "")
		})
	}
}

// vmRSS is the process's resident memory in bytes.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// A 1 GiB sparse module, or sidecar, is refused from its size before a
// byte is read: the process's resident memory does not grow by it.
func TestLoadFileRefusesHugeFilesUnread(t *testing.T) {
	l := newLoader(t)
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.wasm")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<30); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(dir, "side.wasm")
	if err := os.WriteFile(side, testkit.WAT(t, "ping"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wasmtool.SidecarPath(side), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(wasmtool.SidecarPath(side), 1<<30); err != nil {
		t.Fatal(err)
	}
	before := vmRSS(t)
	_, err := l.LoadFile(context.Background(), huge)
	wantReason(t, err, wasmtool.ModuleTooLarge, "")
	if !strings.Contains(err.Error(), fmt.Sprint(1<<30)) || !strings.Contains(err.Error(), fmt.Sprint(wasmtool.MaxModuleBytes)) {
		t.Errorf("the refusal does not give the size and the limit: %v", err)
	}
	_, err = l.LoadFile(context.Background(), side)
	wantReason(t, err, wasmtool.SidecarTooLarge, "")
	if grown := vmRSS(t) - before; grown > 256<<20 {
		t.Errorf("resident memory grew by %d MiB refusing a 1 GiB file", grown>>20)
	}
	// The same limit holds for bytes handed to Load.
	_, err = l.Load(context.Background(), make([]byte, wasmtool.MaxModuleBytes+1), nil)
	wantReason(t, err, wasmtool.ModuleTooLarge, "")
}

// A module whose name is near the file system's 255-byte limit loads,
// although its sidecar's name would be too long to exist.
func TestLoadFileLongName(t *testing.T) {
	l := newLoader(t)
	path := filepath.Join(t.TempDir(), strings.Repeat("n", 250)+".wasm")
	if err := os.WriteFile(path, testkit.WAT(t, "ping"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool, err := l.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	tool.Close(context.Background())
}

// manyFunctions writes a valid tool module with n functions, slow enough
// to compile that a 1 ms compile deadline always passes first.
func manyFunctions(t *testing.T, n int) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("(module (memory (export \"memory\") 1)\n")
	for i := range n {
		fmt.Fprintf(&b, "(func $f%d (param i32) (result i32) (i32.add (i32.mul (local.get 0) (i32.const %d)) (i32.const 7)))\n", i, i)
	}
	b.WriteString("(func (export \"describe\") (result i32) (i32.const 0))\n")
	b.WriteString("(func (export \"compute\") (result i32) (i32.const 0)))\n")
	src := filepath.Join(t.TempDir(), "many.wat")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := testkit.CompileWAT(src)
	if err != nil {
		t.Skip(err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// A compile that outlasts its deadline is refused at the deadline with the
// phase; the abandoned compile keeps its load slot until it really ends,
// so a second load waits for it.
func TestLoadCompileDeadline(t *testing.T) {
	l := phaseLoader(t, wasmtool.Config{CompileTimeout: time.Millisecond, MaxLoads: 1})
	wasm := manyFunctions(t, 20_000)
	start := time.Now()
	_, err := l.Load(context.Background(), wasm, nil)
	wantReason(t, err, wasmtool.LoadTimeout, wasmtool.PhaseCompile)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %v, deadline 1 ms", took)
	}
	// The only slot is still held by the abandoned compile.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := l.Load(ctx, testkit.WAT(t, "ping"), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a load while the abandoned compile holds the only slot: %v", err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer wcancel()
	if err := l.Wait(wctx); err != nil {
		t.Fatal(err)
	}
}

// A module whose _initialize loops is refused when the image phase
// outlasts its deadline.
func TestLoadImageDeadline(t *testing.T) {
	l := phaseLoader(t, wasmtool.Config{ImageTimeout: 500 * time.Millisecond})
	start := time.Now()
	_, err := l.Load(context.Background(), testkit.WAT(t, "image_loop"), nil)
	wantReason(t, err, wasmtool.LoadTimeout, wasmtool.PhaseImage)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %v, image deadline 500 ms", took)
	}
}

// A describe that loops is refused at its own deadline, with the phase.
func TestLoadDescribeDeadline(t *testing.T) {
	// Shorter than the time the loop takes to burn describe's fuel.
	l := phaseLoader(t, wasmtool.Config{DescribeTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := l.Load(context.Background(), testkit.WAT(t, "describe_loop"), nil)
	wantReason(t, err, wasmtool.LoadTimeout, wasmtool.PhaseDescribe)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %v, describe deadline 100 ms", took)
	}
}

// A load whose context ends returns at once, whatever phase it is in.
func TestLoadContextEnds(t *testing.T) {
	l := phaseLoader(t, wasmtool.Config{DescribeTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := within(t, 10*time.Second, "Load", func() error {
		_, err := l.Load(ctx, testkit.WAT(t, "describe_loop"), nil)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Load = %v, want the context's error", err)
	}
}

// Modules over a structure limit are refused with module_limits and the
// limit's name; an imported table or global with import_refused.
func TestLoadStructureRefusals(t *testing.T) {
	l := newLoader(t)
	tests := []struct {
		name, module string
		reason       wasmtool.LoadReason
		detail       string
	}{
		{name: "a thousand tables", module: "tables_bomb", reason: wasmtool.ModuleLimits, detail: host.LimitTables},
		{name: "an imported table", module: "imported_table", reason: wasmtool.ImportRefused},
		{name: "an imported global", module: "imported_global", reason: wasmtool.ImportRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Load(context.Background(), testkit.WAT(t, tt.module), nil)
			wantReason(t, err, tt.reason, tt.detail)
		})
	}
}

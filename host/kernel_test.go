package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/hosttest"
	"github.com/toolhost/toolhost/internal/testkit"
)

// fixture compiles host/testdata/NAME.wat.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	path, err := testkit.CompileWAT(filepath.Join("testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadWith(t testing.TB, cfg host.Config, wasm []byte) *host.Module {
	t.Helper()
	m, err := newRuntime(t, cfg).Load(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pooledAndFresh runs f on a module loaded pooled and on one loaded with
// fresh instances.
func pooledAndFresh(t *testing.T, wasm []byte, f func(t *testing.T, m *host.Module)) {
	for _, c := range []struct {
		name string
		sw   hosttest.Switches
	}{{"pooled", hosttest.Switches{}}, {"fresh", hosttest.Switches{FreshInstances: true}}} {
		t.Run(c.name, func(t *testing.T) {
			m, err := newRuntimeWith(t, host.Config{}, c.sw).Load(context.Background(), wasm)
			if err != nil {
				t.Fatal(err)
			}
			if ok, why := m.Pooled(); ok == c.sw.FreshInstances {
				t.Fatalf("Pooled = %v (%v)", ok, why)
			}
			f(t, m)
		})
	}
}

// A plugin that allocates and frees 1 MiB 2,000 times runs within a
// 64 MiB memory limit: freed blocks are reused, and the peak stays near
// one block.
func TestFreedBlocksReused(t *testing.T) {
	pooledAndFresh(t, fixture(t, "allocfree"), func(t *testing.T, m *host.Module) {
		for range 2 {
			res, err := m.Call(context.Background(), "compute", nil, host.Limits{MemoryBytes: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Output) != "ok" {
				t.Fatalf("output %q", res.Output)
			}
			if res.MemoryPeakBytes > 4<<20 {
				t.Fatalf("memory peak %d bytes, want about 1 MiB and a page", res.MemoryPeakBytes)
			}
		}
	})
}

// config_get reads the item's configuration; vars live for one call only,
// on a pooled instance too, and their store is bounded.
func TestConfigAndVars(t *testing.T) {
	pooledAndFresh(t, fixture(t, "kernel"), func(t *testing.T, m *host.Module) {
		ctx := context.Background()
		for _, c := range []struct {
			name   string
			config map[string]string
			want   string
		}{
			{"nil", nil, "absent"},
			{"other key", map[string]string{"name": "x"}, "absent"},
			{"set", map[string]string{"greeting": "héllo"}, "héllo"},
			{"empty", map[string]string{"greeting": ""}, "absent"}, // as go-sdk: no block for no bytes
		} {
			res, err := m.CallItem(ctx, host.Item{Export: "config", Config: c.config})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if string(res.Output) != c.want {
				t.Fatalf("%s: output %q, want %q", c.name, res.Output, c.want)
			}
		}
		for i := range 3 {
			res, err := m.Call(ctx, "vars", nil, host.Limits{})
			if err != nil {
				t.Fatalf("vars %d: %v", i, err)
			}
			if string(res.Output) != "abc" {
				t.Fatalf("vars %d: output %q", i, res.Output)
			}
			if _, err := m.Call(ctx, "keep_var", nil, host.Limits{}); err != nil {
				t.Fatalf("keep_var %d: a variable survived its call: %v", i, err)
			}
		}
		_, err := m.Call(ctx, "var_flood", nil, host.Limits{})
		var he *host.Error
		if !errors.As(err, &he) || he.Code != host.CodeExecutionFailed || he.Raised {
			t.Fatalf("var_flood: %v, want a platform execution_failed", err)
		}
		// A variable counts toward the memory limit: 512 KiB fits beside
		// its block under 2 MiB, not under 1 MiB.
		res, err := m.Call(ctx, "var_half", nil, host.Limits{MemoryBytes: 2 << 20})
		if err != nil {
			t.Fatalf("var_half under 2 MiB: %v", err)
		}
		if res.MemoryPeakBytes < 1<<20 {
			t.Fatalf("var_half: memory peak %d, want the block and the variable counted", res.MemoryPeakBytes)
		}
		_, err = m.Call(ctx, "var_half", nil, host.Limits{MemoryBytes: 1 << 20})
		if !errors.As(err, &he) || he.Code != host.CodeMemoryLimit {
			t.Fatalf("var_half under 1 MiB: %v, want memory_limit", err)
		}
		if _, err := m.Call(ctx, "keep_var", nil, host.Limits{}); err != nil {
			t.Fatalf("keep_var after failures: %v", err)
		}
	})
}

// An error set as plain text is the tool's own execution_failed; a tool
// error document keeps today's rules.
func TestPlainTextErrors(t *testing.T) {
	m := loadWith(t, host.Config{}, fixture(t, "kernel"))
	for _, c := range []struct {
		export  string
		want    host.Error
		message string
	}{
		{"fail_text", host.Error{Code: host.CodeExecutionFailed, Raised: true, Message: "something broke: été", Detail: "something broke: été"}, ""},
		{"fail_json", host.Error{Code: host.CodeInvalidParameters, Raised: true, Message: "bad input",
			Detail: `{"code":"invalid_parameters","message":"bad input","retryable":false}`}, ""},
		{"fail_code", host.Error{Code: host.CodeExecutionFailed, Detail: `{"code":"memory_limit","message":"lies"}`}, ""},
	} {
		t.Run(c.export, func(t *testing.T) {
			_, err := m.Call(context.Background(), c.export, nil, host.Limits{})
			var he *host.Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v", err)
			}
			got := *he
			got.Cause = nil
			if got != c.want {
				t.Fatalf("error %+v, want %+v", got, c.want)
			}
		})
	}
}

// get_log_level reports Config.LogLevel in the Extism encoding, and log
// calls below it are dropped.
func TestLogLevel(t *testing.T) {
	wasm := fixture(t, "kernel")
	for _, c := range []struct {
		level slog.Level
		want  string
		lines []string
	}{
		{slog.LevelDebug - 4, "0", []string{"[TRACE] msg", "[DEBUG] msg", "[INFO] msg", "[WARN] msg", "[ERROR] msg"}},
		{slog.LevelDebug, "1", []string{"[DEBUG] msg", "[INFO] msg", "[WARN] msg", "[ERROR] msg"}},
		{slog.LevelInfo, "2", []string{"[INFO] msg", "[WARN] msg", "[ERROR] msg"}},
		{slog.LevelWarn, "3", []string{"[WARN] msg", "[ERROR] msg"}},
		{slog.LevelError, "4", []string{"[ERROR] msg"}},
	} {
		t.Run(c.level.String(), func(t *testing.T) {
			m := loadWith(t, host.Config{LogLevel: c.level}, wasm)
			res, err := m.Call(context.Background(), "logs", nil, host.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Output) != c.want {
				t.Fatalf("get_log_level %q, want %q", res.Output, c.want)
			}
			if got := strings.Split(strings.TrimSuffix(string(res.Log), "\n"), "\n"); strings.Join(got, "|") != strings.Join(c.lines, "|") {
				t.Fatalf("log %q, want %q", got, c.lines)
			}
		})
	}
	// A dropped log call costs a host call only: the fuel at Error is
	// below the fuel at trace by the bytes the four kept lines charged.
	fuel := func(level slog.Level) int64 {
		res, err := loadWith(t, host.Config{LogLevel: level}, wasm).Call(context.Background(), "logs", nil, host.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return res.FuelUsed
	}
	if d := fuel(slog.LevelDebug-4) - fuel(slog.LevelError); d != 4 {
		t.Fatalf("trace costs %d more fuel than error, want 4 (1 per kept 3-byte message)", d)
	}
}

// A known import with another type than the host's is refused at load,
// naming both types.
func TestImportSignatureRefused(t *testing.T) {
	_, err := newRuntime(t, host.Config{}).Load(context.Background(), fixture(t, "bad_signature"))
	if !errors.Is(err, host.ErrImport) {
		t.Fatalf("Load: %v, want ErrImport", err)
	}
	const want = "function extism:host/env.alloc has type (i32) -> i32, the host's is (i64) -> i64"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Load: %v, want it to say %q", err, want)
	}
}

// A WASI command module's _start is callable: main runs per call with the
// input, proc_exit(0) or a return is a success, another code a failure.
func TestCommandModule(t *testing.T) {
	pooledAndFresh(t, fixture(t, "command"), func(t *testing.T, m *host.Module) {
		if !m.HasExport("_start") {
			t.Fatal("HasExport(_start) = false")
		}
		for _, c := range []struct {
			input string
			err   host.Error // zero: success
		}{
			{"0 exit", host.Error{}},
			{"r returns", host.Error{}},
			{"0 again", host.Error{}},
			{"7 exit", host.Error{Code: host.CodeExecutionFailed, Detail: "exited with code 7"}},
			{"e failed", host.Error{Code: host.CodeExecutionFailed, Raised: true, Message: "e failed", Detail: "exited with code 3: e failed"}},
			{"z failed", host.Error{Code: host.CodeExecutionFailed, Raised: true, Message: "z failed", Detail: "exited with code 0: z failed"}},
			{"0 last", host.Error{}},
		} {
			res, err := m.Call(context.Background(), "_start", []byte(c.input), host.Limits{})
			if c.err == (host.Error{}) {
				if err != nil {
					t.Fatalf("%q: %v", c.input, err)
				}
				if string(res.Output) != c.input {
					t.Fatalf("%q: output %q", c.input, res.Output)
				}
				continue
			}
			var he *host.Error
			if !errors.As(err, &he) {
				t.Fatalf("%q: error %v", c.input, err)
			}
			got := *he
			got.Cause = nil
			if got != c.err {
				t.Fatalf("%q: error %+v, want %+v", c.input, got, c.err)
			}
		}
	})
}

// A Go main built by the standard toolchain for wasip1 is a command
// module: its _start runs main, which reads the input and sets the output
// through the kernel, and Go's exit(0) is a success.
func TestGoCommandModule(t *testing.T) {
	dir := t.TempDir()
	src := `package main

import "unsafe"

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(uint64) uint64

//go:wasmimport extism:host/env store_u8
func storeU8(uint64, uint32)

//go:wasmimport extism:host/env output_set
func outputSet(uint64, uint64)

//go:wasmimport extism:host/env error_set
func errorSet(uint64)

var _ unsafe.Pointer

func main() {
	n := inputLength()
	in := make([]byte, n)
	for i := range in {
		in[i] = byte(inputLoadU8(uint64(i)))
	}
	out := []byte("main: " + string(in))
	b := alloc(uint64(len(out)))
	for i, c := range out {
		storeU8(b+uint64(i), uint32(c))
	}
	if string(in) == "fail" {
		errorSet(b)
		return
	}
	outputSet(b, uint64(len(out)))
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/gocmd\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cmd.wasm")
	build := exec.Command("go", "build", "-o", out, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a Go command module: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := loadWith(t, host.Config{}, wasm)
	if ok, _ := m.Preinitialised(); ok {
		t.Fatal("a command module was imaged: its main would have run at load")
	}
	for range 2 {
		res, err := m.Call(context.Background(), "_start", []byte("hello"), host.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Output) != "main: hello" {
			t.Fatalf("output %q", res.Output)
		}
	}
	_, err = m.Call(context.Background(), "_start", []byte("fail"), host.Limits{})
	var he *host.Error
	if !errors.As(err, &he) || !he.Raised || he.Message != "main: fail" {
		t.Fatalf("error %v, want the plugin's own", err)
	}
}

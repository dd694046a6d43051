package host

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Import module names a tool may use (docs/guest-abi.md).
const (
	ExtismModule   = "extism:host/env"
	ToolhostModule = "toolhost:host/env"
	WASIModule     = "wasi_snapshot_preview1"
)

// maxErrorBytes bounds the error document a guest may set.
const maxErrorBytes = 4 << 10

// maxVarBytes bounds one call's variables, counted as go-sdk counts them:
// each key's and value's bytes plus varEntryBytes. It is go-sdk's default
// (Manifest.Memory.MaxVarBytes unset).
const (
	maxVarBytes   = 1 << 20
	varEntryBytes = 40 // a string header and a slice header, on 64-bit
)

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// hostFunc is one host function: its stack-based body and signature.
type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      func(s *callState, stack []uint64)
}

// extismFuncs is the Extism kernel ABI on a per-call blockStore.
var extismFuncs = []hostFunc{
	{"input_length", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = uint64(len(s.input))
	}},
	{"input_offset", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.inputBlock()
	}},
	{"input_load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(s *callState, st []uint64) {
		off := st[0]
		if off >= uint64(len(s.input)) {
			s.abort(CodeExecutionFailed)
		}
		st[0] = uint64(s.input[off])
	}},
	{"input_load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		off := st[0]
		if off > uint64(len(s.input)) || uint64(len(s.input))-off < 8 {
			s.abort(CodeExecutionFailed)
		}
		st[0] = binary.LittleEndian.Uint64(s.input[off:])
	}},
	{"alloc", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		n := st[0]
		if n > s.limits.MemoryBytes {
			s.memoryRefused = true
			st[0] = 0
			return
		}
		if n == 0 { // as the kernel: no block
			st[0] = 0
			return
		}
		s.charge(bytesFuel(n)) // the block is zeroed
		st[0], _ = s.alloc(n)
	}},
	{"free", []api.ValueType{i64}, nil, func(s *callState, st []uint64) {
		s.free(st[0])
	}},
	{"length", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.blocks.length(st[0])
	}},
	{"length_unsafe", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.blocks.length(st[0])
	}},
	{"load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(s *callState, st []uint64) {
		b := s.blockBytes(st[0], 1)
		st[0] = uint64(b[0])
	}},
	{"load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = binary.LittleEndian.Uint64(s.blockBytes(st[0], 8))
	}},
	{"store_u8", []api.ValueType{i64, i32}, nil, func(s *callState, st []uint64) {
		s.blockBytes(st[0], 1)[0] = byte(st[1])
	}},
	{"store_u64", []api.ValueType{i64, i64}, nil, func(s *callState, st []uint64) {
		binary.LittleEndian.PutUint64(s.blockBytes(st[0], 8), st[1])
	}},
	{"input_set", []api.ValueType{i64, i64}, nil, func(s *callState, st []uint64) {
		b := s.blockBytes(st[0], st[1])
		n := uint64(len(b))
		s.charge(bytesFuel(n))
		// The host keeps a copy, in the buffer of the last one when it
		// fits; the copy counts toward the memory limit.
		others, held := s.usedBytes()-s.inputBytes, n
		var buf []byte
		if s.inputBytes > 0 && n <= uint64(cap(s.input)) {
			buf, held = s.input[:0], uint64(cap(s.input))
		}
		if held > s.limits.MemoryBytes || others+held > s.limits.MemoryBytes {
			s.memoryRefused = true
			s.abort(CodeMemoryLimit)
		}
		s.input, s.inputBytes = append(buf, b...), held
		s.inputOff = 0
		s.notePeak()
	}},
	{"output_set", []api.ValueType{i64, i64}, nil, func(s *callState, st []uint64) {
		off, n := st[0], st[1]
		if s.limits.MaxOutputBytes > 0 && n > uint64(s.limits.MaxOutputBytes) {
			s.abort(CodeOutputLimitExceeded)
		}
		s.blockBytes(off, n) // in bounds now; read when the call ends
		s.outputOff, s.outputLen, s.hasOutput = off, n, true
	}},
	{"output_offset", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.outputOff
	}},
	{"output_length", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.outputLen
	}},
	{"error_set", []api.ValueType{i64}, nil, func(s *callState, st []uint64) {
		off := st[0]
		if off == 0 { // as the kernel: 0 clears the error
			s.errorDoc, s.errorOff, s.hasError = s.errorDoc[:0], 0, false
			return
		}
		n := min(s.blocks.length(off), maxErrorBytes)
		s.charge(bytesFuel(n))
		s.errorDoc = append(s.errorDoc[:0], s.blockBytes(off, n)...)
		s.notePeak()
		s.errorOff, s.hasError = off, true
	}},
	{"error_get", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.errorOff
	}},
	{"reset", nil, nil, func(s *callState, st []uint64) {
		s.blocks.reset()
		s.inputOff, s.outputOff, s.outputLen, s.hasOutput = 0, 0, 0, false
		s.errorDoc, s.errorOff, s.hasError = s.errorDoc[:0], 0, false
	}},
	{"memory_bytes", nil, []api.ValueType{i64}, func(s *callState, st []uint64) {
		st[0] = s.blocks.used()
	}},
	// The item's configuration (Item.Config), read-only; variables live
	// as long as the call.
	{"config_get", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		s.readsHost = true
		key := s.blockBytes(st[0], s.blocks.length(st[0]))
		s.charge(bytesFuel(uint64(len(key))))
		v, ok := s.config[string(key)] // no copy
		if !ok {
			st[0] = 0
			return
		}
		st[0] = s.newBlock([]byte(v))
	}},
	{"var_get", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		s.readsHost = true
		key := s.blockBytes(st[0], s.blocks.length(st[0]))
		s.charge(bytesFuel(uint64(len(key))))
		v, ok := s.vars[string(key)] // no copy
		s.free(st[0])                // as go-sdk
		if !ok {
			st[0] = 0
			return
		}
		st[0] = s.newBlock(v)
	}},
	{"var_set", []api.ValueType{i64, i64}, nil, func(s *callState, st []uint64) {
		s.readsHost = true
		s.setVar(st[0], st[1])
	}},
	// Tools have no network.
	{"http_request", []api.ValueType{i64, i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		s.log.writeLine("host", []byte("http_request refused: tools have no network"))
		s.abort(CodeExecutionFailed)
	}},
	{"http_status_code", nil, []api.ValueType{i32}, func(s *callState, st []uint64) { st[0] = 0 }},
	{"http_headers", nil, []api.ValueType{i64}, func(s *callState, st []uint64) { st[0] = 0 }},
	{"get_log_level", nil, []api.ValueType{i32}, func(s *callState, st []uint64) {
		s.readsHost = true
		st[0] = uint64(s.logLevel)
	}},
	logFunc("log_trace", "TRACE", extismTrace),
	logFunc("log_debug", "DEBUG", extismDebug),
	logFunc("log_info", "INFO", extismInfo),
	logFunc("log_warn", "WARN", extismWarn),
	logFunc("log_error", "ERROR", extismError),
}

// The Extism log levels, as get_log_level reports them (go-sdk's
// LogLevel.ExtismCompat).
const (
	extismTrace int32 = iota
	extismDebug
	extismInfo
	extismWarn
	extismError
)

// extismLevel is the Extism level of l: below Debug is trace.
func extismLevel(l slog.Level) int32 {
	switch {
	case l < slog.LevelDebug:
		return extismTrace
	case l < slog.LevelInfo:
		return extismDebug
	case l < slog.LevelWarn:
		return extismInfo
	case l < slog.LevelError:
		return extismWarn
	}
	return extismError
}

// logFunc is log_LEVEL. Like go-sdk's, it frees the message's block, and
// drops a message below the host's level unread: such a call costs what
// any host call does.
func logFunc(name, tag string, level int32) hostFunc {
	return hostFunc{name, []api.ValueType{i64}, nil, func(s *callState, st []uint64) {
		off := st[0]
		if level < s.logLevel {
			s.blocks.free(off) // uncharged: a dropped call costs a host call
			return
		}
		msg := s.blockBytes(off, s.blocks.length(off))
		// Charged for what the bounded log keeps: the rest is dropped
		// without being read.
		s.charge(bytesFuel(s.log.writeLine(tag, msg)))
		s.notePeak()
		s.free(off)
	}}
}

// toolhostFuncs are Toolhost's own host functions.
var toolhostFuncs = []hostFunc{
	{"checkpoint", nil, []api.ValueType{i32}, func(s *callState, st []uint64) {
		st[0] = boolToStop(s.shouldStop())
	}},
	{"claim_engine_window", []api.ValueType{i64}, []api.ValueType{i64}, func(s *callState, st []uint64) {
		reserve := time.Duration(int64(st[0])) * time.Millisecond
		st[0] = uint64(s.claimEngineWindow(reserve))
	}},
}

func boolToStop(stop bool) uint64 {
	if stop {
		return 1
	}
	return 0
}

// instantiateHostModule defines funcs under name in r. Each function finds
// its call's state in the context (a call without one, which the host
// never makes, traps), and first runs callState.enter: a guest past its
// hard deadline stops at its next host call, and every call is charged
// hostCallFuel on top of what the function charges for its work.
func instantiateHostModule(ctx context.Context, r wazero.Runtime, name string, funcs []hostFunc) error {
	b := r.NewHostModuleBuilder(name)
	for _, f := range funcs {
		fn := f.fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
				s := stateFrom(ctx)
				if s == nil {
					panic(fmt.Errorf("host function called outside a Toolhost call"))
				}
				s.enter(mod)
				fn(s, stack)
			}), f.params, f.results).
			Export(f.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// hostFuncSignatures lists the functions a module may import from each
// host module other than WASI, with their types.
func hostFuncSignatures() map[string]map[string]signature {
	sigs := map[string]map[string]signature{ExtismModule: {}, ToolhostModule: {}}
	for _, f := range extismFuncs {
		sigs[ExtismModule][f.name] = signature{f.params, f.results}
	}
	for _, f := range toolhostFuncs {
		sigs[ToolhostModule][f.name] = signature{f.params, f.results}
	}
	return sigs
}

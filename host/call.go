package host

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Limits caps one call. Zero fields take the defaults noted.
type Limits struct {
	// MemoryBytes bounds the instance's linear memory plus the Extism
	// memory blocks it allocates. Default [DefaultMemoryBytes].
	MemoryBytes uint64
	// Fuel is the instruction budget; see docs/guest-abi.md. Default
	// [DefaultFuel].
	Fuel int64
	// SoftDeadline is when checkpoints start telling the guest to stop.
	// Zero means no soft deadline.
	SoftDeadline time.Time
	// HardDeadline is when the instance is interrupted. Zero means the
	// context's deadline alone.
	HardDeadline time.Time
	// EngineTimeout is the engine window a claim may grant. Zero means no
	// claim succeeds.
	EngineTimeout time.Duration
	// MaxInputBytes and MaxOutputBytes bound the call's input and output;
	// zero means no limit.
	MaxInputBytes  int
	MaxOutputBytes int
	// MaxLogBytes bounds the per-call log. Default [DefaultLogBytes].
	MaxLogBytes int
}

// Defaults for zero [Limits] fields.
const (
	DefaultMemoryBytes = 1 << 30
	DefaultFuel        = 20_000_000_000
	DefaultLogBytes    = 16 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.Fuel == 0 {
		l.Fuel = DefaultFuel
	}
	if l.MaxLogBytes == 0 {
		l.MaxLogBytes = DefaultLogBytes
	}
	return l
}

// Result is a successful call.
type Result struct {
	// Output is the bytes the guest set as its output.
	Output []byte
	// FuelUsed is the fuel the call consumed, initialiser included.
	FuelUsed int64
	// MemoryPeakBytes is the most memory the call held for its guest at
	// once: linear memory, tables at their maxima, the Extism blocks, the
	// host's copies (input_set, the error, the output) and the log.
	MemoryPeakBytes uint64
	// Log is what the guest logged or wrote to stdout and stderr, bounded;
	// it is for the operator, never for callers.
	Log []byte
	// Timings of the phases.
	InstantiateTime, CallTime time.Duration
}

// callState is everything one call's host functions see. It lives in the
// call's context and belongs to the goroutine running the guest, except
// the log, which the WASI writers also use.
type callState struct {
	ctx    context.Context // done at the hard deadline or on cancellation
	limits Limits
	input  []byte

	fuel          api.MutableGlobal // the instance's fuel global, once known
	blocks        blockStore
	memory        *linearMemory
	inputBytes    uint64 // capacity of the copy input_set made, held by the host
	tableBytes    uint64 // the module's tables at their maxima
	peak          uint64 // most memory held at once
	memoryRefused bool   // an allocation was refused for the memory budget

	inputOff             uint64
	outputOff, outputLen uint64
	hasOutput            bool // output_set ran
	errorDoc             []byte
	errorOff             uint64
	hasError             bool

	config    map[string]string // what config_get reads (Item.Config)
	vars      map[string][]byte // var_set's, for this call only
	varBytes  uint64            // the vars, counted as go-sdk counts them
	logLevel  int32             // the Extism level below which log_* drops
	readsHost bool              // config_get, var_* or get_log_level ran

	claimed    bool
	wasiState  bool       // a WASI function that can change the instance's descriptors ran
	clocks     callClocks // the WASI clocks and random source
	abortCode  string     // set by a host function that stops the call
	abortCause error      // why, when the code alone does not say
	log        boundedLog
}

type callStateKey struct{}

func stateFrom(ctx context.Context) *callState {
	s, _ := ctx.Value(callStateKey{}).(*callState)
	return s
}

// abort stops the guest from inside a host function with code.
func (s *callState) abort(code string) {
	s.abortCode = code
	panic(abortSignal{code})
}

type abortSignal struct{ code string }

func (a abortSignal) Error() string { return "call aborted: " + a.code }

// usedBytes is the memory the call holds for its guest, which its memory
// limit bounds: linear memory, the tables (at their maxima), the Extism
// blocks (their arena and bookkeeping), a copy input_set made, the error
// document and the log.
func (s *callState) usedBytes() uint64 {
	return s.linearBytes() + s.hostBytes()
}

// linearBytes is the guest's linear memory.
func (s *callState) linearBytes() uint64 {
	if s.memory == nil {
		return 0
	}
	return uint64(len(s.memory.buf))
}

// hostBytes is what the host holds for the guest outside linear memory,
// its tables included.
func (s *callState) hostBytes() uint64 {
	return s.tableBytes + s.blocks.size() + s.inputBytes + uint64(len(s.errorDoc)) + s.varBytes + s.log.size()
}

// boundedLog keeps the first max bytes written to it and drops the rest.
// Its lines are "[LEVEL] msg" (log_*, LEVEL one of TRACE, DEBUG, INFO,
// WARN, ERROR), "[STDOUT] text" and "[STDERR] text" (WASI's standard
// streams) and "[host] text" (the host's own notes).
type boundedLog struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
	midLine [2]bool // stdout, stderr: the stream's last write did not end a line
}

// writeStream logs what WASI wrote to stdout (stream 0) or stderr (1), each
// line tagged with its stream. Like Write, it reports p written in full,
// except the write the log fills up in, whose kept bytes it reports.
func (l *boundedLog) writeStream(stream int, p []byte) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max-len(l.buf) <= 0 {
		l.dropped = true
		return len(p)
	}
	tag := [2]string{"[STDOUT] ", "[STDERR] "}[stream]
	kept := 0
	for rest := p; len(rest) > 0; {
		if !l.midLine[stream] {
			l.append([]byte(tag))
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		n := l.append(line)
		kept += n
		if n < len(line) {
			return kept
		}
		rest = rest[n:]
		l.midLine[stream] = line[len(line)-1] != '\n'
	}
	return len(p)
}

// append adds what of p fits and returns how much that was. l.mu is held.
func (l *boundedLog) append(p []byte) int {
	room := l.max - len(l.buf)
	if len(p) > room {
		l.dropped = true
		p = p[:max(room, 0)]
	}
	l.buf = append(l.buf, p...)
	return len(p)
}

// writeLine logs "[level] msg" and a newline, copying only what fits, and
// returns how many bytes of msg it kept.
func (l *boundedLog) writeLine(level string, msg []byte) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var kept int
	for i, p := range [][]byte{[]byte("[" + level + "] "), msg, []byte("\n")} {
		room := l.max - len(l.buf)
		if len(p) > room {
			l.dropped = true
			p = p[:max(room, 0)]
		}
		l.buf = append(l.buf, p...)
		if i == 1 {
			kept = len(p)
		}
	}
	return uint64(kept)
}

// size is the bytes the log holds.
func (l *boundedLog) size() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return uint64(cap(l.buf))
}

func (l *boundedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	room := l.max - len(l.buf)
	if room <= 0 {
		l.dropped = true
		return len(p), nil
	}
	if len(p) > room {
		l.dropped = true
		p = p[:room]
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *boundedLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]byte(nil), l.buf...)
	if l.dropped {
		out = append(out, "\n[log truncated]\n"...)
	}
	return out
}

// truncateUTF8 returns b as valid UTF-8 (invalid bytes replaced by U+FFFD)
// cut to at most n bytes without splitting a character.
func truncateUTF8(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// blockBytes returns n bytes of the blocks at off, or stops the call when
// the guest addressed memory it does not have. No bytes are nil at any
// offset (0 included: the kernel's alloc(0) answers 0).
func (s *callState) blockBytes(off, n uint64) []byte {
	if n == 0 {
		return nil
	}
	b, ok := s.blocks.slice(off, n)
	if !ok {
		s.log.writeLine("host", []byte("memory block access out of bounds"))
		s.abort(CodeExecutionFailed)
	}
	return b
}

// inputBlock copies the input into a block on first use, as the Extism
// kernel does, and returns its offset. The copy is charged as host work
// and against the memory limit.
func (s *callState) inputBlock() uint64 {
	if s.inputOff == 0 && len(s.input) > 0 {
		n := uint64(len(s.input))
		s.charge(bytesFuel(n))
		off, ok := s.alloc(n)
		if !ok {
			s.abort(CodeMemoryLimit)
		}
		b, _ := s.blocks.slice(off, n)
		copy(b, s.input)
		s.inputOff = off
	}
	return s.inputOff
}

// alloc allocates a block of n bytes within the memory limit, or reports
// false and records the refusal. The free spans it looked at are charged
// (spanFuel each).
func (s *callState) alloc(n uint64) (uint64, bool) {
	others := s.usedBytes() - s.blocks.size()
	off, work, ok := s.blocks.alloc(n, s.limits.MemoryBytes-min(s.limits.MemoryBytes, others))
	s.charge(work * spanFuel)
	if !ok {
		s.memoryRefused = true
		return 0, false
	}
	s.notePeak()
	return off, true
}

// free releases the block at off, charging the free spans it moved.
func (s *callState) free(off uint64) { s.charge(s.blocks.free(off) * spanFuel) }

// newBlock copies b into a new block and returns its offset, as alloc
// does and charges (0 for no bytes, as the kernel's alloc(0)); a block the
// memory limit cannot hold stops the call with memory_limit.
func (s *callState) newBlock(b []byte) uint64 {
	n := uint64(len(b))
	if n == 0 {
		return 0
	}
	s.charge(bytesFuel(n))
	off, ok := s.alloc(n)
	if !ok {
		s.abort(CodeMemoryLimit)
	}
	if n > 0 {
		dst, _ := s.blocks.slice(off, n)
		copy(dst, b)
	}
	return off
}

// setVar is var_set: the key is the block at keyOff, the value the block
// at valueOff, or a deletion when valueOff is 0. Like go-sdk it frees both
// blocks and refuses (the call fails) a store that would reach
// maxVarBytes; the vars count toward the memory limit too.
func (s *callState) setVar(keyOff, valueOff uint64) {
	key := s.blockBytes(keyOff, s.blocks.length(keyOff))
	var value []byte
	if valueOff != 0 {
		value = s.blockBytes(valueOff, s.blocks.length(valueOff))
	}
	s.charge(bytesFuel(uint64(len(key) + len(value))))
	old, had := s.vars[string(key)]
	if had {
		s.varBytes -= uint64(len(key)+len(old)) + varEntryBytes
		delete(s.vars, string(key))
	}
	if valueOff != 0 {
		n := uint64(len(key)+len(value)) + varEntryBytes
		if s.varBytes+n >= maxVarBytes {
			s.log.writeLine("host", []byte("var_set refused: the variable store is full"))
			s.abort(CodeExecutionFailed)
		}
		if s.usedBytes()+n > s.limits.MemoryBytes {
			s.memoryRefused = true
			s.abort(CodeMemoryLimit)
		}
		if s.vars == nil {
			s.vars = make(map[string][]byte)
		}
		s.vars[string(key)] = append([]byte(nil), value...)
		s.varBytes += n
		s.notePeak()
	}
	// As go-sdk, both blocks are freed, once read.
	s.free(keyOff)
	if valueOff != 0 {
		s.free(valueOff)
	}
}

func (s *callState) notePeak() { s.peak = max(s.peak, s.usedBytes()) }

// shouldStop reports whether a checkpoint must tell the guest to stop: the
// soft deadline has passed or the call's context is done.
func (s *callState) shouldStop() bool {
	if s.ctx.Err() != nil {
		return true
	}
	return !s.limits.SoftDeadline.IsZero() && !time.Now().Before(s.limits.SoftDeadline)
}

// claimEngineWindow runs a checkpoint and grants the engine window when the
// remaining soft window holds the engine budget plus reserve. It returns
// the window in milliseconds, or -1. One claim per call.
func (s *callState) claimEngineWindow(reserve time.Duration) int64 {
	if s.claimed || s.shouldStop() || s.limits.EngineTimeout <= 0 || reserve < 0 {
		return -1
	}
	s.claimed = true
	if !s.limits.SoftDeadline.IsZero() && time.Until(s.limits.SoftDeadline) < s.limits.EngineTimeout+reserve {
		return -1
	}
	return s.limits.EngineTimeout.Milliseconds()
}

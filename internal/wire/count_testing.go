//go:build toolhost_count

package wire

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// This file exists only in builds with the toolhost_count tag: tests that
// count how often a request's JSON is decoded and encoded (see
// docs/canonical-json.md, "Counting decodes"). The default build has the
// empty hooks of count_default.go instead, which the compiler inlines away.

// Call is one call of [Decode] or of [Encode] /
// [Append], recorded while counting.
type Call struct {
	// Encode tells an encode from a decode.
	Encode bool
	// Data is a copy of the bytes decoded, or of the bytes an encode
	// appended; nil for an encode that failed.
	Data []byte
	// Caller is the first frame outside package wire, as
	// "function (file:line)".
	Caller string
	// Stack is the caller's stack, innermost first, up to 24 frames, each
	// formatted as Caller is.
	Stack []string
}

// String is the call's kind, its caller and its bytes, shortened.
func (c Call) String() string {
	kind := "decode"
	if c.Encode {
		kind = "encode"
	}
	data := string(c.Data)
	if len(data) > 160 {
		data = data[:160] + "…"
	}
	return fmt.Sprintf("%s at %s: %s", kind, c.Caller, data)
}

var counting struct {
	on    atomic.Bool
	mu    sync.Mutex
	calls []Call
}

// StartCounting forgets the calls recorded so far and records every call of
// Decode and Encode/Append from now on, in every goroutine, until
// StopCounting. A test that counts must have nothing else decoding in the
// process while it counts.
func StartCounting() {
	counting.mu.Lock()
	counting.calls = nil
	counting.mu.Unlock()
	counting.on.Store(true)
}

// StopCounting stops recording and returns the calls recorded since
// StartCounting, in the order they started.
func StopCounting() []Call {
	counting.on.Store(false)
	counting.mu.Lock()
	defer counting.mu.Unlock()
	calls := counting.calls
	counting.calls = nil
	return calls
}

func countDecode(data []byte) {
	if counting.on.Load() {
		record(false, data)
	}
}

// countEncode records the bytes of out from start: those an encode
// appended (out is nil when it failed).
func countEncode(out []byte, start int) {
	if counting.on.Load() {
		if out != nil {
			out = out[start:]
		}
		record(true, out)
	}
}

func record(encode bool, data []byte) {
	c := Call{Encode: encode}
	if data != nil {
		c.Data = append([]byte{}, data...)
	}
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/toolhost/toolhost/internal/wire.") && len(c.Stack) < 24 {
			c.Stack = append(c.Stack, fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line))
		}
		if !more {
			break
		}
	}
	if len(c.Stack) > 0 {
		c.Caller = c.Stack[0]
	}
	counting.mu.Lock()
	counting.calls = append(counting.calls, c)
	counting.mu.Unlock()
}

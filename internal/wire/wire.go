package wire

import (
	"errors"
	"fmt"
)

// DefaultMaxDepth is the nesting limit when [Limits.MaxDepth] is zero: the
// platform's "JSON nesting depth" of 32.
const DefaultMaxDepth = 32

// maxDepthCap bounds any configured depth so that recursion stays shallow.
const maxDepthCap = 1000

// Limits bounds one decode or encode. The zero value means no byte limit and
// a depth of [DefaultMaxDepth].
type Limits struct {
	// MaxBytes is the most bytes the JSON text may have; 0 means no limit.
	MaxBytes int
	// MaxDepth is the deepest nesting of objects and arrays allowed; a
	// scalar has depth 0 and [] has depth 1. 0 means [DefaultMaxDepth].
	MaxDepth int
}

func (l Limits) depth() int {
	switch {
	case l.MaxDepth <= 0:
		return DefaultMaxDepth
	case l.MaxDepth > maxDepthCap:
		return maxDepthCap
	}
	return l.MaxDepth
}

// The refusals of this package. Every error returned by [Decode], [Encode]
// and [Append] wraps exactly one of them.
var (
	// ErrTooLarge is returned when the JSON text, read or written, is longer
	// than Limits.MaxBytes.
	ErrTooLarge = errors.New("JSON text exceeds the byte limit")
	// ErrTooDeep is returned when objects and arrays nest deeper than
	// Limits.MaxDepth (which also stops a cyclic value from being encoded).
	ErrTooDeep = errors.New("JSON nesting exceeds the depth limit")
	// ErrByteOrderMark is returned when the input starts with a UTF-8 BOM.
	ErrByteOrderMark = errors.New("JSON text starts with a byte-order mark")
	// ErrInvalidUTF8 is returned when input bytes or a string to encode are
	// not valid UTF-8.
	ErrInvalidUTF8 = errors.New("JSON text is not valid UTF-8")
	// ErrLoneSurrogate is returned when a string holds an unpaired UTF-16
	// surrogate, escaped (\ud800) or raw.
	ErrLoneSurrogate = errors.New("JSON string holds a lone surrogate")
	// ErrDuplicateName is returned when an object has the same member name
	// twice, compared after unescaping.
	ErrDuplicateName = errors.New("JSON object has a duplicate name")
	// ErrNonFinite is returned when a number is not finite as a float64:
	// a literal out of range such as 1e400, or a NaN or infinite float.
	ErrNonFinite = errors.New("JSON number is not finite")
	// ErrTrailingData is returned when anything but whitespace follows the
	// value.
	ErrTrailingData = errors.New("JSON text has data after the value")
	// ErrSyntax is returned for any other malformed input, including an
	// empty one.
	ErrSyntax = errors.New("JSON text is malformed")
	// ErrInvalidNumber is returned when a json.Number to encode is not a JSON
	// number literal.
	ErrInvalidNumber = errors.New("not a JSON number literal")
	// ErrUnsupportedType is returned when a value to encode has a Go type
	// that has no canonical JSON form.
	ErrUnsupportedType = errors.New("value has no JSON form")
)

// Error is a refusal with its position. Err is one of the package's
// sentinel errors; Offset is the byte offset in the input where the problem
// was found, or -1 when encoding.
type Error struct {
	Offset int64
	Err    error
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return "wire: " + e.Err.Error()
	}
	return fmt.Sprintf("wire: %v at byte %d", e.Err, e.Offset)
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

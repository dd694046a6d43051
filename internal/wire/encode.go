package wire

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Encode returns the canonical JSON encoding of v within lim.
//
// v may be built from nil, bool, string, json.Number, the Go integer types,
// float64 and float32, map[string]any, map[string]string, []any and
// []string, nested to any mix. Floats are written in the shortest form that
// round-trips, like ECMAScript's Number.prototype.toString; a json.Number is
// written verbatim after checking that it is a finite JSON number literal.
func Encode(v any, lim Limits) ([]byte, error) {
	return Append(nil, v, lim)
}

// Append appends the canonical JSON encoding of v to dst; see [Encode]. The
// byte limit counts only the bytes appended. On error dst is returned with
// its original length and an unspecified tail beyond it.
func Append(dst []byte, v any, lim Limits) ([]byte, error) {
	e := encoder{start: len(dst), maxBytes: lim.MaxBytes, maxDepth: lim.depth()}
	out, err := e.value(dst, v, 0)
	if err != nil {
		countEncode(nil, 0)
		return dst[:e.start], &Error{Offset: -1, Err: err}
	}
	countEncode(out, e.start)
	return out, nil
}

type encoder struct {
	start    int
	maxBytes int
	maxDepth int
}

// check stops the encoding as soon as the output passes the byte limit.
func (e *encoder) check(b []byte) error {
	if e.maxBytes > 0 && len(b)-e.start > e.maxBytes {
		return ErrTooLarge
	}
	return nil
}

func (e *encoder) value(b []byte, v any, depth int) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		b = strconv.AppendBool(b, v)
	case string:
		b, err = appendString(b, v)
	case json.Number:
		if !validNumber(string(v)) {
			return b, ErrInvalidNumber
		}
		if !finite(string(v)) {
			return b, ErrNonFinite
		}
		b = append(b, v...)
	case float64:
		b, err = appendFloat(b, v, 64)
	case float32:
		b, err = appendFloat(b, float64(v), 32)
	case int:
		b = strconv.AppendInt(b, int64(v), 10)
	case int8:
		b = strconv.AppendInt(b, int64(v), 10)
	case int16:
		b = strconv.AppendInt(b, int64(v), 10)
	case int32:
		b = strconv.AppendInt(b, int64(v), 10)
	case int64:
		b = strconv.AppendInt(b, v, 10)
	case uint:
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint8:
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		b = strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		b = strconv.AppendUint(b, v, 10)
	case map[string]any:
		return encodeObject(e, b, v, depth)
	case map[string]string:
		return encodeObject(e, b, v, depth)
	case []any:
		return encodeArray(e, b, v, depth)
	case []string:
		return encodeArray(e, b, v, depth)
	default:
		return b, ErrUnsupportedType
	}
	if err != nil {
		return b, err
	}
	return b, e.check(b)
}

func encodeObject[V any](e *encoder, b []byte, m map[string]V, depth int) ([]byte, error) {
	if depth+1 > e.maxDepth {
		return b, ErrTooDeep
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	// Byte order of valid UTF-8 is code point order.
	slices.Sort(names)
	b = append(b, '{')
	var err error
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if err = e.check(b); err != nil {
			return b, err
		}
		if b, err = e.value(b, m[k], depth+1); err != nil {
			return b, err
		}
	}
	b = append(b, '}')
	return b, e.check(b)
}

func encodeArray[V any](e *encoder, b []byte, s []V, depth int) ([]byte, error) {
	if depth+1 > e.maxDepth {
		return b, ErrTooDeep
	}
	b = append(b, '[')
	var err error
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = e.value(b, v, depth+1); err != nil {
			return b, err
		}
	}
	b = append(b, ']')
	return b, e.check(b)
}

// appendString quotes s with the minimal escapes of RFC 8785: \" \\ \b \f
// \n \r \t, \u00xx (lower-case hex) for other control characters, and
// nothing else escaped.
func appendString(b []byte, s string) ([]byte, error) {
	out, err := jsontext.AppendQuote(b, s)
	if err != nil {
		return b, ErrInvalidUTF8
	}
	return out, nil
}

// appendFloat writes f like ECMAScript's Number.prototype.toString (and
// encoding/json): plain notation for 1e-6 <= |f| < 1e21, otherwise the
// shortest exponent form with no leading zero in the exponent.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, ErrNonFinite
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Go writes e-07 where ECMAScript writes e-7.
		if len(b)-start >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b, nil
}

// validNumber reports whether s is a JSON number literal:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

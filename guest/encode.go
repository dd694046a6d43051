package guest

import (
	"encoding/base64"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// encodeError is a result value that cannot be sent: where and why.
type encodeError struct {
	path   []string
	reason string
}

func (e *encodeError) message() string {
	s := "result"
	for _, seg := range e.path {
		s += "/" + seg
	}
	return s + ": " + e.reason
}

// under returns e with seg prepended to its path: the path is built on the
// way out of a failed encoding, never on the way in.
func (e *encodeError) under(seg string) *encodeError {
	e.path = append([]string{seg}, e.path...)
	return e
}

// encodeResult encodes the result v of operation op, of root node n, as
// compact JSON in field order. It writes what the output schema describes:
// a nil slice is [], a nil pointer field is omitted, omitempty and
// omitzero omit as in encoding/json, and a field that op does not have must
// be left zero.
func encodeResult(v reflect.Value, n *node, op string) ([]byte, *encodeError) {
	return encodeValue(make([]byte, 0, 256), v, n, op)
}

func encodeValue(b []byte, v reflect.Value, n *node, op string) ([]byte, *encodeError) {
	switch n.kind {
	case kindString:
		return appendString(b, v.String()), nil
	case kindBool:
		return strconv.AppendBool(b, v.Bool()), nil
	case kindInt:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case kindUint:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case kindFloat:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &encodeError{reason: "not a finite number"}
		}
		return appendFloat(b, f, n.bits), nil
	case kindBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes())
		return append(b, '"'), nil
	case kindSlice, kindArray:
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err *encodeError
			if b, err = encodeValue(b, v.Index(i), n.elem, ""); err != nil {
				return nil, err.under(strconv.Itoa(i))
			}
		}
		return append(b, ']'), nil
	case kindStruct:
		b = append(b, '{')
		first := true
		accept := n.accepts[op]
		for k, f := range n.fields {
			fv := v.FieldByIndex(f.index)
			if accept != nil && !accept[k] || accept == nil && !f.accepts(op) {
				if !fv.IsZero() {
					return nil, &encodeError{reason: "field " + strconv.Quote(f.name) + " is set but operation " + strconv.Quote(op) + " does not have it"}
				}
				continue
			}
			switch {
			case f.pointer:
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			case f.omitZero && fv.IsZero(), f.omitEmpty && empty(fv):
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, f.name)
			b = append(b, ':')
			var err *encodeError
			if b, err = encodeValue(b, fv, f.node, ""); err != nil {
				return nil, err.under(safeName(f.name))
			}
		}
		return append(b, '}'), nil
	}
	panic("guest: encoding an unknown kind")
}

// empty is encoding/json's omitempty test for the kinds the SDK supports.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice, reflect.Array:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}

// appendFloat formats f as encoding/json does: the shortest decimal that
// round-trips, in exponent form only below 1e-6 or from 1e21.
func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString appends s as a JSON string with minimal escapes: '"', '\\'
// and control characters; invalid UTF-8 becomes U+FFFD. Runs of text are
// copied whole.
func appendString(b []byte, s string) []byte {
	d := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	b = slices.Grow(b, len(s)+2)
	b = append(b, '"')
	for i := 0; ; {
		j := textEnd(d, i)
		b = append(b, s[i:j]...)
		if j == len(s) {
			break
		}
		b = append(b, escapes[s[j]]...)
		i = j + 1
	}
	return append(b, '"')
}

// escapes holds what appendString writes for each byte textEnd stops at:
// the escape of '"', '\\' or a control character, and U+FFFD for the
// first byte of invalid UTF-8.
var escapes = func() (t [256]string) {
	const hex = "0123456789abcdef"
	for c := range 0x20 {
		t[c] = `\u00` + string(hex[c>>4]) + string(hex[c&0xf])
	}
	t['"'], t['\\'] = `\"`, `\\`
	t['\n'], t['\r'], t['\t'], t['\b'], t['\f'] = `\n`, `\r`, `\t`, `\b`, `\f`
	for c := utf8.RuneSelf; c < len(t); c++ {
		t[c] = "\ufffd"
	}
	return t
}()

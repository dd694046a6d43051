package guest

import (
	"encoding/base64"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
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

// encodeResult encodes the result v of operation op, of root node n, as
// compact JSON in field order. It writes what the output schema describes:
// a nil slice is [], a nil pointer field is omitted, omitempty and
// omitzero omit as in encoding/json, and a field that op does not have must
// be left zero.
func encodeResult(v reflect.Value, n *node, op string) ([]byte, *encodeError) {
	return encodeValue(make([]byte, 0, 256), v, n, op, nil)
}

func encodeValue(b []byte, v reflect.Value, n *node, op string, path []string) ([]byte, *encodeError) {
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
			return nil, &encodeError{clonePath(path), "not a finite number"}
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
			if b, err = encodeValue(b, v.Index(i), n.elem, "", append(path, strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case kindStruct:
		b = append(b, '{')
		first := true
		for _, f := range n.fields {
			fv := v.FieldByIndex(f.index)
			if !f.accepts(op) {
				if !fv.IsZero() {
					return nil, &encodeError{clonePath(path), "field " + strconv.Quote(f.name) + " is set but operation " + strconv.Quote(op) + " does not have it"}
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
			if b, err = encodeValue(b, fv, f.node, "", append(path, safeName(f.name))); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	panic("guest: encoding an unknown kind")
}

func clonePath(path []string) []string { return append([]string(nil), path...) }

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
// and control characters; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

package wire

import "encoding/json"

// The plain-text fast path of Decode. Request bodies and tool parameters
// are nearly always plain JSON: no escape in a string, no error. Such a
// text is parsed here in one pass over the bytes, building the same value
// the tokenizer's path builds, with no token copies and no name set of
// its own (the object being built is the duplicate check). Anything else —
// an escape, any syntax error, a duplicate name, a number that is not
// finite, nesting past the limit, trailing data — makes fastDecode give up
// (ok false) and Decode parse the text again on the tokenizer's path,
// which decides and reports it with its offset as before. So the fast path
// changes no outcome, only the cost of the common one; TestFastDecode and
// FuzzFastDecode hold the two paths to the same values.

// fastDecoder parses data, which Decode has already checked to be UTF-8
// without a byte-order mark.
type fastDecoder struct {
	data     []byte
	pos      int
	maxDepth int
}

// fastDecode parses data as one plain JSON value, or reports false.
func fastDecode(data []byte, maxDepth int) (any, bool) {
	d := fastDecoder{data: data, maxDepth: maxDepth}
	d.space()
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.pos == len(d.data)
}

func (d *fastDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// literal consumes lit at the current position.
func (d *fastDecoder) literal(lit string) bool {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return false
	}
	d.pos += len(lit)
	return true
}

// value parses one value whose container depth is depth.
func (d *fastDecoder) value(depth int) (any, bool) {
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		return d.str()
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == 'n':
		return nil, d.literal("null")
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

// str parses a string without escapes or control characters.
func (d *fastDecoder) str() (string, bool) {
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return string(d.data[start:i]), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number parses a number literal of the JSON grammar that is finite as a
// float64.
func (d *fastDecoder) number() (any, bool) {
	start, i := d.pos, d.pos
	digits := func() int {
		n := 0
		for i < len(d.data) && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	exact := true // no exponent: finite whatever its length below
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		exact = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	lit := string(d.data[start:i])
	// Without an exponent a literal of fewer than 309 integer digits is
	// below MaxFloat64; a longer one or one with an exponent is checked.
	if (!exact || len(lit) > 300) && !finite(lit) {
		return nil, false
	}
	d.pos = i
	return json.Number(lit), true
}

func (d *fastDecoder) object(depth int) (any, bool) {
	if depth+1 > d.maxDepth {
		return nil, false
	}
	d.pos++ // {
	obj := make(map[string]any)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return obj, true
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, false
		}
		name, ok := d.str()
		if !ok {
			return nil, false
		}
		if _, dup := obj[name]; dup {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		obj[name] = v
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.space()
		case '}':
			d.pos++
			return obj, true
		default:
			return nil, false
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	if depth+1 > d.maxDepth {
		return nil, false
	}
	d.pos++ // [
	arr := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return arr, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		arr = append(arr, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.space()
		case ']':
			d.pos++
			return arr, true
		default:
			return nil, false
		}
	}
}

package guest

import (
	"encoding/base64"
	"reflect"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The fast path of compute.
//
// Compute first reads its input with the reader below: one pass over the
// envelope, then one over the parameters straight into the service's
// input type, through the offsets its model recorded. The reader accepts
// only what the strict path (parseEnvelope, then assign) accepts, and
// decodes it to the same value; at anything else — malformed JSON, a
// duplicate or unknown member, null, a type mismatch, a number that is not
// a plain integer literal for an integer, invalid UTF-8 — it gives up, and
// compute starts over on the strict path, which reports the exact error.
// So the fast path holds no error message of its own: every refusal, and
// its precedence, is the strict path's.
//
// The loops over the bytes of strings are the scanners of scan.go.

// fastMaxDepth bounds the nesting the fast path decodes; deeper parameters
// take the strict path (whose limit is maxDepth).
const fastMaxDepth = 32

// reader reads JSON from data at pos.
type reader struct {
	data  []byte
	pos   int
	depth int
	// alias says that strings may share data's memory: data is the
	// compute export's own copy of the input, never written again.
	alias bool
}

// ws skips JSON white space.
func (r *reader) ws() {
	d, i := r.data, r.pos
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	r.pos = i
}

// consume skips c if it is the next byte.
func (r *reader) consume(c byte) bool {
	if r.pos < len(r.data) && r.data[r.pos] == c {
		r.pos++
		return true
	}
	return false
}

// peek returns the next byte, or 0 at the end.
func (r *reader) peek() byte {
	if r.pos < len(r.data) {
		return r.data[r.pos]
	}
	return 0
}

// rawString reads the JSON string at r.pos (a '"') and returns its
// contents: a view of data when it has no escapes, else a new buffer
// (owned).
func (r *reader) rawString() (b []byte, owned, ok bool) {
	if !r.consume('"') {
		return nil, false, false
	}
	start := r.pos
	i := textEnd(r.data, start)
	if i < len(r.data) && r.data[i] == '"' {
		r.pos = i + 1
		return r.data[start:i], false, true
	}
	return r.stringSlow(start, i)
}

// stringSlow finishes a string whose contents start at start and whose
// first byte that is not text is at i: it must be an escape. A control
// character or invalid UTF-8 (which the strict path replaces) gives up.
func (r *reader) stringSlow(start, i int) (b []byte, owned, ok bool) {
	d := r.data
	if i >= len(d) || d[i] != '\\' {
		return nil, false, false
	}
	end := quoteEnd(d, i)
	if end < 0 {
		return nil, false, false
	}
	b = make([]byte, 0, end-start)
	b = append(b, d[start:i]...)
	for i < end {
		if d[i] != '\\' || i+1 >= end {
			return nil, false, false
		}
		if c := unescapes[d[i+1]]; c != 0 {
			b = append(b, c)
			i += 2
		} else if b, i, ok = unescapeU(b, d, i); !ok || i > end {
			return nil, false, false
		}
		j := textEnd(d[:end], i)
		b = append(b, d[i:j]...)
		i = j
	}
	r.pos = end + 1
	return b, true, true
}

// unescapes maps the letter of each one-character escape to the character.
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeU appends the character of the \u escape at d[i] to b, as
// encoding/json decodes it (a surrogate pair in two escapes; U+FFFD for a
// lone surrogate), and returns the index after the escape.
func unescapeU(b, d []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(d) || d[i+1] != 'u' {
		return b, i, false
	}
	rr := hex4(d, i+2)
	if rr < 0 {
		return b, i, false
	}
	i += 6
	if utf16.IsSurrogate(rr) {
		rr1 := rune(-1)
		if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
			rr1 = hex4(d, i+2)
		}
		if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
			return utf8.AppendRune(b, dec), i + 6, true
		}
		rr = unicode.ReplacementChar
	}
	return utf8.AppendRune(b, rr), i, true
}

// hex4 returns the value of the four hex digits at d[i:], or -1.
func hex4(d []byte, i int) rune {
	if i+4 > len(d) {
		return -1
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// str reads a JSON string as a Go string: copied out of data unless r
// may alias it.
func (r *reader) str() (string, bool) {
	b, owned, ok := r.rawString()
	switch {
	case !ok:
		return "", false
	case (owned || r.alias) && len(b) > 0:
		return unsafe.String(&b[0], len(b)), true // b is not written again
	}
	return string(b), true
}

// number reads a JSON number literal and reports whether it is an integer
// literal (no fraction, no exponent). The literal is a view of data.
func (r *reader) number() (lit string, integer, ok bool) {
	d, i := r.data, r.pos
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return "", false, false
	}
	integer = true
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return "", false, false
		}
		i, integer = j, false
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return "", false, false
		}
		i, integer = j, false
	}
	r.pos = i
	return unsafe.String(&d[start], i-start), integer, true
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// literal skips the literal word (true, false) if it is next.
func (r *reader) literal(word string) bool {
	if len(r.data)-r.pos >= len(word) && string(r.data[r.pos:r.pos+len(word)]) == word {
		r.pos += len(word)
		return true
	}
	return false
}

// skip skips one JSON value, checking only its structure: the strict
// decoding of what it spans checks the rest.
func (r *reader) skip() bool {
	depth := 0
	for {
		r.ws()
		if r.pos >= len(r.data) {
			return false
		}
		switch r.data[r.pos] {
		case '"':
			end := quoteEnd(r.data, r.pos+1)
			if end < 0 {
				return false
			}
			r.pos = end + 1
		case '{', '[':
			if depth++; depth > fastMaxDepth {
				return false
			}
			r.pos++
			continue
		case '}', ']':
			if depth--; depth < 0 {
				return false
			}
			r.pos++
		case ',', ':':
			if depth == 0 {
				return false
			}
			r.pos++
			continue
		default:
			start := r.pos
			for r.pos < len(r.data) && !delimiter(r.data[r.pos]) {
				r.pos++
			}
			if r.pos == start {
				return false
			}
		}
		if depth == 0 {
			return true
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

// fastEnvelope reads the compute input {"tool_code","operation",
// "parameters"} and returns the parameters as the bytes they span.
func fastEnvelope(data []byte) (toolCode, operation string, params []byte, ok bool) {
	r := reader{data: data}
	r.ws()
	if !r.consume('{') {
		return
	}
	var seen uint8
	for {
		r.ws()
		key, _, ok := r.rawString()
		if !ok {
			return "", "", nil, false
		}
		r.ws()
		if !r.consume(':') {
			return "", "", nil, false
		}
		r.ws()
		var bit uint8
		switch {
		case string(key) == "tool_code":
			bit = 1
			toolCode, ok = r.str()
		case string(key) == "operation":
			bit = 2
			operation, ok = r.str()
		case string(key) == "parameters":
			bit = 4
			start := r.pos
			ok = r.skip()
			params = data[start:r.pos]
		}
		if !ok || bit == 0 || seen&bit != 0 {
			return "", "", nil, false
		}
		seen |= bit
		r.ws()
		if r.consume(',') {
			continue
		}
		if r.consume('}') {
			break
		}
		return "", "", nil, false
	}
	r.ws()
	if r.pos != len(data) || seen != 7 {
		return "", "", nil, false
	}
	return toolCode, operation, params, true
}

// decodeInput decodes the parameters raw into the input root n at p, of
// which the operation accepts the fields marked in accept (nil: all).
// alias says that the strings decoded may share raw's memory.
func decodeInput(raw []byte, n *node, p unsafe.Pointer, accept []bool, alias bool) bool {
	r := reader{data: raw, alias: alias}
	r.ws()
	if r.peek() != '{' || !r.object(n, p, accept) {
		return false
	}
	r.ws()
	return r.pos == len(raw)
}

// value decodes the next value into p, of node n.
func (r *reader) value(n *node, p unsafe.Pointer) bool {
	r.ws()
	switch n.kind {
	case kindString:
		s, ok := r.str()
		*(*string)(p) = s
		return ok
	case kindBool:
		switch {
		case r.literal("true"):
			*(*bool)(p) = true
		case r.literal("false"):
			*(*bool)(p) = false
		default:
			return false
		}
		return true
	case kindInt, kindUint, kindFloat:
		return r.numberValue(n, p)
	case kindBytes:
		s, _, ok := r.rawString()
		if !ok {
			return false
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		m, err := base64.StdEncoding.Decode(b, s)
		if err != nil {
			return false
		}
		*(*[]byte)(p) = b[:m]
		return true
	case kindSlice:
		return r.slice(n, p)
	case kindArray:
		return r.array(n, p)
	case kindStruct:
		return r.peek() == '{' && r.object(n, p, nil)
	}
	return false
}

// numberValue decodes an integer or a float. An integer written with a
// fraction or an exponent, or out of range, takes the strict path.
func (r *reader) numberValue(n *node, p unsafe.Pointer) bool {
	lit, integer, ok := r.number()
	if !ok {
		return false
	}
	switch n.kind {
	case kindInt:
		i, err := strconv.ParseInt(lit, 10, n.bits)
		if !integer || err != nil {
			return false
		}
		switch n.bits {
		case 8:
			*(*int8)(p) = int8(i)
		case 16:
			*(*int16)(p) = int16(i)
		case 32:
			*(*int32)(p) = int32(i)
		default:
			*(*int64)(p) = i
		}
	case kindUint:
		u, err := strconv.ParseUint(lit, 10, n.bits)
		if !integer || err != nil {
			return false
		}
		switch n.bits {
		case 8:
			*(*uint8)(p) = uint8(u)
		case 16:
			*(*uint16)(p) = uint16(u)
		case 32:
			*(*uint32)(p) = uint32(u)
		default:
			*(*uint64)(p) = u
		}
	default:
		f, err := strconv.ParseFloat(lit, n.bits)
		if err != nil {
			return false
		}
		if n.bits == 32 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
	}
	return true
}

// object decodes a JSON object into the struct at p, of node n. accept,
// when not nil, marks the fields the operation has.
func (r *reader) object(n *node, p unsafe.Pointer, accept []bool) bool {
	if len(n.fields) > 64 || !r.consume('{') {
		return false
	}
	if r.depth++; r.depth > fastMaxDepth {
		return false
	}
	var seen uint64
	r.ws()
	if !r.consume('}') {
		for {
			r.ws()
			key, _, ok := r.rawString()
			if !ok {
				return false
			}
			k := n.fieldIndex(key)
			if k < 0 || seen&(1<<k) != 0 || accept != nil && !accept[k] {
				return false
			}
			seen |= 1 << k
			r.ws()
			if !r.consume(':') || !r.field(n.fields[k], unsafe.Add(p, n.fields[k].offset)) {
				return false
			}
			r.ws()
			if r.consume(',') {
				continue
			}
			if r.consume('}') {
				break
			}
			return false
		}
	}
	r.depth--
	for k, f := range n.fields {
		if seen&(1<<k) == 0 && !f.optional() && (accept == nil || accept[k]) {
			return false
		}
	}
	return true
}

// fieldIndex returns the index of the field named name, or -1.
func (n *node) fieldIndex(name []byte) int {
	for k, f := range n.fields {
		if f.name == string(name) {
			return k
		}
	}
	return -1
}

// field decodes the value of field f into fp, allocating it when the
// field is a pointer.
func (r *reader) field(f *field, fp unsafe.Pointer) bool {
	if !f.pointer {
		return r.value(f.node, fp)
	}
	v := reflect.New(f.node.typ).UnsafePointer()
	if !r.value(f.node, v) {
		return false
	}
	*(*unsafe.Pointer)(fp) = v
	return true
}

// slice decodes a JSON array into the slice at p, of node n: a new slice
// of exactly its items ([] is an empty slice, not nil).
func (r *reader) slice(n *node, p unsafe.Pointer) bool {
	if !r.consume('[') {
		return false
	}
	if r.depth++; r.depth > fastMaxDepth {
		return false
	}
	items := reflect.MakeSlice(n.typ, 0, 0)
	length := 0
	r.ws()
	if !r.consume(']') {
		var data unsafe.Pointer
		for {
			if length == items.Len() {
				grown := reflect.MakeSlice(n.typ, max(4, 2*length), max(4, 2*length))
				reflect.Copy(grown, items)
				items, data = grown, grown.UnsafePointer()
			}
			if !r.value(n.elem, unsafe.Add(data, uintptr(length)*n.elem.size)) {
				return false
			}
			length++
			r.ws()
			if r.consume(',') {
				continue
			}
			if r.consume(']') {
				break
			}
			return false
		}
	}
	r.depth--
	reflect.NewAt(n.typ, p).Elem().Set(items.Slice3(0, length, length))
	return true
}

// array decodes a JSON array of exactly n.length items into the array at
// p.
func (r *reader) array(n *node, p unsafe.Pointer) bool {
	if !r.consume('[') {
		return false
	}
	if r.depth++; r.depth > fastMaxDepth {
		return false
	}
	length := 0
	r.ws()
	if !r.consume(']') {
		for {
			if length == n.length || !r.value(n.elem, unsafe.Add(p, uintptr(length)*n.elem.size)) {
				return false
			}
			length++
			r.ws()
			if r.consume(',') {
				continue
			}
			if r.consume(']') {
				break
			}
			return false
		}
	}
	r.depth--
	return length == n.length
}

package guest

import (
	"encoding/base64"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of the JSON the SDK parses; the platform's
// own limit (32) is lower.
const maxDepth = 128

// Parse refusals that are the document's fault rather than a syntax error.
var (
	// errDuplicateName is returned when an object has the same member name
	// twice, compared after unescaping.
	errDuplicateName = errors.New("an object has a duplicate member name")
	// errTooDeep is returned when objects and arrays nest deeper than
	// maxDepth.
	errTooDeep = errors.New("nesting is too deep")
	// errSyntax is returned when the text is not JSON.
	errSyntax = errors.New("not valid JSON")
)

// number is a JSON number literal as written.
type number string

// parseJSON decodes one JSON value strictly: duplicate names, trailing data
// and nesting deeper than depth are refused; numbers stay number literals.
// It accepts what encoding/json's Decoder accepts, and decodes strings as
// it does (invalid UTF-8 becomes U+FFFD, a lone surrogate escape too),
// without linking encoding/json.
func parseJSON(data []byte, depth int) (any, error) {
	p := &parser{data: data, depth: depth}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return v, p.end()
}

// parser reads JSON from data at pos, strictly. It reads in document
// order, so that of two refusals the first in the text is reported, as
// encoding/json's Decoder.Token reports it.
type parser struct {
	data  []byte
	pos   int
	depth int
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte, or 0 at the end.
func (p *parser) next() byte {
	p.ws()
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// end refuses anything but white space after the value.
func (p *parser) end() error {
	if p.ws(); p.pos != len(p.data) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// value reads the next value; depth is the nesting of the containers
// around it.
func (p *parser) value(depth int) (any, error) {
	switch c := p.next(); c {
	case '"':
		return p.str()
	case '{', '[':
		if depth >= p.depth {
			return nil, errTooDeep
		}
		p.pos++
		if c == '{' {
			return p.object(depth)
		}
		return p.array(depth)
	case 't':
		return true, p.word("true")
	case 'f':
		return false, p.word("false")
	case 'n':
		return nil, p.word("null")
	}
	return p.number()
}

func (p *parser) word(w string) error {
	if len(p.data)-p.pos >= len(w) && string(p.data[p.pos:p.pos+len(w)]) == w {
		p.pos += len(w)
		return nil
	}
	return errSyntax
}

// object reads the members of an object whose '{' was read.
func (p *parser) object(depth int) (any, error) {
	m := map[string]any{}
	if p.next() == '}' {
		p.pos++
		return m, nil
	}
	for {
		if p.next() != '"' {
			return nil, errSyntax
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, errDuplicateName
		}
		if p.next() != ':' {
			return nil, errSyntax
		}
		p.pos++
		if m[key], err = p.value(depth + 1); err != nil {
			return nil, err
		}
		switch p.next() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return m, nil
		default:
			return nil, errSyntax
		}
	}
}

// array reads the items of an array whose '[' was read.
func (p *parser) array(depth int) (any, error) {
	a := []any{}
	if p.next() == ']' {
		p.pos++
		return a, nil
	}
	for {
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, item)
		switch p.next() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return a, nil
		default:
			return nil, errSyntax
		}
	}
}

// number reads a number literal: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() (any, error) {
	r := reader{data: p.data, pos: p.pos}
	lit, _, ok := r.number()
	if !ok {
		return nil, errSyntax
	}
	p.pos = r.pos
	return number(strings.Clone(lit)), nil
}

// str reads the string at p.pos (a '"') as encoding/json decodes it:
// escapes resolved (a lone surrogate is U+FFFD), each byte of invalid
// UTF-8 replaced by U+FFFD; a control character is a syntax error.
func (p *parser) str() (string, error) {
	d := p.data
	start := p.pos + 1
	var b []byte // nil while the contents are a plain copy of d[start:i]
	for i := start; ; {
		j := textEnd(d, i)
		if b != nil {
			b = append(b, d[i:j]...)
		}
		if j >= len(d) {
			return "", errSyntax
		}
		switch c := d[j]; {
		case c == '"':
			p.pos = j + 1
			if b == nil {
				return string(d[start:j]), nil
			}
			return string(b), nil
		case c < 0x20:
			return "", errSyntax
		}
		if b == nil {
			b = append(make([]byte, 0, j-start+16), d[start:j]...)
		}
		if d[j] != '\\' { // invalid UTF-8
			b = append(b, "\uFFFD"...)
			i = j + 1
			continue
		}
		if j+1 < len(d) {
			if c := unescapes[d[j+1]]; c != 0 {
				b = append(b, c)
				i = j + 2
				continue
			}
		}
		var ok bool
		if b, i, ok = unescapeU(b, d, j); !ok {
			return "", errSyntax
		}
	}
}

// envelope is the compute input: {"tool_code","operation","parameters"}.
type envelope struct {
	toolCode   string
	operation  string
	parameters any
}

// parseEnvelope decodes the compute input strictly. A malformed envelope is
// the host's fault (execution_failed); a duplicate name or excessive
// nesting inside the parameters is the caller's (invalid_parameters).
func parseEnvelope(data []byte) (envelope, *Error) {
	var env envelope
	bad := func(reason string) (envelope, *Error) {
		return envelope{}, sdkFailure("compute input: " + reason)
	}
	p := &parser{data: data, depth: maxDepth}
	if p.next() != '{' {
		return bad("not a JSON object")
	}
	p.pos++
	seen := map[string]bool{}
	for first := true; ; first = false {
		c := p.next()
		if c == '}' || c == 0 {
			break
		}
		if !first {
			if c != ',' {
				return bad("not valid JSON")
			}
			p.pos++
		}
		if p.next() != '"' {
			return bad("not valid JSON")
		}
		key, err := p.str()
		if err != nil {
			return bad("not valid JSON")
		}
		if seen[key] {
			return bad("a member is repeated")
		}
		seen[key] = true
		switch key {
		case "tool_code", "operation", "parameters":
		default:
			return bad("unknown member")
		}
		// The colon is read with the value, as Decoder.Token reads it.
		var v any
		if p.next() == ':' {
			p.pos++
			v, err = p.value(1)
		} else {
			err = errSyntax
		}
		if key == "parameters" {
			if errors.Is(err, errDuplicateName) || errors.Is(err, errTooDeep) {
				return envelope{}, &Error{Code: CodeInvalidParameters, Message: "parameters: " + err.Error()}
			}
			if err != nil {
				return bad("parameters are not valid JSON")
			}
			env.parameters = v
			continue
		}
		s, ok := v.(string)
		if err != nil || !ok {
			return bad(key + " is not a string")
		}
		if key == "tool_code" {
			env.toolCode = s
		} else {
			env.operation = s
		}
	}
	if p.next() != '}' {
		return bad("not valid JSON")
	}
	p.pos++
	if err := p.end(); err != nil {
		return bad("data after the JSON value")
	}
	for _, key := range []string{"tool_code", "operation", "parameters"} {
		if !seen[key] {
			return bad("missing " + key)
		}
	}
	return env, nil
}

// decodeError is a value that does not fit its Go type: where (a path of
// member names and indices) and a short reason, never the value itself.
type decodeError struct {
	path   []string
	reason string
}

// message returns "parameters/a/0/b: reason", member names that are not
// plain identifiers replaced by "*".
func (e *decodeError) message() string {
	var b strings.Builder
	b.WriteString("parameters")
	for _, seg := range e.path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	b.WriteString(": ")
	b.WriteString(e.reason)
	return b.String()
}

// safeName returns name when it is a plain identifier of at most 64
// bytes ([A-Za-z0-9_.-]), else "*": an unknown member name is caller data.
func safeName(name string) string {
	if name == "" || len(name) > 64 {
		return "*"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'; !plain {
			return "*"
		}
	}
	return name
}

func at(path []string, reason string) *decodeError {
	return &decodeError{path: slices.Clone(path), reason: reason}
}

// assign decodes the parsed JSON value x into v, of node n. op is the
// operation when v is the input root ("" elsewhere): fields it does not
// accept are refused and only its required fields are required.
func assign(v reflect.Value, n *node, x any, op string, path []string) *decodeError {
	if x == nil {
		return at(path, "null is not allowed")
	}
	switch n.kind {
	case kindString:
		s, ok := x.(string)
		if !ok {
			return at(path, "expected a string")
		}
		v.SetString(s)
	case kindBool:
		b, ok := x.(bool)
		if !ok {
			return at(path, "expected a boolean")
		}
		v.SetBool(b)
	case kindInt, kindUint:
		num, ok := x.(number)
		if !ok {
			return at(path, "expected an integer")
		}
		i, ok := integer(string(num))
		if !ok {
			return at(path, "expected an integer")
		}
		if n.kind == kindInt {
			x, fits := i.int64()
			if !fits || v.OverflowInt(x) {
				return at(path, "integer out of range")
			}
			v.SetInt(x)
		} else {
			x, fits := i.uint64()
			if !fits || v.OverflowUint(x) {
				return at(path, "integer out of range")
			}
			v.SetUint(x)
		}
	case kindFloat:
		num, ok := x.(number)
		if !ok {
			return at(path, "expected a number")
		}
		f, err := strconv.ParseFloat(string(num), n.bits)
		if err != nil {
			return at(path, "number out of range")
		}
		v.SetFloat(f)
	case kindBytes:
		s, ok := x.(string)
		if !ok {
			return at(path, "expected a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return at(path, "not valid base64")
		}
		v.SetBytes(b)
	case kindSlice, kindArray:
		items, ok := x.([]any)
		if !ok {
			return at(path, "expected an array")
		}
		if n.kind == kindArray && len(items) != n.length {
			return at(path, "expected "+strconv.Itoa(n.length)+" items")
		}
		if n.kind == kindSlice {
			v.Set(reflect.MakeSlice(v.Type(), len(items), len(items)))
		}
		for i, item := range items {
			if err := assign(v.Index(i), n.elem, item, "", append(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case kindStruct:
		m, ok := x.(map[string]any)
		if !ok {
			return at(path, "expected an object")
		}
		return assignStruct(v, n, m, op, path)
	}
	return nil
}

func assignStruct(v reflect.Value, n *node, m map[string]any, op string, path []string) *decodeError {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := n.byName[k]
		if f == nil {
			if name := safeName(k); name != "*" {
				return at(path, "unknown field "+strconv.Quote(name))
			}
			return at(path, "unknown field")
		}
		if !f.accepts(op) {
			return at(path, "field "+strconv.Quote(f.name)+" is not accepted by operation "+strconv.Quote(op))
		}
		dst := v.FieldByIndex(f.index)
		fp := append(path, safeName(k))
		if f.pointer {
			if m[k] == nil {
				return at(fp, "null is not allowed")
			}
			p := reflect.New(f.node.typ)
			if err := assign(p.Elem(), f.node, m[k], "", fp); err != nil {
				return err
			}
			dst.Set(p)
			continue
		}
		if err := assign(dst, f.node, m[k], "", fp); err != nil {
			return err
		}
	}
	for _, f := range n.fields {
		if _, ok := m[f.name]; !ok && !f.optional() && f.accepts(op) {
			return at(path, "missing required field "+strconv.Quote(f.name))
		}
	}
	return nil
}

// maxExponent bounds the exponent of a number literal decoded into an
// integer the slow way, so that 1e-99999999 cannot cost a huge computation.
const maxExponent = 400

// integer returns the value of a JSON number literal as an integer, which
// may be written with a fraction or exponent (2.0, 1e3): JSON Schema's
// "integer" accepts any number with a zero fractional part. It reports
// false for a literal with a non-zero fraction, or with an exponent beyond
// ±maxExponent; an integer beyond the range of int64 and uint64 is
// returned with inRange false.
func integer(lit string) (v bigInt, ok bool) {
	neg := strings.HasPrefix(lit, "-")
	body := strings.TrimPrefix(lit, "-")
	mant, exp := body, 0
	if e := strings.IndexAny(body, "eE"); e >= 0 {
		x, err := strconv.Atoi(strings.TrimPrefix(body[e+1:], "+"))
		if err != nil || x > maxExponent || x < -maxExponent {
			return bigInt{}, false
		}
		mant, exp = body[:e], x
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return bigInt{inRange: true}, true // zero, -0 included
	}
	for exp < 0 && strings.HasSuffix(digits, "0") {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	if exp < 0 {
		return bigInt{}, false // a non-zero fraction
	}
	if len(digits)+exp > 20 {
		return bigInt{neg: neg}, true // beyond uint64
	}
	mag, err := strconv.ParseUint(digits+strings.Repeat("0", exp), 10, 64)
	return bigInt{neg: neg, mag: mag, inRange: err == nil}, true
}

// bigInt is an integer as sign and magnitude; inRange says that the
// magnitude fits in a uint64 (else the value fits no Go integer type).
type bigInt struct {
	neg     bool
	mag     uint64
	inRange bool
}

// int64 returns the value as an int64, reporting whether it fits.
func (i bigInt) int64() (int64, bool) {
	switch {
	case !i.inRange:
		return 0, false
	case i.neg && i.mag <= 1<<63:
		return int64(-i.mag), true // -(1<<63) wraps to itself
	case !i.neg && i.mag < 1<<63:
		return int64(i.mag), true
	}
	return 0, false
}

// uint64 returns the value as a uint64, reporting whether it fits.
func (i bigInt) uint64() (uint64, bool) {
	if !i.inRange || i.neg && i.mag != 0 {
		return 0, false
	}
	return i.mag, true
}

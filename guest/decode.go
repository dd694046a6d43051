package guest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
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
)

// parseJSON decodes one JSON value strictly: duplicate names, trailing data
// and nesting deeper than depth are refused; numbers stay json.Number.
func parseJSON(data []byte, depth int) (any, error) {
	p := newParser(data, depth)
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return v, p.end()
}

type parser struct {
	dec   *json.Decoder
	depth int
}

func newParser(data []byte, depth int) *parser {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &parser{dec: dec, depth: depth}
}

// end refuses anything but the end of the text.
func (p *parser) end() error {
	if _, err := p.dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func (p *parser) value(depth int) (any, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= p.depth {
		return nil, errTooDeep
	}
	var v any
	switch d {
	case '{':
		m := map[string]any{}
		for p.dec.More() {
			k, err := p.dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := m[key]; dup {
				return nil, errDuplicateName
			}
			if m[key], err = p.value(depth + 1); err != nil {
				return nil, err
			}
		}
		v = m
	case '[':
		a := []any{}
		for p.dec.More() {
			item, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, item)
		}
		v = a
	default:
		return nil, errors.New("unexpected delimiter")
	}
	if _, err := p.dec.Token(); err != nil { // the closing delimiter
		return nil, err
	}
	return v, nil
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
		return envelope{}, sdkFailure("compute input: %s", reason)
	}
	p := newParser(data, maxDepth)
	if tok, err := p.dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("not a JSON object")
	}
	seen := map[string]bool{}
	for p.dec.More() {
		k, err := p.dec.Token()
		if err != nil {
			return bad("not valid JSON")
		}
		key := k.(string)
		if seen[key] {
			return bad("a member is repeated")
		}
		seen[key] = true
		switch key {
		case "tool_code", "operation":
			v, err := p.value(1)
			s, ok := v.(string)
			if err != nil || !ok {
				return bad(key + " is not a string")
			}
			if key == "tool_code" {
				env.toolCode = s
			} else {
				env.operation = s
			}
		case "parameters":
			v, err := p.value(1)
			if errors.Is(err, errDuplicateName) || errors.Is(err, errTooDeep) {
				return envelope{}, &Error{Code: CodeInvalidParameters, Message: "parameters: " + err.Error()}
			}
			if err != nil {
				return bad("parameters are not valid JSON")
			}
			env.parameters = v
		default:
			return bad("unknown member")
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return bad("not valid JSON")
	}
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
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
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
		num, ok := x.(json.Number)
		if !ok {
			return at(path, "expected an integer")
		}
		i, ok := integer(string(num))
		if !ok {
			return at(path, "expected an integer")
		}
		if n.kind == kindInt {
			if !i.IsInt64() || v.OverflowInt(i.Int64()) {
				return at(path, "integer out of range")
			}
			v.SetInt(i.Int64())
		} else {
			if !i.IsUint64() || v.OverflowUint(i.Uint64()) {
				return at(path, "integer out of range")
			}
			v.SetUint(i.Uint64())
		}
	case kindFloat:
		num, ok := x.(json.Number)
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

// integer returns the integer value of a JSON number literal, which may be
// written with a fraction or exponent (2.0, 1e3): JSON Schema's "integer"
// accepts any number with a zero fractional part. It reports false for a
// literal with a non-zero fraction.
func integer(lit string) (*big.Int, bool) {
	if i, ok := new(big.Int).SetString(lit, 10); ok {
		return i, true
	}
	if e := strings.IndexAny(lit, "eE"); e >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(lit[e+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return r.Num(), true
}

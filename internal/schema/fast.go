package schema

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A flat schema is the common shape of a tool's input: an object with
// "additionalProperties": false whose properties are strings (with enum,
// const, minLength, maxLength), integers (with minimum, maximum), numbers
// or booleans, some of them required. [Compile] compiles such a schema a
// second time into a flat check, which [Validator.Validate] runs first:
// when it accepts a document, the document is valid and the validator is
// not run; when it does not (a refusal, or a value it does not decide,
// such as the integer 1.0 or one beyond int64), the validator decides and
// names the issues, as for every other schema. The flat check accepts a
// subset of what the validator accepts and never refuses on its own, so
// it cannot change an answer: TestFlatAgreesWithTheValidator and
// FuzzFlat hold it to the validator.

// flatSchema is a compiled flat schema.
type flatSchema struct {
	props    map[string]*flatProp
	required []string
}

// flatProp is one property of a flat schema.
type flatProp struct {
	typ string // "string", "integer", "number" or "boolean"
	// enum holds the allowed strings (a const is an enum of one); nil
	// allows every string.
	enum                 []string
	minLength, maxLength int // -1: no bound
	hasMin, hasMax       bool
	min, max             int64
}

// annotations are the keywords a flat schema may carry that assert
// nothing: format is an annotation too, as Compile configures the
// validator.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
}

// compileFlat returns the flat check of schema, or nil when schema is not
// flat: any keyword, type or value outside the shape makes it nil, so that
// the validator alone decides.
func compileFlat(schema any) *flatSchema {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	f := &flatSchema{props: map[string]*flatProp{}}
	seenType, seenAdditional := false, false
	for k, v := range root {
		switch k {
		case "$schema":
			if v != Dialect {
				return nil
			}
		case "type":
			if v != "object" {
				return nil
			}
			seenType = true
		case "additionalProperties":
			if v != false {
				return nil
			}
			seenAdditional = true
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, ps := range props {
				p := compileFlatProp(ps)
				if p == nil {
					return nil
				}
				f.props[name] = p
			}
		case "required":
			names, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil
				}
				f.required = append(f.required, s)
			}
		default:
			if !annotations[k] {
				return nil
			}
		}
	}
	if !seenType || !seenAdditional {
		return nil
	}
	return f
}

// compileFlatProp returns the check of one property schema, or nil when it
// is not one of the flat shapes.
func compileFlatProp(schema any) *flatProp {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	p := &flatProp{minLength: -1, maxLength: -1}
	p.typ, _ = m["type"].(string)
	switch p.typ {
	case "string", "integer", "number", "boolean":
	default:
		return nil
	}
	for k, v := range m {
		switch {
		case k == "type":
		case p.typ == "string" && k == "enum":
			vs, ok := v.([]any)
			if !ok || len(vs) == 0 || p.enum != nil {
				return nil
			}
			for _, e := range vs {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				p.enum = append(p.enum, s)
			}
		case p.typ == "string" && k == "const":
			s, ok := v.(string)
			if !ok || p.enum != nil {
				return nil
			}
			p.enum = []string{s}
		case p.typ == "string" && (k == "minLength" || k == "maxLength"):
			n, ok := flatInt(v)
			if !ok || n < 0 || n > 1<<31 {
				return nil
			}
			if k == "minLength" {
				p.minLength = int(n)
			} else {
				p.maxLength = int(n)
			}
		case p.typ == "integer" && (k == "minimum" || k == "maximum"):
			n, ok := flatInt(v)
			if !ok {
				return nil
			}
			if k == "minimum" {
				p.hasMin, p.min = true, n
			} else {
				p.hasMax, p.max = true, n
			}
		case annotations[k]:
		default:
			return nil
		}
	}
	return p
}

// flatInt reads a schema's integer literal: a json.Number (or float64)
// written as a plain decimal integer within int64, nothing else.
func flatInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		return plainInt(string(n))
	case float64:
		if n != float64(int64(n)) || n > 1<<53 || n < -(1<<53) {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// plainInt parses an optional minus sign and decimal digits within int64;
// a fraction, an exponent or an overflow is not a plain integer.
func plainInt(s string) (int64, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// accepts reports whether doc is certainly valid against the flat
// schema. False means only that the validator must decide.
func (f *flatSchema) accepts(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for _, name := range f.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	for name, v := range m {
		p, ok := f.props[name]
		if !ok || !p.accepts(v) {
			return false
		}
	}
	return true
}

// accepts reports whether v certainly satisfies the property's schema.
func (p *flatProp) accepts(v any) bool {
	switch p.typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return false
		}
		if p.enum != nil && !oneOf(s, p.enum) {
			return false
		}
		if p.minLength >= 0 || p.maxLength >= 0 {
			// Lengths count code points; the decoder gives valid UTF-8.
			n := utf8.RuneCountInString(s)
			if p.minLength >= 0 && n < p.minLength || p.maxLength >= 0 && n > p.maxLength {
				return false
			}
		}
		return true
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			return false
		}
		n, ok := plainInt(string(num))
		if !ok {
			return false
		}
		return (!p.hasMin || n >= p.min) && (!p.hasMax || n <= p.max)
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}

func oneOf(s string, set []string) bool {
	for _, e := range set {
		if s == e {
			return true
		}
	}
	return false
}

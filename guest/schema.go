//go:build !guestgen

package guest

import (
	"encoding/json"
	"slices"
	"strconv"
)

// dialect is the $schema of every derived schema root: JSON Schema Draft
// 2020-12.
const dialect = "https://json-schema.org/draft/2020-12/schema"

// schema returns the JSON Schema of a value of n, as a decoded JSON value
// (maps, slices, strings, json.Number, bools). Nested structs are inline.
func (n *node) schema() map[string]any {
	switch n.kind {
	case kindString:
		return map[string]any{"type": "string"}
	case kindBool:
		return map[string]any{"type": "boolean"}
	case kindInt:
		s := map[string]any{"type": "integer"}
		if n.bits < 64 {
			s["minimum"] = json.Number(strconv.FormatInt(-1<<(n.bits-1), 10))
			s["maximum"] = json.Number(strconv.FormatInt(1<<(n.bits-1)-1, 10))
		}
		return s
	case kindUint:
		s := map[string]any{"type": "integer", "minimum": json.Number("0")}
		if n.bits < 64 {
			s["maximum"] = json.Number(strconv.FormatUint(1<<n.bits-1, 10))
		}
		return s
	case kindFloat:
		return map[string]any{"type": "number"}
	case kindBytes:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case kindSlice:
		return map[string]any{"type": "array", "items": n.elem.schema()}
	case kindArray:
		return map[string]any{
			"type": "array", "items": n.elem.schema(),
			"minItems": json.Number(strconv.Itoa(n.length)),
			"maxItems": json.Number(strconv.Itoa(n.length)),
		}
	case kindStruct:
		return n.object("", nil)
	}
	panic("guest: schema of an unknown kind")
}

// object returns the object schema of struct n as operation op sees it
// ("" for every operation). operation, when not nil, replaces the schema
// of the input root's "operation" field.
func (n *node) object(op string, operation map[string]any) map[string]any {
	props := map[string]any{}
	required := []any{}
	for _, f := range n.fields {
		if !f.accepts(op) {
			continue
		}
		var s map[string]any
		if operation != nil && f.name == "operation" {
			s = operation
			if f.c.doc != "" {
				s["description"] = f.c.doc
			}
		} else {
			s = f.schema()
		}
		props[f.name] = s
		if !f.optional() {
			required = append(required, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// schema returns the property schema of f: its type's schema with the
// field's constraints, description and default.
func (f *field) schema() map[string]any {
	s := f.node.schema()
	target := s
	if f.node.kind == kindSlice || f.node.kind == kindArray {
		target = s["items"].(map[string]any)
	}
	c := &f.c
	if len(c.enum) > 0 {
		target["enum"] = slices.Clone(c.enum)
	}
	if c.minimum != "" {
		target["minimum"] = c.minimum
	}
	if c.maximum != "" {
		target["maximum"] = c.maximum
	}
	if c.minLength >= 0 {
		target["minLength"] = json.Number(strconv.Itoa(c.minLength))
	}
	if c.maxLength >= 0 {
		target["maxLength"] = json.Number(strconv.Itoa(c.maxLength))
	}
	if c.pattern != "" {
		target["pattern"] = c.pattern
	}
	if c.minItems >= 0 {
		s["minItems"] = json.Number(strconv.Itoa(c.minItems))
	}
	if c.maxItems >= 0 {
		s["maxItems"] = json.Number(strconv.Itoa(c.maxItems))
	}
	if c.doc != "" {
		s["description"] = c.doc
	}
	if c.writeOnly {
		s["writeOnly"] = true
	}
	if c.hasDef {
		s["default"] = c.def
	}
	return s
}

// inputSchema derives the input schema of a service with operations ops
// from its input root n: one object whose "operation" is an enum (a const
// for one operation) when every operation accepts the same fields;
// otherwise a oneOf of one object per operation under $defs, each with an
// "operation" const and only its fields, with an OpenAPI discriminator.
func inputSchema(n *node, ops []string) map[string]any {
	if n.uniform() {
		operation := map[string]any{"type": "string"}
		if len(ops) == 1 {
			operation["const"] = ops[0]
		} else {
			operation["enum"] = stringsToAny(ops)
		}
		s := n.object("", operation)
		s["$schema"] = dialect
		return s
	}
	defs := map[string]any{}
	mapping := map[string]any{}
	oneOf := []any{}
	for _, op := range ops {
		ref := "#/$defs/" + op
		defs[op] = n.object(op, map[string]any{"type": "string", "const": op})
		mapping[op] = ref
		oneOf = append(oneOf, map[string]any{"$ref": ref})
	}
	return map[string]any{
		"$schema":       dialect,
		"oneOf":         oneOf,
		"discriminator": map[string]any{"propertyName": "operation", "mapping": mapping},
		"$defs":         defs,
	}
}

// outputSchema derives the output schema from the output root n: one
// object when every operation has the same fields; otherwise an anyOf of
// one object per distinct field set under $defs, each named after the
// first operation that has it.
func outputSchema(n *node, ops []string) map[string]any {
	if n.uniform() {
		s := n.object("", nil)
		s["$schema"] = dialect
		return s
	}
	var groups [][]string // operations with the same field set
	key := func(op string) string {
		b := []byte{}
		for _, f := range n.fields {
			if f.accepts(op) {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		}
		return string(b)
	}
	seen := map[string]int{}
	for _, op := range ops {
		k := key(op)
		if i, ok := seen[k]; ok {
			groups[i] = append(groups[i], op)
			continue
		}
		seen[k] = len(groups)
		groups = append(groups, []string{op})
	}
	if len(groups) == 1 {
		s := n.object(ops[0], nil)
		s["$schema"] = dialect
		return s
	}
	defs := map[string]any{}
	anyOf := []any{}
	for _, g := range groups {
		defs[g[0]] = n.object(g[0], nil)
		anyOf = append(anyOf, map[string]any{"$ref": "#/$defs/" + g[0]})
	}
	return map[string]any{"$schema": dialect, "anyOf": anyOf, "$defs": defs}
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// MarshalJSON writes the literal as it is: a number in a schema (a bound,
// an enum value, a default) keeps the text of its tag.
func (n number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

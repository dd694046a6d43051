package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Dialect is the only accepted value of a root's $schema keyword.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Bounds of the profile check.
const (
	// MaxViolations is the most violations a [ProfileError] keeps; Count
	// keeps the total.
	MaxViolations = 32
	// MaxDepth is the deepest nesting of objects and arrays a schema may
	// have, counted as in package wire (a scalar has depth 0, [] depth 1).
	MaxDepth = 64
)

// Reason is the stable code of one profile violation. A Reason is also an
// error, so errors.Is(err, schema.OpenObject) reports whether a
// [*ProfileError] holds that reason.
type Reason string

// The profile violations. Their string values are the stable codes.
const (
	// RootNotObject is reported when a schema root, after following local
	// $refs, is neither an object schema with "type": "object" nor a
	// oneOf/anyOf union of such roots (at the root or the failing member).
	RootNotObject Reason = "root_not_object"
	// OpenObject is reported when an object schema lacks
	// "additionalProperties": false.
	OpenObject Reason = "open_object"
	// OperationMissing is reported when an input root has no "operation"
	// property.
	OperationMissing Reason = "operation_missing"
	// OperationNotRequired is reported when an input root does not require
	// its "operation" property.
	OperationNotRequired Reason = "operation_not_required"
	// OperationNotLiteral is reported when an "operation" schema, local
	// $refs followed, is not a string const nor a non-empty string-only
	// enum, or has a type other than "string".
	OperationNotLiteral Reason = "operation_not_literal"
	// OperationDefault is reported when an "operation" schema, or a schema
	// its $refs lead to, has a default.
	OperationDefault Reason = "operation_default"
	// OperationUndeclared is reported when the input schema accepts an
	// operation that no operation policy declares (at the const or enum
	// entry).
	OperationUndeclared Reason = "operation_undeclared"
	// OperationUnreachable is reported when a declared operation policy is
	// accepted by no input root (at "operations/<index>"). It is not
	// reported when some input root could not be decided.
	OperationUnreachable Reason = "operation_unreachable"
	// OperationDuplicate is reported when an operation name is declared a
	// second time (at "operations/<index>").
	OperationDuplicate Reason = "operation_duplicate"
	// RefNotLocal is reported when a $ref or discriminator mapping value is
	// not "#" or a "#/..." JSON pointer: a URL, a relative path, an anchor.
	RefNotLocal Reason = "ref_not_local"
	// RefUnresolved is reported when a local reference is not a valid
	// pointer or does not lead to a schema (an object or a boolean) in its
	// own document.
	RefUnresolved Reason = "ref_unresolved"
	// ForbiddenKeyword is reported when a schema uses $id, $dynamicRef or
	// $recursiveRef.
	ForbiddenKeyword Reason = "forbidden_keyword"
	// DialectMissing is reported when a root has no $schema.
	DialectMissing Reason = "dialect_missing"
	// DialectMismatch is reported when a root's $schema is not [Dialect].
	DialectMismatch Reason = "dialect_mismatch"
	// InvalidSchema is reported when the validator refuses to compile a
	// schema: at each location the Draft 2020-12 metaschema refuses, or at
	// the root for any other compiler refusal.
	InvalidSchema Reason = "invalid_schema"
	// TooDeep is reported when a schema nests deeper than [MaxDepth]; such a
	// schema is not compiled.
	TooDeep Reason = "too_deep"
)

// Reasons lists every [Reason].
var Reasons = []Reason{
	RootNotObject, OpenObject,
	OperationMissing, OperationNotRequired, OperationNotLiteral, OperationDefault,
	OperationUndeclared, OperationUnreachable, OperationDuplicate,
	RefNotLocal, RefUnresolved, ForbiddenKeyword,
	DialectMissing, DialectMismatch, InvalidSchema, TooDeep,
}

// Error returns the reason code.
func (r Reason) Error() string { return string(r) }

// Violation is one refusal of the profile check.
type Violation struct {
	Reason Reason `json:"reason"`
	// Path locates the violation: "input" or "output" followed by a JSON
	// pointer into that schema ("input/$defs/Plan/properties/operation"),
	// or "operations/<index>" for an entry of the declared operations.
	Path string `json:"path"`
}

// ProfileError is returned by [Check] and [Compile] when a schema is
// refused. It holds every violation found, bounded.
type ProfileError struct {
	// Violations are the first [MaxViolations] violations, each once, in
	// a deterministic order: those of the input schema, then those of the
	// output schema, then those of the declared operations.
	Violations []Violation `json:"violations"`
	// Count is the total number of violations found.
	Count int `json:"violation_count"`

	reasons map[Reason]bool // every reason found, kept or not
}

// Error describes the first violation and the count.
func (e *ProfileError) Error() string {
	if len(e.Violations) == 0 {
		return "schema profile refused"
	}
	v := e.Violations[0]
	s := fmt.Sprintf("schema profile refused: %s at %s", v.Reason, v.Path)
	if e.Count > 1 {
		s += fmt.Sprintf(" (and %d more)", e.Count-1)
	}
	return s
}

// Has reports whether any violation found, kept or not, has reason r.
func (e *ProfileError) Has(r Reason) bool { return e.reasons[r] }

// Is reports whether target is a [Reason] that e has.
func (e *ProfileError) Is(target error) bool {
	r, ok := target.(Reason)
	return ok && e.Has(r)
}

// collector accumulates violations, deduplicated and bounded.
type collector struct {
	kept    []Violation
	count   int
	seen    map[Violation]bool
	reasons map[Reason]bool
}

func (c *collector) add(r Reason, path string) {
	v := Violation{Reason: r, Path: path}
	if c.seen == nil {
		c.seen, c.reasons = map[Violation]bool{}, map[Reason]bool{}
	}
	if c.seen[v] {
		return
	}
	if len(c.seen) < 4*MaxViolations {
		c.seen[v] = true // bounded memory; late duplicates may count twice
	}
	c.count++
	c.reasons[r] = true
	if len(c.kept) < MaxViolations {
		c.kept = append(c.kept, v)
	}
}

func (c *collector) err() error {
	if c.count == 0 {
		return nil
	}
	return &ProfileError{Violations: c.kept, Count: c.count, reasons: c.reasons}
}

// Check reports whether an input and output schema pair, with the names of
// the service's operation policies, satisfies the contract's schema
// profile. It returns nil or a [*ProfileError] holding every violation.
//
// The schemas are decoded JSON values as package wire produces them. Check
// does not modify them, performs no I/O, and terminates on any value,
// including one nested deeper than [MaxDepth] or a cyclic Go value.
func Check(input, output any, operations []string) error {
	var c collector
	in := &document{name: "input", root: input, c: &c}
	out := &document{name: "output", root: output, c: &c}

	in.check()
	ops, complete := in.operations()
	out.check()
	out.objectRoots()

	// The operation set.
	declared := map[string]bool{}
	for i, name := range operations {
		if declared[name] {
			c.add(OperationDuplicate, "operations/"+strconv.Itoa(i))
		}
		declared[name] = true
	}
	for _, op := range ops {
		if !declared[op.name] {
			c.add(OperationUndeclared, op.path)
		}
	}
	if complete {
		reachable := map[string]bool{}
		for _, op := range ops {
			reachable[op.name] = true
		}
		for i, name := range operations {
			if !reachable[name] {
				c.add(OperationUnreachable, "operations/"+strconv.Itoa(i))
			}
		}
	}
	return c.err()
}

// document is one schema under check.
type document struct {
	name string // "input" or "output"
	root any
	c    *collector

	visited map[string]bool // pointers walked as schemas
	queue   [][]string      // $ref targets still to walk
	// structural is set by violations that also make the compiler fail
	// (references, forbidden keywords, a foreign dialect): the compiler's
	// own error then adds nothing and is not reported.
	structural bool
	deep       bool
}

func (d *document) path(segs []string) string { return d.name + pointer(segs) }

func (d *document) add(r Reason, segs []string) { d.c.add(r, d.path(segs)) }

// check runs every per-document rule except the root shape.
func (d *document) check() {
	if at, deep := tooDeep(d.root, MaxDepth); deep {
		d.deep = true
		d.add(TooDeep, at)
	}
	if m, ok := d.root.(map[string]any); ok {
		if s, has := m["$schema"]; !has {
			d.add(DialectMissing, nil)
		} else if s != Dialect {
			d.structural = true
			d.add(DialectMismatch, []string{"$schema"})
		}
	} else {
		d.add(DialectMissing, nil)
	}

	d.visited = map[string]bool{}
	d.walk(d.root, nil)
	for len(d.queue) > 0 {
		at := d.queue[0]
		d.queue = d.queue[1:]
		if v, ok := resolve(d.root, at); ok {
			d.walk(v, at)
		}
	}

	if d.deep {
		return // the compiler would recurse without bound on a cyclic value
	}
	if _, vs, err := compile(d.root); err != nil {
		for _, at := range vs {
			d.add(InvalidSchema, at)
		}
		if len(vs) == 0 && !d.structural {
			d.add(InvalidSchema, nil)
		}
	}
}

// Keyword classes of Draft 2020-12 (plus the older definitions,
// dependencies, additionalItems and array-form items), by the shape of
// their value. Keywords not listed take data or annotations, never schemas:
// const, enum, default, examples and unknown keywords are not walked.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "items": true, "contains": true,
		"not": true, "if": true, "then": true, "else": true,
		"propertyNames": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "additionalItems": true,
		"contentSchema": true,
	}
	schemaArrayKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
		"items": true,
	}
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true,
	}
	forbiddenKeywords = []string{"$dynamicRef", "$id", "$recursiveRef"}
)

// walk checks the schema v at segs and its subschemas.
func (d *document) walk(v any, segs []string) {
	key := pointer(segs)
	if d.visited[key] || len(segs) > MaxDepth {
		return
	}
	d.visited[key] = true
	m, ok := v.(map[string]any)
	if !ok {
		return // a boolean schema, or a non-schema the metaschema refuses
	}

	for _, kw := range forbiddenKeywords {
		if _, has := m[kw]; has {
			d.structural = true
			d.add(ForbiddenKeyword, child(segs, kw))
		}
	}
	if ref, has := m["$ref"]; has {
		if s, ok := ref.(string); ok {
			d.ref(s, child(segs, "$ref"))
		} // a non-string $ref is refused by the metaschema
	}
	if disc, ok := m["discriminator"].(map[string]any); ok {
		if mapping, ok := disc["mapping"].(map[string]any); ok {
			for _, k := range sortedKeys(mapping) {
				at := child(segs, "discriminator", "mapping", k)
				if s, ok := mapping[k].(string); ok {
					d.ref(s, at)
				} else {
					d.structural = true
					d.add(RefUnresolved, at)
				}
			}
		}
	}
	if isObjectSchema(m) && m["additionalProperties"] != false {
		d.add(OpenObject, segs)
	}

	for _, kw := range sortedKeys(m) {
		val := m[kw]
		switch arr, isArr := val.([]any); {
		case isArr && schemaArrayKeywords[kw]:
			for i, e := range arr {
				d.walk(e, child(segs, kw, strconv.Itoa(i)))
			}
		case schemaKeywords[kw]:
			d.walk(val, child(segs, kw))
		case schemaMapKeywords[kw]:
			if sub, ok := val.(map[string]any); ok {
				for _, name := range sortedKeys(sub) {
					if kw == "dependencies" {
						if _, isList := sub[name].([]any); isList {
							continue // a property dependency, not a schema
						}
					}
					d.walk(sub[name], child(segs, kw, name))
				}
			}
		}
	}
}

// ref checks one reference found at segs and queues its target.
func (d *document) ref(ref string, segs []string) {
	toks, kind := parseRef(ref)
	switch kind {
	case refNotLocal:
		d.structural = true
		d.add(RefNotLocal, segs)
		return
	case refMalformed:
		d.structural = true
		d.add(RefUnresolved, segs)
		return
	}
	target, ok := resolve(d.root, toks)
	switch target.(type) {
	case map[string]any, bool:
	default:
		ok = false
	}
	if !ok {
		d.structural = true
		d.add(RefUnresolved, segs)
		return
	}
	if !d.visited[pointer(toks)] {
		d.queue = append(d.queue, toks)
	}
}

// isObjectSchema reports whether m describes objects: its type is or
// includes "object", or it has no type but properties, patternProperties
// or required.
func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	case nil:
		if _, has := m["type"]; has {
			return false
		}
		for _, kw := range []string{"properties", "patternProperties", "required"} {
			if _, has := m[kw]; has {
				return true
			}
		}
	}
	return false
}

// isObjectRoot reports whether m's type is exactly "object": a root must
// refuse every value that is not an object.
func isObjectRoot(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 1 && t[0] == "object"
	}
	return false
}

// maxRootVisits bounds the schemas visited to find the object roots, so
// that nested unions of references cannot take exponential time.
const maxRootVisits = 1024

// located is a schema and where it is.
type located struct {
	m    map[string]any
	segs []string
}

// objectRoots returns the object roots of the document: the root itself, or
// the members of its oneOf/anyOf union, local $refs followed. A member that
// is not an object root is reported. complete is false when a root could not
// be decided (a broken reference, reported by the walk, or a refusal).
func (d *document) objectRoots() (roots []located, complete bool) {
	complete = true
	onPath := map[string]bool{} // the references being followed: a cycle
	visits := 0
	var visit func(v any, segs []string)
	visit = func(v any, segs []string) {
		key := pointer(segs)
		visits++
		if onPath[key] || visits > maxRootVisits || len(segs) > MaxDepth {
			complete = false
			d.add(RootNotObject, segs)
			return
		}
		onPath[key] = true
		defer delete(onPath, key)
		m, ok := v.(map[string]any)
		if !ok {
			complete = false
			d.add(RootNotObject, segs)
			return
		}
		if isObjectRoot(m) {
			roots = append(roots, located{m, segs})
			return
		}
		if _, has := m["type"]; has {
			complete = false
			d.add(RootNotObject, segs)
			return
		}
		for _, kw := range []string{"oneOf", "anyOf"} {
			if members, ok := m[kw].([]any); ok && len(members) > 0 {
				for i, e := range members {
					visit(e, child(segs, kw, strconv.Itoa(i)))
				}
				return
			}
		}
		if ref, ok := m["$ref"].(string); ok {
			toks, kind := parseRef(ref)
			if kind != refLocal {
				complete = false // reported by the walk
				return
			}
			target, ok := resolve(d.root, toks)
			if !ok {
				complete = false // reported by the walk
				return
			}
			visit(target, toks)
			return
		}
		complete = false
		d.add(RootNotObject, segs)
	}
	visit(d.root, nil)
	return roots, complete
}

// operation is one operation name an input root accepts and where the
// schema says so.
type operation struct {
	name string
	path string
}

// operations checks the operation property of every input root and returns
// the operations they accept, each once, in the order found. complete is
// false when some root's operations could not be decided.
func (d *document) operations() (ops []operation, complete bool) {
	roots, complete := d.objectRoots()
	found := map[string]bool{}
	for _, r := range roots {
		props, _ := r.m["properties"].(map[string]any)
		opSchema, has := props["operation"]
		if !has {
			complete = false
			d.add(OperationMissing, r.segs)
			continue
		}
		opSegs := child(r.segs, "properties", "operation")
		req, _ := r.m["required"].([]any)
		if !slices.Contains(req, any("operation")) {
			d.add(OperationNotRequired, opSegs)
		}
		names, ok := d.literal(opSchema, opSegs)
		if !ok {
			complete = false
			continue
		}
		for _, n := range names {
			if !found[n.name] {
				found[n.name] = true
				ops = append(ops, n)
			}
		}
	}
	return ops, complete
}

// literal returns the string literals an operation schema accepts,
// following local $refs, and reports a default on the way.
func (d *document) literal(v any, segs []string) ([]operation, bool) {
	seen := map[string]bool{}
	for {
		key := pointer(segs)
		m, ok := v.(map[string]any)
		if !ok || seen[key] {
			d.add(OperationNotLiteral, segs)
			return nil, false
		}
		seen[key] = true
		if _, has := m["default"]; has {
			d.add(OperationDefault, child(segs, "default"))
		}
		_, hasConst := m["const"]
		_, hasEnum := m["enum"]
		if ref, isRef := m["$ref"].(string); isRef && !hasConst && !hasEnum {
			toks, kind := parseRef(ref)
			if kind != refLocal {
				return nil, false // reported by the walk
			}
			if v, ok = resolve(d.root, toks); !ok {
				return nil, false // reported by the walk
			}
			segs = toks
			continue
		}
		if t, has := m["type"]; has && t != "string" {
			d.add(OperationNotLiteral, segs)
			return nil, false
		}
		var ops []operation
		if c, ok := m["const"].(string); ok {
			ops = []operation{{c, d.path(child(segs, "const"))}}
			if hasEnum {
				enum, _ := m["enum"].([]any)
				if !slices.Contains(enum, any(c)) {
					ops = nil
				}
			}
		} else if enum, ok := m["enum"].([]any); ok && !hasConst {
			for i, e := range enum {
				s, ok := e.(string)
				if !ok {
					ops = nil
					break
				}
				ops = append(ops, operation{s, d.path(child(segs, "enum", strconv.Itoa(i)))})
			}
		}
		if len(ops) == 0 {
			d.add(OperationNotLiteral, segs)
			return nil, false
		}
		return ops, true
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

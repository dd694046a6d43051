package guest

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// kind is what a Go type is in JSON.
type kind uint8

const (
	kindString kind = iota + 1
	kindBool
	kindInt   // signed integers
	kindUint  // unsigned integers
	kindFloat // float32, float64
	kindBytes // []byte, as a base64 string
	kindSlice
	kindArray
	kindStruct
)

// node is the SDK's model of one Go type: what its schema is derived
// from, parameters are decoded into and results are encoded from. The
// three always agree because they read the same node.
type node struct {
	kind   kind
	typ    reflect.Type
	bits   int      // size of kindInt, kindUint and kindFloat
	elem   *node    // kindSlice and kindArray
	length int      // kindArray
	fields []*field // kindStruct, in declaration order, embedded structs flattened
	byName map[string]*field
	size   uintptr // typ.Size(), for the items of a slice or array
	// accepts marks, per operation, the fields of a service root that
	// the operation has (indexed as fields); nil when all have every field.
	accepts map[string][]bool
}

// field is one JSON member of a struct.
type field struct {
	name      string  // JSON name
	where     string  // Type.Field, for declaration errors
	index     []int   // for reflect.Value.FieldByIndex
	offset    uintptr // from the start of the outermost struct (embedded structs are values)
	pointer   bool    // the Go type is *T; node is T's
	omitEmpty bool
	omitZero  bool
	ops       []string // operations that accept the field; nil: all
	node      *node
	c         constraints
}

// optional reports whether the field may be absent: a pointer, omitempty
// or omitzero field.
func (f *field) optional() bool { return f.pointer || f.omitEmpty || f.omitZero }

// accepts reports whether operation op (or "", any) has the field.
func (f *field) accepts(op string) bool {
	return op == "" || f.ops == nil || slices.Contains(f.ops, op)
}

// acceptTables fills n.accepts for a service root with operations ops.
func (n *node) acceptTables(ops []string) {
	if n.uniform() {
		return
	}
	n.accepts = make(map[string][]bool, len(ops))
	for _, op := range ops {
		t := make([]bool, len(n.fields))
		for k, f := range n.fields {
			t[k] = f.accepts(op)
		}
		n.accepts[op] = t
	}
}

// constraints are a field's schema tags. Scalar constraints on a slice or
// array field apply to its items.
type constraints struct {
	doc                  string
	enum                 []any       // string or json.Number
	minimum, maximum     json.Number // "" when absent
	minLength, maxLength int         // -1 when absent
	minItems, maxItems   int         // -1 when absent
	pattern              string
	def                  any // decoded default; hasDef says whether there is one
	hasDef               bool
}

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// ownEncoding reports whether t (or *t) encodes itself in JSON or text.
func ownEncoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	for _, i := range []reflect.Type{jsonMarshaler, jsonUnmarshaler, textMarshaler, textUnmarshaler} {
		if p.Implements(i) {
			return true
		}
	}
	return false
}

// typeName names t for declaration errors.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// builder turns Go types into nodes.
type builder struct {
	ops    []string       // the service's operations, for ops tags
	checks bool           // full checks (describe); compute skips the costly ones
	stack  []reflect.Type // structs being built, to refuse recursive types
}

// root builds the input or output type of a service: a struct whose fields
// may carry ops tags.
func (b *builder) root(t reflect.Type) (*node, error) {
	if t.Kind() != reflect.Struct || ownEncoding(t) {
		return nil, fmt.Errorf("%s must be a plain struct type", typeName(t))
	}
	return b.structNode(t, true)
}

// build returns the node of t, which is not a service root.
func (b *builder) build(t reflect.Type, where string) (*node, error) {
	if ownEncoding(t) {
		return nil, fmt.Errorf("%s: %s encodes itself (MarshalJSON, UnmarshalJSON or text methods); the SDK derives schemas from plain types only", where, typeName(t))
	}
	n := &node{typ: t, size: t.Size()}
	switch t.Kind() {
	case reflect.String:
		n.kind = kindString
	case reflect.Bool:
		n.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits = kindInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n.kind, n.bits = kindUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		n.kind, n.bits = kindFloat, t.Bits()
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			n.kind = kindBytes
			break
		}
		elem, err := b.build(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		n.kind, n.elem = kindSlice, elem
	case reflect.Array:
		elem, err := b.build(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		n.kind, n.elem, n.length = kindArray, elem, t.Len()
	case reflect.Struct:
		return b.structNode(t, false)
	case reflect.Map:
		return nil, fmt.Errorf("%s: maps are not supported: the schema profile forbids open objects; use a struct, or a slice of key/value structs", where)
	case reflect.Pointer:
		return nil, fmt.Errorf("%s: a pointer is supported only as a struct field's own type (an optional field)", where)
	case reflect.Interface:
		return nil, fmt.Errorf("%s: interface type %s has no schema", where, typeName(t))
	default:
		return nil, fmt.Errorf("%s: type %s is not supported", where, t)
	}
	return n, nil
}

// structNode builds a struct; root says whether it is a service root.
func (b *builder) structNode(t reflect.Type, root bool) (*node, error) {
	n := &node{kind: kindStruct, typ: t, byName: map[string]*field{}, size: t.Size()}
	if err := b.collect(n, t, nil, 0, root); err != nil {
		return nil, err
	}
	return n, nil
}

// collect adds t's fields to n, flattening embedded structs the way
// encoding/json does. t starts at offset base in n's struct.
func (b *builder) collect(n *node, t reflect.Type, index []int, base uintptr, root bool) error {
	if slices.Contains(b.stack, t) {
		return fmt.Errorf("%s: recursive types are not supported", typeName(t))
	}
	b.stack = append(b.stack, t)
	defer func() { b.stack = b.stack[:len(b.stack)-1] }()

	for i := range t.NumField() {
		sf := t.Field(i)
		where := typeName(t) + "." + sf.Name
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(slices.Clip(index), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				return fmt.Errorf("%s: embedded pointers are not supported; embed the struct itself", where)
			}
			if ft.Kind() == reflect.Struct {
				if ownEncoding(ft) {
					return fmt.Errorf("%s: embedded %s encodes itself; the SDK derives schemas from plain types only", where, typeName(ft))
				}
				if hasTag || sf.Tag != "" {
					return fmt.Errorf("%s: an embedded struct takes no tags (its fields are flattened)", where)
				}
				if err := b.collect(n, ft, idx, base+sf.Offset, root); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := &field{name: name, where: where, index: idx, offset: base + sf.Offset}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			default:
				return fmt.Errorf("%s: json option %q is not supported", where, o)
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.pointer, ft = true, ft.Elem()
		}
		node, err := b.build(ft, where)
		if err != nil {
			return err
		}
		f.node = node
		if err := b.tags(f, sf.Tag, root); err != nil {
			return err
		}
		if _, dup := n.byName[name]; dup {
			return fmt.Errorf("%s: JSON name %q is used twice in %s", where, name, typeName(n.typ))
		}
		n.byName[name] = f
		n.fields = append(n.fields, f)
	}
	return nil
}

// tags reads a field's ops and constraint tags.
func (b *builder) tags(f *field, tag reflect.StructTag, root bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", f.where, fmt.Sprintf(format, args...))
	}
	if ops, ok := tag.Lookup("ops"); ok {
		if !root {
			return bad("the ops tag is allowed only on fields of a service's input or output type itself")
		}
		list := strings.Split(ops, ",")
		for i, op := range list {
			if !slices.Contains(b.ops, op) {
				return bad("ops names %q, which is not one of the service's operations", op)
			}
			if slices.Contains(list[:i], op) {
				return bad("ops names %q twice", op)
			}
		}
		if len(list) < len(b.ops) {
			f.ops = list
		}
	}

	// Scalar constraints go to the items of a slice or array.
	target := f.node
	if target.kind == kindSlice || target.kind == kindArray {
		target = target.elem
	}
	scalar := func(name string, kinds ...kind) error {
		if !slices.Contains(kinds, target.kind) {
			return bad("the %s tag does not apply to %s", name, target.typ)
		}
		return nil
	}
	c := &f.c
	c.minLength, c.maxLength, c.minItems, c.maxItems = -1, -1, -1, -1
	c.doc = tag.Get("doc")

	if v, ok := tag.Lookup("enum"); ok {
		if err := scalar("enum", kindString, kindInt, kindUint); err != nil {
			return err
		}
		for i, s := range strings.Split(v, ",") {
			lit, err := scalarLiteral(target, s)
			if err != nil {
				return bad("enum value %d: %v", i, err)
			}
			if slices.Contains(c.enum, lit) {
				return bad("enum lists %q twice", s)
			}
			c.enum = append(c.enum, lit)
		}
	}
	for _, bound := range []struct {
		name string
		dst  *json.Number
	}{{"minimum", &c.minimum}, {"maximum", &c.maximum}} {
		v, ok := tag.Lookup(bound.name)
		if !ok {
			continue
		}
		if err := scalar(bound.name, kindInt, kindUint, kindFloat); err != nil {
			return err
		}
		lit, err := scalarLiteral(target, v)
		if err != nil {
			return bad("%s: %v", bound.name, err)
		}
		*bound.dst = lit.(json.Number)
	}
	if c.minimum != "" && c.maximum != "" && compareNumbers(c.minimum, c.maximum) > 0 {
		return bad("minimum is greater than maximum")
	}
	for _, size := range []struct {
		name  string
		dst   *int
		kinds []kind
		on    *node
	}{
		{"minLength", &c.minLength, []kind{kindString}, target},
		{"maxLength", &c.maxLength, []kind{kindString}, target},
		{"minItems", &c.minItems, []kind{kindSlice}, f.node},
		{"maxItems", &c.maxItems, []kind{kindSlice}, f.node},
	} {
		v, ok := tag.Lookup(size.name)
		if !ok {
			continue
		}
		if !slices.Contains(size.kinds, size.on.kind) {
			return bad("the %s tag does not apply to %s", size.name, size.on.typ)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || strconv.Itoa(n) != v {
			return bad("%s must be a non-negative integer", size.name)
		}
		*size.dst = n
	}
	if c.minLength >= 0 && c.maxLength >= 0 && c.minLength > c.maxLength {
		return bad("minLength is greater than maxLength")
	}
	if c.minItems >= 0 && c.maxItems >= 0 && c.minItems > c.maxItems {
		return bad("minItems is greater than maxItems")
	}
	if v, ok := tag.Lookup("pattern"); ok {
		if err := scalar("pattern", kindString); err != nil {
			return err
		}
		if b.checks {
			if _, err := regexp.Compile(v); err != nil {
				return bad("pattern does not compile")
			}
		}
		c.pattern = v
	}
	if v, ok := tag.Lookup("default"); ok {
		if err := b.defaultValue(f, v); err != nil {
			return bad("default: %v", err)
		}
	}
	return nil
}

// defaultValue reads a default tag: the bare text for a string field, a
// JSON literal otherwise. A default belongs to an optional field only: the
// SDK never injects it, so the tool applies it when the field is absent.
func (b *builder) defaultValue(f *field, v string) error {
	if !f.optional() {
		return errors.New("a default needs an optional field (a pointer, omitempty or omitzero): a required field is always sent")
	}
	var val any
	if f.node.kind == kindString {
		val = v
	} else {
		parsed, err := parseJSON([]byte(v), maxDepth)
		if err != nil {
			return errors.New("not a JSON literal")
		}
		val = parsed
	}
	if b.checks {
		dst := reflect.New(f.node.typ).Elem()
		if err := assign(dst, f.node, val, "", nil); err != nil {
			return errors.New(err.reason)
		}
		if err := f.c.admits(f.node, val); err != nil {
			return err
		}
	}
	f.c.def, f.c.hasDef = val, true
	return nil
}

// admits checks a decoded value of the field's type (a default) against
// the constraints; the type itself was checked by decoding it.
func (c *constraints) admits(n *node, v any) error {
	if n.kind == kindSlice || n.kind == kindArray {
		items := v.([]any)
		if c.minItems >= 0 && len(items) < c.minItems || c.maxItems >= 0 && len(items) > c.maxItems {
			return errors.New("item count out of bounds")
		}
		for _, item := range items {
			if err := c.admitsScalar(item); err != nil {
				return err
			}
		}
		return nil
	}
	return c.admitsScalar(v)
}

func (c *constraints) admitsScalar(v any) error {
	if len(c.enum) > 0 {
		ok := false
		for _, e := range c.enum {
			if n, isNum := v.(json.Number); isNum {
				if en, ok2 := e.(json.Number); ok2 && compareNumbers(n, en) == 0 {
					ok = true
				}
			} else if e == v {
				ok = true
			}
		}
		if !ok {
			return errors.New("not one of the enum values")
		}
	}
	if n, ok := v.(json.Number); ok {
		if c.minimum != "" && compareNumbers(n, c.minimum) < 0 || c.maximum != "" && compareNumbers(n, c.maximum) > 0 {
			return errors.New("out of the minimum/maximum bounds")
		}
	}
	if s, ok := v.(string); ok {
		l := len([]rune(s))
		if c.minLength >= 0 && l < c.minLength || c.maxLength >= 0 && l > c.maxLength {
			return errors.New("length out of the minLength/maxLength bounds")
		}
		if c.pattern != "" {
			if re, err := regexp.Compile(c.pattern); err == nil && !re.MatchString(s) {
				return errors.New("does not match the pattern")
			}
		}
	}
	return nil
}

// scalarLiteral reads a tag value for a scalar of node n: the bare text
// for a string, an integer literal in range for an integer, a finite JSON
// number for a float.
func scalarLiteral(n *node, s string) (any, error) {
	switch n.kind {
	case kindString:
		return s, nil
	case kindInt:
		if _, err := strconv.ParseInt(s, 10, n.bits); err != nil || !validNumber(s) {
			return nil, fmt.Errorf("%q is not an integer in the range of %s", s, n.typ)
		}
		return json.Number(s), nil
	case kindUint:
		if _, err := strconv.ParseUint(s, 10, n.bits); err != nil || !validNumber(s) {
			return nil, fmt.Errorf("%q is not an integer in the range of %s", s, n.typ)
		}
		return json.Number(s), nil
	case kindFloat:
		if _, err := strconv.ParseFloat(s, n.bits); err != nil || !validNumber(s) {
			return nil, fmt.Errorf("%q is not a finite JSON number", s)
		}
		return json.Number(s), nil
	}
	return nil, fmt.Errorf("no literal for %s", n.typ)
}

// compareNumbers compares two JSON number literals exactly. Both must be
// valid literals of bounded exponent (tag values and checked defaults).
func compareNumbers(a, b json.Number) int {
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	if !okx || !oky {
		return strings.Compare(string(a), string(b))
	}
	return x.Cmp(y)
}

// validNumber reports whether s is a JSON number literal.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

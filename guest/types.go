package guest

import (
	"encoding"
	"errors"
	"reflect"
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

// uniform reports whether every operation accepts the same fields of n.
func (n *node) uniform() bool {
	for _, f := range n.fields {
		if f.ops != nil {
			return false
		}
	}
	return true
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
	enum                 []any  // string or number
	minimum, maximum     number // "" when absent
	minLength, maxLength int    // -1 when absent
	minItems, maxItems   int    // -1 when absent
	pattern              string
	def                  any // decoded default; hasDef says whether there is one
	hasDef               bool
	// writeOnly marks a secret (a password): the host never echoes,
	// logs or keeps it in clear (JSON Schema's writeOnly).
	writeOnly bool
}

// The methods of a type that encodes itself: encoding/json's Marshaler
// and Unmarshaler (declared here so that the SDK does not import
// encoding/json) and encoding's text ones.
type (
	jsonMarshalerMethod   interface{ MarshalJSON() ([]byte, error) }
	jsonUnmarshalerMethod interface{ UnmarshalJSON([]byte) error }
)

var (
	jsonMarshaler   = reflect.TypeFor[jsonMarshalerMethod]()
	jsonUnmarshaler = reflect.TypeFor[jsonUnmarshalerMethod]()
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
		return nil, errors.New(typeName(t) + " must be a plain struct type")
	}
	return b.structNode(t, true)
}

// build returns the node of t, which is not a service root.
func (b *builder) build(t reflect.Type, where string) (*node, error) {
	if ownEncoding(t) {
		return nil, errors.New(where + ": " + typeName(t) + " encodes itself (MarshalJSON, UnmarshalJSON or text methods); the SDK derives schemas from plain types only")
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
		return nil, errors.New(where + ": maps are not supported: the schema profile forbids open objects; use a struct, or a slice of key/value structs")
	case reflect.Pointer:
		return nil, errors.New(where + ": a pointer is supported only as a struct field's own type (an optional field)")
	case reflect.Interface:
		return nil, errors.New(where + ": interface type " + typeName(t) + " has no schema")
	default:
		return nil, errors.New(where + ": type " + t.String() + " is not supported")
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
		return errors.New(typeName(t) + ": recursive types are not supported")
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
				return errors.New(where + ": embedded pointers are not supported; embed the struct itself")
			}
			if ft.Kind() == reflect.Struct {
				if ownEncoding(ft) {
					return errors.New(where + ": embedded " + typeName(ft) + " encodes itself; the SDK derives schemas from plain types only")
				}
				if hasTag || sf.Tag != "" {
					return errors.New(where + ": an embedded struct takes no tags (its fields are flattened)")
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
				return errors.New(where + ": json option " + strconv.Quote(o) + " is not supported")
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
		if err := b.opsTag(f, sf.Tag, root); err != nil {
			return err
		}
		f.c = constraints{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
		if err := b.constraintTags(f, sf.Tag); err != nil {
			return err
		}
		if _, dup := n.byName[name]; dup {
			return errors.New(where + ": JSON name " + strconv.Quote(name) + " is used twice in " + typeName(n.typ))
		}
		n.byName[name] = f
		n.fields = append(n.fields, f)
	}
	return nil
}

// opsTag reads a field's ops tag.
func (b *builder) opsTag(f *field, tag reflect.StructTag, root bool) error {
	ops, ok := tag.Lookup("ops")
	if !ok {
		return nil
	}
	if !root {
		return errors.New(f.where + ": the ops tag is allowed only on fields of a service's input or output type itself")
	}
	list := strings.Split(ops, ",")
	for i, op := range list {
		if !slices.Contains(b.ops, op) {
			return errors.New(f.where + ": ops names " + strconv.Quote(op) + ", which is not one of the service's operations")
		}
		if slices.Contains(list[:i], op) {
			return errors.New(f.where + ": ops names " + strconv.Quote(op) + " twice")
		}
	}
	if len(list) < len(b.ops) {
		f.ops = list
	}
	return nil
}

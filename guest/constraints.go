//go:build !guestgen

package guest

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The constraint tags and the checks of defaults, which only describe
// needs: a build with -tags guestgen takes its declaration from guestgen's
// output and links none of this (nor fmt, regexp or math/big).

// constraintTags reads a field's constraint tags (doc, enum, minimum,
// maximum, minLength, maxLength, minItems, maxItems, pattern, default,
// writeOnly).
// Only describe uses them: a guestgen build (describe_static.go) reads
// none.
func (b *builder) constraintTags(f *field, tag reflect.StructTag) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", f.where, fmt.Sprintf(format, args...))
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
	c.doc = tag.Get("doc")
	if v, ok := tag.Lookup("writeOnly"); ok {
		if v != "true" {
			return bad("the writeOnly tag is \"true\" or absent, not %q", v)
		}
		c.writeOnly = true
	}

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
		dst  *number
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
		*bound.dst = lit.(number)
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
			if n, isNum := v.(number); isNum {
				if en, ok2 := e.(number); ok2 && compareNumbers(n, en) == 0 {
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
	if n, ok := v.(number); ok {
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
		return number(s), nil
	case kindUint:
		if _, err := strconv.ParseUint(s, 10, n.bits); err != nil || !validNumber(s) {
			return nil, fmt.Errorf("%q is not an integer in the range of %s", s, n.typ)
		}
		return number(s), nil
	case kindFloat:
		if _, err := strconv.ParseFloat(s, n.bits); err != nil || !validNumber(s) {
			return nil, fmt.Errorf("%q is not a finite JSON number", s)
		}
		return number(s), nil
	}
	return nil, fmt.Errorf("no literal for %s", n.typ)
}

// compareNumbers compares two JSON number literals exactly. Both must be
// valid literals of bounded exponent (tag values and checked defaults).
func compareNumbers(a, b number) int {
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

// Package jsondiff computes the structural difference of two JSON
// documents as an RFC 6902 JSON Patch: the operations that turn the first
// into the second. Objects are compared member by member; arrays element
// by element after their common start and end are set aside, so that one
// insertion or removal is one operation; values of different types, and
// different scalars, are replaced. Numbers are equal when their values are
// (1.0 and 1 are the same number, as RFC 6902 §4.6 compares them).
package jsondiff

import (
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// Op is one JSON Patch operation: add, remove or replace, at Path (a JSON
// Pointer, RFC 6901), with Value for add and replace.
type Op struct {
	Op    string
	Path  string
	Value *jsontree.Value
}

// Diff returns the operations that turn a into b, in the order they apply;
// none when a and b are equal.
func Diff(a, b jsontree.Value) []Op {
	d := &differ{}
	d.diff(a, b, "")
	return d.ops
}

// Patch returns ops as a JSON Patch document (an array of operation
// objects, "op", "path" and "value" in that order).
func Patch(ops []Op) jsontree.Value {
	p := jsontree.Value{Kind: jsontree.Array, Items: make([]jsontree.Value, len(ops))}
	for i, op := range ops {
		o := jsontree.Value{Kind: jsontree.Object, Members: []jsontree.Member{
			{Key: "op", Value: jsontree.Value{Kind: jsontree.String, Text: op.Op}},
			{Key: "path", Value: jsontree.Value{Kind: jsontree.String, Text: op.Path}},
		}}
		if op.Value != nil {
			o.Members = append(o.Members, jsontree.Member{Key: "value", Value: *op.Value})
		}
		p.Items[i] = o
	}
	return p
}

type differ struct{ ops []Op }

func (d *differ) add(op, path string, v *jsontree.Value) {
	d.ops = append(d.ops, Op{Op: op, Path: path, Value: v})
}

func (d *differ) diff(a, b jsontree.Value, path string) {
	switch {
	case a.Kind == jsontree.Object && b.Kind == jsontree.Object:
		for _, m := range a.Members {
			if bv, ok := b.Get(m.Key); ok {
				d.diff(m.Value, *bv, path+"/"+Escape(m.Key))
			} else {
				d.add("remove", path+"/"+Escape(m.Key), nil)
			}
		}
		for i, m := range b.Members {
			if _, ok := a.Get(m.Key); !ok {
				d.add("add", path+"/"+Escape(m.Key), &b.Members[i].Value)
			}
		}
	case a.Kind == jsontree.Array && b.Kind == jsontree.Array:
		d.array(a.Items, b.Items, path)
	case !Equal(a, b):
		d.add("replace", path, &b)
	}
}

func (d *differ) array(a, b []jsontree.Value, path string) {
	p := 0
	for p < len(a) && p < len(b) && Equal(a[p], b[p]) {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && Equal(a[len(a)-1-s], b[len(b)-1-s]) {
		s++
	}
	ma, mb := len(a)-p-s, len(b)-p-s
	for k := range min(ma, mb) {
		d.diff(a[p+k], b[p+k], path+"/"+strconv.Itoa(p+k))
	}
	for range ma - min(ma, mb) {
		d.add("remove", path+"/"+strconv.Itoa(p+mb), nil)
	}
	for k := ma; k < mb; k++ {
		d.add("add", path+"/"+strconv.Itoa(p+k), &b[p+k])
	}
}

// Escape escapes a member name as a JSON Pointer reference token (RFC
// 6901 §3): '~' as "~0", '/' as "~1".
func Escape(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// Equal reports whether a and b are the same JSON value: same type,
// numbers of the same value, strings of the same code points, arrays of
// equal elements in order, objects with equal members in any order.
func Equal(a, b jsontree.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case jsontree.Null:
		return true
	case jsontree.Bool:
		return a.Bool == b.Bool
	case jsontree.String:
		return a.Text == b.Text
	case jsontree.Number:
		return a.Text == b.Text || sameNumber(a.Text, b.Text)
	case jsontree.Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !Equal(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case jsontree.Object:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for _, m := range a.Members {
			bv, ok := b.Get(m.Key)
			if !ok || !Equal(m.Value, *bv) {
				return false
			}
		}
		return true
	}
	return false
}

// sameNumber compares two JSON number literals by value, exactly and
// without big arithmetic: each is reduced to a sign, its significant
// digits and a decimal exponent.
func sameNumber(x, y string) bool {
	nx, dx, ex, okx := decimal(x)
	ny, dy, ey, oky := decimal(y)
	if !okx || !oky {
		return false
	}
	if dx == "" || dy == "" { // zero: -0 equals 0
		return dx == dy
	}
	return nx == ny && dx == dy && ex == ey
}

// decimal splits a JSON number into its sign, its digits without leading
// or trailing zeros, and the exponent of the last of them; ok is false
// when the exponent does not fit an int64.
func decimal(s string) (neg bool, digits string, exp int64, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		v, err := strconv.ParseInt(e, 10, 64)
		if err != nil || v > 1<<60 || v < -(1<<60) {
			return false, "", 0, false
		}
		exp = v
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	all := intPart + frac
	exp -= int64(len(frac))
	all = strings.TrimLeft(all, "0")
	trimmed := strings.TrimRight(all, "0")
	exp += int64(len(all) - len(trimmed))
	return neg, trimmed, exp, true
}

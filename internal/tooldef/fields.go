package tooldef

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fields reads one JSON object of a declaration strictly: every read names
// a field, and done refuses the fields nobody read. The first problem wins.
type fields struct {
	m    map[string]any
	path string
	read map[string]bool
	err  *Refusal
}

func objectAt(v any, path string) *fields {
	m, ok := v.(map[string]any)
	f := &fields{m: m, path: path, read: map[string]bool{}}
	if !ok {
		f.err = refuse(BadShape, path, "not an object")
	}
	return f
}

func (f *fields) at(name string) string { return f.path + "/" + escapePointer(name) }

func (f *fields) fail(reason Reason, name, detail string) {
	if f.err == nil {
		f.err = refuse(reason, f.at(name), detail)
	}
}

// get returns the field's value and whether it is present and not null.
func (f *fields) get(name string, required bool) (any, bool) {
	if f.err != nil {
		return nil, false
	}
	f.read[name] = true
	v, ok := f.m[name]
	if !ok || v == nil {
		if required {
			f.fail(BadShape, name, "missing")
		}
		return nil, false
	}
	return v, true
}

func (f *fields) str(name string) string {
	v, ok := f.get(name, true)
	if !ok {
		return ""
	}
	s, isString := v.(string)
	if !isString {
		f.fail(BadShape, name, "not a string")
	}
	return s
}

// optStr reads a string that may be absent or null.
func (f *fields) optStr(name string) *string {
	v, ok := f.get(name, false)
	if !ok {
		return nil
	}
	s, isString := v.(string)
	if !isString {
		f.fail(BadShape, name, "not a string")
		return nil
	}
	return &s
}

func (f *fields) boolean(name string, def bool) bool {
	v, ok := f.get(name, false)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		f.fail(BadShape, name, "not a boolean")
	}
	return b
}

func (f *fields) array(name string) []any {
	v, ok := f.get(name, true)
	if !ok {
		return nil
	}
	a, isArray := v.([]any)
	if !isArray {
		f.fail(BadShape, name, "not an array")
	}
	return a
}

func (f *fields) object(name string) *fields {
	v, _ := f.get(name, true)
	sub := objectAt(v, f.at(name))
	if f.err != nil {
		sub.err = f.err
	} else if sub.err != nil {
		f.err = sub.err
	}
	return sub
}

// value returns a field as decoded JSON.
func (f *fields) value(name string) any {
	v, _ := f.get(name, true)
	return v
}

// done refuses fields nobody read and returns the first problem.
func (f *fields) done() *Refusal {
	if f.err != nil {
		return f.err
	}
	names := make([]string, 0, len(f.m))
	for k := range f.m {
		if !f.read[k] {
			names = append(names, k)
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		return unknownField(f.path, names[0])
	}
	return nil
}

// maxQuotedName bounds the part of an unknown member's name a refusal
// repeats.
const maxQuotedName = 64

// unknownField refuses the unknown member name of the object at path: the
// refusal's path is the member's own pointer and its detail names it,
// quoted and cut to 64 bytes, for the operator's log (a refusal's detail
// is never published: diagnostics show its reason alone).
func unknownField(path, name string) *Refusal {
	return refuse(BadShape, path+"/"+escapePointer(name), "unknown field "+quoteName(name))
}

// quoteName is name quoted for a refusal's detail, cut to maxQuotedName
// bytes at a character boundary.
func quoteName(name string) string {
	if len(name) > maxQuotedName {
		cut := maxQuotedName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		return strconv.Quote(name[:cut]) + "…"
	}
	return strconv.Quote(name)
}

// escapePointer escapes a name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func index(path string, i int) string { return path + "/" + strconv.Itoa(i) }

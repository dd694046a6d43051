// Package tomljson converts TOML (v1.0.0) to JSON and JSON to TOML. TOML is
// decoded with github.com/pelletier/go-toml/v2, which checks the whole
// specification (redefined tables and keys, value types, dates); the
// same library's unstable parser gives the order in which keys appear, so
// the JSON keeps the document's order. JSON is written by this package's
// own emitter, which keeps the JSON's order too (go-toml sorts map keys).
package tomljson

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxDepth is the deepest nesting of arrays and inline tables accepted.
const MaxDepth = 1000

var (
	// ErrTooLarge is returned when the output would pass its bound.
	ErrTooLarge = errors.New("tomljson: output exceeds the size limit")
	// ErrNotTable is returned when the JSON to write is not an object: a
	// TOML document is a table.
	ErrNotTable = errors.New("tomljson: the JSON must be an object")
	// ErrInfinity is returned for a TOML float that is inf or nan.
	ErrInfinity = errors.New("tomljson: inf and nan have no JSON form")
)

// unwritable is the subject of the faults of FromJSON: JSON values with no
// TOML form.
const unwritable = "text cannot be written as TOML"

const subject = "text is not valid TOML"

// ToJSON decodes text as a TOML document into a JSON object. Integers and
// floats become numbers (a float as Go's shortest form: 1.50 becomes
// 1.5), offset date-times RFC 3339 strings, local dates, times and
// date-times their TOML spelling.
func ToJSON(text string) (jsontree.Value, error) {
	if !utf8.ValidString(text) {
		return jsontree.Value{}, textpos.New(text, strings.IndexRune(strings.ToValidUTF8(text, "\uFFFD"), '\uFFFD'), subject, "invalid UTF-8")
	}
	if off := tooDeep(text); off >= 0 {
		return jsontree.Value{}, textpos.New(text, off, subject, "nesting deeper than 1000 levels")
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(text), &doc); err != nil {
		return jsontree.Value{}, fault(text, err)
	}
	o := keyOrder(text)
	return convert(doc, "", o)
}

// quoted matches a quoted part of a decoder message.
var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)

// fault turns a go-toml error into a located *textpos.Error, without the
// quoted parts of the library's message (they can be pieces of the text).
func fault(text string, err error) error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		// Redefinitions come without a position, and their messages name
		// the key: say what is wrong in general, and find the line.
		reason := "malformed document"
		if strings.Contains(err.Error(), "already") {
			reason = "a key or table is defined twice"
		}
		return textpos.New(text, redefinedAt(text), subject, reason)
	}
	reason := strings.TrimPrefix(de.Error(), "toml: ")
	reason = strings.TrimSpace(quoted.ReplaceAllString(reason, "…"))
	if len(reason) > 200 {
		reason = reason[:200]
	}
	row, col := de.Position()
	return textpos.New(text, offsetAt(text, row, col), subject, reason)
}

// redefinedAt returns the offset of the first line at which the text's
// prefix stops decoding for a reason other than a syntax error (a cut
// multi-line value is one): where a key or table is defined again. It
// decodes O(log lines) prefixes.
func redefinedAt(text string) int {
	var starts []int
	for off := 0; off < len(text); {
		starts = append(starts, off)
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	fails := func(lines int) bool {
		end := len(text)
		if lines < len(starts) {
			end = starts[lines]
		}
		var m map[string]any
		err := toml.Unmarshal([]byte(text[:end]), &m)
		var de *toml.DecodeError
		return err != nil && !errors.As(err, &de)
	}
	lo, hi := 1, len(starts)
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo-1 < len(starts) && lo >= 1 {
		return starts[lo-1]
	}
	return 0
}

// offsetAt returns the byte offset of line row and column col (both from
// 1; go-toml counts columns in bytes).
func offsetAt(text string, row, col int) int {
	off := 0
	for l := 1; l < row; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return min(off+max(col-1, 0), len(text))
}

// order maps a table's path (its keys joined by NUL, arrays of tables
// counted once) to its keys in the order they first appear.
type order map[string][]string

func (o order) note(path, key string) {
	if !slices.Contains(o[path], key) {
		o[path] = append(o[path], key)
	}
}

// keyOrder reads the key order from the document's expressions. The text
// has been decoded already, so the parser meets no error.
func keyOrder(text string) order {
	o := order{}
	var p unstable.Parser
	p.Reset([]byte(text))
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			prefix = o.keys("", e.Key())
		case unstable.KeyValue:
			path := o.keys(prefix, e.Key())
			o.value(path, e.Value())
		}
	}
	return o
}

// keys notes a dotted key's parts under prefix and returns its path.
func (o order) keys(prefix string, it unstable.Iterator) string {
	path := prefix
	for it.Next() {
		k := string(it.Node().Data)
		o.note(path, k)
		path = path + "\x00" + k
	}
	return path
}

// value notes the keys of an inline table, or of the inline tables in an
// array, at path.
func (o order) value(path string, n *unstable.Node) {
	switch n.Kind {
	case unstable.InlineTable:
		it := n.Children()
		for it.Next() {
			kv := it.Node()
			o.value(o.keys(path, kv.Key()), kv.Value())
		}
	case unstable.Array:
		it := n.Children()
		for it.Next() {
			o.value(path, it.Node())
		}
	}
}

func convert(v any, path string, o order) (jsontree.Value, error) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for _, k := range o[path] {
			if _, ok := t[k]; ok {
				keys = append(keys, k)
			}
		}
		if len(keys) < len(t) {
			var rest []string
			for k := range t {
				if !slices.Contains(keys, k) {
					rest = append(rest, k)
				}
			}
			slices.Sort(rest)
			keys = append(keys, rest...)
		}
		out := jsontree.Value{Kind: jsontree.Object, Members: make([]jsontree.Member, 0, len(keys))}
		for _, k := range keys {
			mv, err := convert(t[k], path+"\x00"+k, o)
			if err != nil {
				return jsontree.Value{}, err
			}
			out.Members = append(out.Members, jsontree.Member{Key: k, Value: mv})
		}
		return out, nil
	case []any:
		out := jsontree.Value{Kind: jsontree.Array, Items: make([]jsontree.Value, len(t))}
		for i, item := range t {
			iv, err := convert(item, path, o)
			if err != nil {
				return jsontree.Value{}, err
			}
			out.Items[i] = iv
		}
		return out, nil
	case string:
		return jsontree.Value{Kind: jsontree.String, Text: t}, nil
	case bool:
		return jsontree.Value{Kind: jsontree.Bool, Bool: t}, nil
	case int64:
		return jsontree.Value{Kind: jsontree.Number, Text: strconv.FormatInt(t, 10)}, nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return jsontree.Value{}, ErrInfinity
		}
		return jsontree.Value{Kind: jsontree.Number, Text: strconv.FormatFloat(t, 'g', -1, 64)}, nil
	case time.Time:
		return jsontree.Value{Kind: jsontree.String, Text: t.Format(time.RFC3339Nano)}, nil
	case toml.LocalDate:
		return jsontree.Value{Kind: jsontree.String, Text: t.String()}, nil
	case toml.LocalTime:
		return jsontree.Value{Kind: jsontree.String, Text: t.String()}, nil
	case toml.LocalDateTime:
		return jsontree.Value{Kind: jsontree.String, Text: t.String()}, nil
	}
	return jsontree.Value{}, errors.New("tomljson: unexpected decoded type")
}

// tooDeep returns the offset where arrays and inline tables nest deeper
// than MaxDepth, or -1; the decoder recurses once a level and has no bound
// of its own. Quoted strings and comments are skipped roughly: the count
// is a bound, not a parse.
func tooDeep(text string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case ch == '[' || ch == '{':
			if depth++; depth > MaxDepth {
				return i
			}
		case ch == ']' || ch == '}':
			depth = max(depth-1, 0)
		}
	}
	return -1
}

// integer is a JSON number without fraction or exponent.
var integer = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// FromJSON writes v, a JSON object, as a TOML document: each table's plain
// keys first, in their order, then its sub-tables ([a.b]) and arrays of
// tables ([[a.c]]), in their order. Objects inside arrays that are not all
// objects, and empty objects, are inline tables. A result ends with a line
// break (an empty object gives an empty text).
//
// src is the JSON text v was parsed from: a value with no TOML form (null,
// an integer outside TOML's 64-bit range) is a *textpos.Error located in
// it.
func FromJSON(v jsontree.Value, src string, maxBytes int) (string, error) {
	if v.Kind != jsontree.Object {
		return "", ErrNotTable
	}
	w := &emitter{max: maxBytes, src: src}
	if err := w.table(nil, v, false); err != nil {
		return "", err
	}
	if w.max > 0 && w.b.Len() > w.max {
		return "", ErrTooLarge
	}
	return w.b.String(), nil
}

type emitter struct {
	b   strings.Builder
	max int
	src string
}

func (w *emitter) fail(v jsontree.Value, reason string) error {
	return textpos.New(w.src, v.Offset, unwritable, reason)
}

// tableArray reports whether v is written as an array of tables.
func tableArray(v jsontree.Value) bool {
	if v.Kind != jsontree.Array || len(v.Items) == 0 {
		return false
	}
	for _, item := range v.Items {
		if item.Kind != jsontree.Object {
			return false
		}
	}
	return true
}

func subTable(v jsontree.Value) bool { return v.Kind == jsontree.Object && len(v.Members) > 0 }

// table writes the body of the table at path; header says whether its
// header line has been written (the root has none).
func (w *emitter) table(path []string, t jsontree.Value, header bool) error {
	if w.max > 0 && w.b.Len() > w.max {
		return ErrTooLarge
	}
	if len(path) > MaxDepth {
		return w.fail(t, "nesting deeper than 1000 levels")
	}
	for _, m := range t.Members {
		if subTable(m.Value) || tableArray(m.Value) {
			continue
		}
		w.b.WriteString(key(m.Key))
		w.b.WriteString(" = ")
		if err := w.inline(m.Value, len(path)); err != nil {
			return err
		}
		w.b.WriteByte('\n')
	}
	for _, m := range t.Members {
		sub := append(slices.Clip(path), m.Key)
		switch {
		case subTable(m.Value):
			w.blank()
			w.b.WriteString("[" + dotted(sub) + "]\n")
			if err := w.table(sub, m.Value, true); err != nil {
				return err
			}
		case tableArray(m.Value):
			for _, item := range m.Value.Items {
				w.blank()
				w.b.WriteString("[[" + dotted(sub) + "]]\n")
				if err := w.table(sub, item, true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// blank separates a table header from what precedes it.
func (w *emitter) blank() {
	if w.b.Len() > 0 {
		w.b.WriteByte('\n')
	}
}

// inline writes v as an inline value, depth levels down.
func (w *emitter) inline(v jsontree.Value, depth int) error {
	if depth > MaxDepth {
		return w.fail(v, "nesting deeper than 1000 levels")
	}
	switch v.Kind {
	case jsontree.Null:
		return w.fail(v, "null has no TOML form")
	case jsontree.Bool:
		w.b.WriteString(strconv.FormatBool(v.Bool))
	case jsontree.Number:
		if integer.MatchString(v.Text) {
			if _, err := strconv.ParseInt(v.Text, 10, 64); err != nil {
				return w.fail(v, "integer out of TOML's 64-bit range")
			}
		}
		// A JSON number is a TOML integer or float as written.
		w.b.WriteString(v.Text)
	case jsontree.String:
		basic(&w.b, v.Text)
	case jsontree.Array:
		w.b.WriteByte('[')
		for i, item := range v.Items {
			if i > 0 {
				w.b.WriteString(", ")
			}
			if err := w.inline(item, depth+1); err != nil {
				return err
			}
		}
		w.b.WriteByte(']')
	case jsontree.Object:
		if len(v.Members) == 0 {
			w.b.WriteString("{}")
			return nil
		}
		w.b.WriteString("{ ")
		for i, m := range v.Members {
			if i > 0 {
				w.b.WriteString(", ")
			}
			w.b.WriteString(key(m.Key))
			w.b.WriteString(" = ")
			if err := w.inline(m.Value, depth+1); err != nil {
				return err
			}
		}
		w.b.WriteString(" }")
	}
	return nil
}

var bare = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// key writes a key bare when TOML allows it, else as a basic string.
func key(k string) string {
	if bare.MatchString(k) {
		return k
	}
	var b strings.Builder
	basic(&b, k)
	return b.String()
}

func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = key(p)
	}
	return strings.Join(parts, ".")
}

// basic writes s as a TOML basic string.
func basic(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

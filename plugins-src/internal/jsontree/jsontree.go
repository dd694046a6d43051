// Package jsontree holds one JSON document as an ordered tree: object
// members in their order, numbers as written. The data-format transforms
// (yaml_json, toml_json, csv_json, json_diff, json_query) read and write
// JSON through it, so that a conversion keeps the caller's key order and
// never rounds a number.
package jsontree

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/jsonfmt"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Kind is a JSON value's type.
type Kind uint8

// The six JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one JSON value. Bool holds a boolean; Text holds a string's
// value (unescaped) or a number's literal as written; Items holds an
// array's elements and Members an object's members, in order. Offset is
// where a parsed value starts in its text (its first byte), for faults
// found after parsing; it is 0 in values built otherwise.
type Value struct {
	Kind    Kind
	Bool    bool
	Text    string
	Items   []Value
	Members []Member
	Offset  int
}

// Member is one member of an object.
type Member struct {
	Key   string
	Value Value
}

// MaxIndent is the widest indentation Encode accepts.
const MaxIndent = 8

var (
	// ErrTooLarge is returned when Encode's output would pass its bound.
	ErrTooLarge = errors.New("jsontree: output exceeds the size limit")
	// ErrIndent is returned when an indent is outside 0..MaxIndent.
	ErrIndent = errors.New("jsontree: indent must be between 0 and 8")
)

// Parse reads text as strict JSON (RFC 8259, as jsonfmt validates it) into
// a tree. Faults are *textpos.Error values whose subject is the given one
// ("text is not valid JSON"); an object with the same key twice is a fault
// too, since none of the transforms can say which member is meant.
func Parse(text, subject string) (Value, error) {
	if err := jsonfmt.Validate(text); err != nil {
		var pe *textpos.Error
		if errors.As(err, &pe) {
			c := *pe
			c.Subject = subject
			return Value{}, &c
		}
		return Value{}, err
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	p := &parser{d: d, text: text, subject: subject}
	return p.value()
}

type parser struct {
	d       *json.Decoder
	text    string
	subject string
}

func (p *parser) value() (Value, error) {
	tok, err := p.d.Token()
	if err != nil {
		return Value{}, p.internal(err)
	}
	return p.from(tok)
}

func (p *parser) from(tok json.Token) (Value, error) {
	end := int(p.d.InputOffset())
	switch t := tok.(type) {
	case nil:
		return Value{Kind: Null, Offset: end - 4}, nil
	case bool:
		return Value{Kind: Bool, Bool: t, Offset: end - len(strconv.FormatBool(t))}, nil
	case json.Number:
		return Value{Kind: Number, Text: string(t), Offset: end - len(t)}, nil
	case string:
		return Value{Kind: String, Text: t, Offset: keyStart(p.text, end)}, nil
	case json.Delim:
		switch t {
		case '[':
			v := Value{Kind: Array, Items: []Value{}, Offset: end - 1}
			for p.d.More() {
				item, err := p.value()
				if err != nil {
					return Value{}, err
				}
				v.Items = append(v.Items, item)
			}
			_, err := p.d.Token()
			return v, p.internal(err)
		case '{':
			v := Value{Kind: Object, Members: []Member{}, Offset: end - 1}
			seen := map[string]bool{}
			for p.d.More() {
				k, err := p.d.Token()
				if err != nil {
					return Value{}, p.internal(err)
				}
				key, _ := k.(string)
				if seen[key] {
					return Value{}, textpos.New(p.text, keyStart(p.text, int(p.d.InputOffset())), p.subject, "duplicate object key")
				}
				seen[key] = true
				item, err := p.value()
				if err != nil {
					return Value{}, err
				}
				v.Members = append(v.Members, Member{Key: key, Value: item})
			}
			_, err := p.d.Token()
			return v, p.internal(err)
		}
	}
	return Value{}, errors.New("jsontree: unexpected token")
}

// keyStart returns the offset of the opening quote of the string literal
// that ends just before end.
func keyStart(text string, end int) int {
	for i := end - 2; i >= 0; i-- {
		if text[i] != '"' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && text[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
	return 0
}

// internal reports a decoder error on text jsonfmt has validated: a bug,
// never the caller's fault.
func (p *parser) internal(err error) error {
	if err == nil || err == io.EOF {
		return nil
	}
	return errors.New("jsontree: decoding validated JSON failed")
}

// Get returns the member key of an object and whether it is there.
func (v *Value) Get(key string) (*Value, bool) {
	for i := range v.Members {
		if v.Members[i].Key == key {
			return &v.Members[i].Value, true
		}
	}
	return nil, false
}

// Encode writes v as JSON: compact with indent 0, else one member or
// element a line, indent spaces a level. Strings escape only '"', '\\'
// and control characters (see WriteString); numbers are written as held. maxBytes (0: none) bounds the
// output (ErrTooLarge).
func Encode(v Value, indent, maxBytes int) (string, error) {
	if indent < 0 || indent > MaxIndent {
		return "", ErrIndent
	}
	w := &writer{indent: indent, max: maxBytes}
	w.value(v, 0)
	if w.full {
		return "", ErrTooLarge
	}
	return w.b.String(), nil
}

type writer struct {
	b      strings.Builder
	indent int
	max    int
	full   bool
}

func (w *writer) check() bool {
	if w.max > 0 && w.b.Len() > w.max {
		w.full = true
	}
	return !w.full
}

func (w *writer) newline(depth int) {
	if w.indent == 0 {
		return
	}
	w.b.WriteByte('\n')
	for range depth * w.indent {
		w.b.WriteByte(' ')
	}
}

func (w *writer) value(v Value, depth int) {
	if !w.check() {
		return
	}
	switch v.Kind {
	case Null:
		w.b.WriteString("null")
	case Bool:
		w.b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		w.b.WriteString(v.Text)
	case String:
		WriteString(&w.b, v.Text)
	case Array:
		if len(v.Items) == 0 {
			w.b.WriteString("[]")
			return
		}
		w.b.WriteByte('[')
		for i, item := range v.Items {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.newline(depth + 1)
			w.value(item, depth+1)
		}
		w.newline(depth)
		w.b.WriteByte(']')
	case Object:
		if len(v.Members) == 0 {
			w.b.WriteString("{}")
			return
		}
		w.b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.newline(depth + 1)
			WriteString(&w.b, m.Key)
			w.b.WriteByte(':')
			if w.indent > 0 {
				w.b.WriteByte(' ')
			}
			w.value(m.Value, depth+1)
		}
		w.newline(depth)
		w.b.WriteByte('}')
	}
}

// WriteString writes s as a JSON string: '"', '\\' and the control
// characters escaped (\n, \r, \t, \b, \f or \u00XX), everything else as is.
// Invalid UTF-8 is written as U+FFFD.
func WriteString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString("\uFFFD")
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// Any returns v as encoding/json decodes it with UseNumber: nil, bool,
// json.Number, string, []any, map[string]any.
func (v Value) Any() any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Text)
	case String:
		return v.Text
	case Array:
		a := make([]any, len(v.Items))
		for i, item := range v.Items {
			a[i] = item.Any()
		}
		return a
	case Object:
		m := make(map[string]any, len(v.Members))
		for _, mem := range v.Members {
			m[mem.Key] = mem.Value.Any()
		}
		return m
	}
	return nil
}

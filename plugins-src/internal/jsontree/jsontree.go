// Package jsontree holds one JSON document as an ordered tree: object
// members in their order, numbers as written. The data-format transforms
// (yaml_json, toml_json, csv_json, json_diff, json_query) read and write
// JSON through it, so that a conversion keeps the caller's key order and
// never rounds a number.
package jsontree

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
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
//
// The tree is built by a second pass over the validated text, which can
// therefore skip every check; encoding/json's Decoder.Token, which the
// first version used, cost about fifteen times the validation.
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
	p := &parser{text: text, subject: subject}
	return p.value()
}

// parser reads text that jsonfmt has validated.
type parser struct {
	text    string
	subject string
	pos     int
}

func (p *parser) space() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (Value, error) {
	p.space()
	start := p.pos
	switch p.text[p.pos] {
	case '{':
		p.pos++
		v := Value{Kind: Object, Members: []Member{}, Offset: start}
		p.space()
		if p.text[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		seen := map[string]bool{}
		for {
			p.space()
			at := p.pos
			key := p.str()
			if seen[key] {
				return Value{}, textpos.New(p.text, at, p.subject, "duplicate object key")
			}
			seen[key] = true
			p.space()
			p.pos++ // ':'
			item, err := p.value()
			if err != nil {
				return Value{}, err
			}
			v.Members = append(v.Members, Member{Key: key, Value: item})
			p.space()
			if p.text[p.pos] == ',' {
				p.pos++
				continue
			}
			p.pos++ // '}'
			return v, nil
		}
	case '[':
		p.pos++
		v := Value{Kind: Array, Items: []Value{}, Offset: start}
		p.space()
		if p.text[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		for {
			item, err := p.value()
			if err != nil {
				return Value{}, err
			}
			v.Items = append(v.Items, item)
			p.space()
			if p.text[p.pos] == ',' {
				p.pos++
				continue
			}
			p.pos++ // ']'
			return v, nil
		}
	case '"':
		return Value{Kind: String, Text: p.str(), Offset: start}, nil
	case 't':
		p.pos += 4
		return Value{Kind: Bool, Bool: true, Offset: start}, nil
	case 'f':
		p.pos += 5
		return Value{Kind: Bool, Offset: start}, nil
	case 'n':
		p.pos += 4
		return Value{Kind: Null, Offset: start}, nil
	}
	for p.pos < len(p.text) && strings.IndexByte("+-0123456789.eE", p.text[p.pos]) >= 0 {
		p.pos++
	}
	return Value{Kind: Number, Text: p.text[start:p.pos], Offset: start}, nil
}

// str reads the string literal at p.pos and returns its value.
func (p *parser) str() string {
	p.pos++ // the opening quote
	start := p.pos
	for p.text[p.pos] != '"' {
		if p.text[p.pos] == '\\' {
			return p.escaped(start)
		}
		p.pos++
	}
	p.pos++
	return p.text[start : p.pos-1]
}

// escaped reads the rest of a string literal from its first backslash.
// Escaped surrogates that do not pair become U+FFFD, as encoding/json
// decodes them.
func (p *parser) escaped(start int) string {
	var b strings.Builder
	b.WriteString(p.text[start:p.pos])
	for {
		c := p.text[p.pos]
		switch c {
		case '"':
			p.pos++
			return b.String()
		case '\\':
			esc := p.text[p.pos+1]
			p.pos += 2
			switch esc {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				r := hex4(p.text[p.pos : p.pos+4])
				p.pos += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.pos+6 <= len(p.text) && p.text[p.pos] == '\\' && p.text[p.pos+1] == 'u' {
						r2 = hex4(p.text[p.pos+2 : p.pos+6])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						p.pos += 6
					} else {
						r = utf8.RuneError
					}
				}
				b.WriteRune(r)
			default: // '"', '\\', '/'
				b.WriteByte(esc)
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// hex4 reads four hex digits that jsonfmt has validated.
func hex4(s string) rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= 'a':
			c = c - 'a' + 10
		case c >= 'A':
			c = c - 'A' + 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
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

// Package yamljson converts YAML to JSON and JSON to YAML. YAML is read
// with github.com/goccy/go-yaml's parser into its syntax tree, which this
// package walks itself, so that mapping order is kept, numbers keep their
// spelling when it is JSON's, and aliases are expanded under a budget: a
// "billion laughs" document is refused, not expanded. JSON is written as
// block YAML by a small emitter of this package, which quotes every
// string a YAML 1.1 or 1.2 reader could take for something else.
package yamljson

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxDepth is the deepest nesting accepted, in either direction.
const MaxDepth = 1000

// MaxValues bounds the values a YAML document expands to, aliases
// included: more cannot fit the result anyway.
const MaxValues = 256 << 10

var (
	// ErrTooLarge is returned when the output would pass its bound.
	ErrTooLarge = errors.New("yamljson: output exceeds the size limit")
	// ErrIndent is returned for an indent outside 2..8.
	ErrIndent = errors.New("yamljson: indent must be between 2 and 8")
)

const subject = "text is not valid YAML"

// number is RFC 8259's number grammar (§6).
var number = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ToJSON reads text as YAML. With all, every document of the stream
// becomes an element of a JSON array; without it, a stream of more than
// one document is refused. An empty document is null.
func ToJSON(text string, all bool) (jsontree.Value, error) {
	if !utf8.ValidString(text) {
		return jsontree.Value{}, textpos.New(text, invalidUTF8(text), subject, "invalid UTF-8")
	}
	if off := tooDeep(text); off >= 0 {
		return jsontree.Value{}, textpos.New(text, off, subject, "nesting deeper than 1000 levels")
	}
	// Duplicate keys are refused below, with a message of this package's.
	f, err := parser.ParseBytes([]byte(text), 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return jsontree.Value{}, syntaxFault(text, err)
	}
	c := &converter{text: text}
	var docs []jsontree.Value
	for _, d := range f.Docs {
		c.anchors = map[string]jsontree.Value{}
		v, err := c.value(d.Body, 0)
		if err != nil {
			return jsontree.Value{}, err
		}
		docs = append(docs, v)
	}
	if all {
		if docs == nil {
			docs = []jsontree.Value{}
		}
		return jsontree.Value{Kind: jsontree.Array, Items: docs}, nil
	}
	switch len(docs) {
	case 0:
		return jsontree.Value{Kind: jsontree.Null}, nil
	case 1:
		return docs[0], nil
	}
	second := f.Docs[1].Start // its "---"
	if second == nil {
		second = f.Docs[1].GetToken()
	}
	return jsontree.Value{}, textpos.New(text, offsetOf(text, second), subject,
		"the text holds more than one document (all_documents converts each)")
}

type converter struct {
	text    string
	anchors map[string]jsontree.Value
	values  int
}

func (c *converter) fail(n ast.Node, reason string) error {
	var tk *token.Token
	if n != nil {
		tk = n.GetToken()
	}
	return textpos.New(c.text, offsetOf(c.text, tk), subject, reason)
}

// count charges n values to the expansion budget.
func (c *converter) count(n ast.Node, values int) error {
	c.values += values
	if c.values > MaxValues {
		return c.fail(n, "aliases expand to more than 262,144 values")
	}
	return nil
}

func (c *converter) value(n ast.Node, depth int) (jsontree.Value, error) {
	if depth > MaxDepth {
		return jsontree.Value{}, c.fail(n, "nesting deeper than 1000 levels")
	}
	if n == nil {
		return jsontree.Value{Kind: jsontree.Null}, c.count(n, 1)
	}
	if err := c.count(n, 1); err != nil {
		return jsontree.Value{}, err
	}
	switch t := n.(type) {
	case *ast.NullNode:
		return jsontree.Value{Kind: jsontree.Null}, nil
	case *ast.BoolNode:
		return jsontree.Value{Kind: jsontree.Bool, Bool: t.Value}, nil
	case *ast.IntegerNode:
		if lit := t.Token.Value; number.MatchString(lit) {
			return jsontree.Value{Kind: jsontree.Number, Text: lit}, nil
		}
		switch v := t.Value.(type) {
		case int64:
			return jsontree.Value{Kind: jsontree.Number, Text: strconv.FormatInt(v, 10)}, nil
		case uint64:
			return jsontree.Value{Kind: jsontree.Number, Text: strconv.FormatUint(v, 10)}, nil
		}
		return jsontree.Value{}, c.fail(n, "integer out of range")
	case *ast.FloatNode:
		if lit := t.Token.Value; number.MatchString(lit) {
			return jsontree.Value{Kind: jsontree.Number, Text: lit}, nil
		}
		return jsontree.Value{Kind: jsontree.Number, Text: strconv.FormatFloat(t.Value, 'g', -1, 64)}, nil
	case *ast.InfinityNode, *ast.NanNode:
		return jsontree.Value{}, c.fail(n, "infinity and NaN have no JSON form")
	case *ast.StringNode:
		// The YAML 1.2 core schema (§10.3.2) reads a plain 1e3 as a
		// float; goccy leaves it a string.
		if t.Token.Type == token.StringType && number.MatchString(t.Value) {
			return jsontree.Value{Kind: jsontree.Number, Text: t.Value}, nil
		}
		return jsontree.Value{Kind: jsontree.String, Text: t.Value}, nil
	case *ast.LiteralNode:
		return jsontree.Value{Kind: jsontree.String, Text: t.Value.Value}, nil
	case *ast.MappingNode:
		return c.mapping(t.Values, depth)
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{t}, depth)
	case *ast.SequenceNode:
		v := jsontree.Value{Kind: jsontree.Array, Items: make([]jsontree.Value, 0, len(t.Values))}
		for _, item := range t.Values {
			iv, err := c.value(item, depth+1)
			if err != nil {
				return jsontree.Value{}, err
			}
			v.Items = append(v.Items, iv)
		}
		return v, nil
	case *ast.AnchorNode:
		v, err := c.value(t.Value, depth)
		if err != nil {
			return jsontree.Value{}, err
		}
		c.anchors[t.Name.GetToken().Value] = v
		return v, nil
	case *ast.AliasNode:
		v, ok := c.anchors[t.Value.GetToken().Value]
		if !ok {
			return jsontree.Value{}, c.fail(n, "alias to an anchor not defined before it")
		}
		return v, c.count(n, size(v))
	case *ast.TagNode:
		tag := t.Start.Value
		if tag == "!!str" || tag == "tag:yaml.org,2002:str" {
			if s, ok := scalarText(t.Value); ok {
				return jsontree.Value{Kind: jsontree.String, Text: s}, nil
			}
		}
		return c.value(t.Value, depth)
	case *ast.MappingKeyNode:
		return c.value(t.Value, depth)
	}
	return jsontree.Value{}, c.fail(n, "a "+n.Type().String()+" has no JSON form")
}

// size is the number of values in v.
func size(v jsontree.Value) int {
	n := 1
	for _, item := range v.Items {
		n += size(item)
	}
	for _, m := range v.Members {
		n += size(m.Value)
	}
	return n
}

func (c *converter) mapping(pairs []*ast.MappingValueNode, depth int) (jsontree.Value, error) {
	v := jsontree.Value{Kind: jsontree.Object, Members: make([]jsontree.Member, 0, len(pairs))}
	explicit := map[string]bool{}
	var merged []jsontree.Value
	for _, p := range pairs {
		if isMerge(p.Key) {
			mv, err := c.value(p.Value, depth+1)
			if err != nil {
				return jsontree.Value{}, err
			}
			switch mv.Kind {
			case jsontree.Object:
				merged = append(merged, mv)
			case jsontree.Array:
				for _, item := range mv.Items {
					if item.Kind != jsontree.Object {
						return jsontree.Value{}, c.fail(p.Value, "a merge key (<<) takes a mapping or a list of mappings")
					}
					merged = append(merged, item)
				}
			default:
				return jsontree.Value{}, c.fail(p.Value, "a merge key (<<) takes a mapping or a list of mappings")
			}
			continue
		}
		key, err := c.key(p.Key)
		if err != nil {
			return jsontree.Value{}, err
		}
		if explicit[key] {
			return jsontree.Value{}, c.fail(p.Key, "duplicate mapping key")
		}
		explicit[key] = true
		val, err := c.value(p.Value, depth+1)
		if err != nil {
			return jsontree.Value{}, err
		}
		v.Members = append(v.Members, jsontree.Member{Key: key, Value: val})
	}
	// YAML's merge key (yaml.org/type/merge): the mapping's own keys win,
	// then the merged mappings in their order.
	for _, m := range merged {
		for _, mem := range m.Members {
			if !explicit[mem.Key] {
				explicit[mem.Key] = true
				v.Members = append(v.Members, mem)
			}
		}
	}
	return v, nil
}

func isMerge(k ast.MapKeyNode) bool {
	_, ok := k.(*ast.MergeKeyNode)
	return ok
}

// key returns a mapping key as a JSON member name: a scalar's text.
func (c *converter) key(k ast.MapKeyNode) (string, error) {
	var n ast.Node = k
unwrap:
	for {
		switch t := n.(type) {
		case *ast.MappingKeyNode:
			n = t.Value
			continue
		case *ast.TagNode:
			n = t.Value
			continue
		case *ast.AnchorNode:
			v, err := c.value(t, 0)
			if err != nil {
				return "", err
			}
			if v.Kind == jsontree.Object || v.Kind == jsontree.Array {
				return "", c.fail(n, "a mapping key must be a scalar to become a JSON member name")
			}
			n = t.Value
			continue
		case *ast.AliasNode:
			v, ok := c.anchors[t.Value.GetToken().Value]
			if !ok {
				return "", c.fail(n, "alias to an anchor not defined before it")
			}
			switch v.Kind {
			case jsontree.String, jsontree.Number:
				return v.Text, nil
			case jsontree.Bool:
				return strconv.FormatBool(v.Bool), nil
			case jsontree.Null:
				return "null", nil
			}
			return "", c.fail(n, "a mapping key must be a scalar to become a JSON member name")
		}
		break unwrap
	}
	if s, ok := scalarText(n); ok {
		return s, nil
	}
	return "", c.fail(n, "a mapping key must be a scalar to become a JSON member name")
}

// scalarText is a scalar node's text: a string's value, a null's "null",
// a number's or boolean's spelling.
func scalarText(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		return t.Value.Value, true
	case *ast.NullNode:
		if t.Token.Value == "" {
			return "null", true
		}
		return t.Token.Value, true
	case *ast.BoolNode:
		return t.Token.Value, true
	case *ast.IntegerNode:
		return t.Token.Value, true
	case *ast.FloatNode:
		return t.Token.Value, true
	case *ast.InfinityNode:
		return t.Token.Value, true
	case *ast.NanNode:
		return t.Token.Value, true
	}
	return "", false
}

// quoted matches a double-quoted part of a parser message.
var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)

// syntaxFault turns a goccy parse error into a located *textpos.Error. The
// parser's messages name YAML constructs; a quoted part, which could be a
// piece of the text, is dropped.
func syntaxFault(text string, err error) error {
	// The parser's *yaml.SyntaxError, through its methods: importing the
	// yaml package for the type would link its reflection-based encoder
	// and decoder.
	var se interface {
		GetMessage() string
		GetToken() *token.Token
	}
	if !errors.As(err, &se) {
		return textpos.New(text, 0, subject, "malformed document")
	}
	reason := strings.TrimSpace(quoted.ReplaceAllString(se.GetMessage(), "…"))
	if len(reason) > 200 {
		reason = reason[:200]
	}
	if reason == "" {
		reason = "malformed document"
	}
	return textpos.New(text, offsetOf(text, se.GetToken()), subject, reason)
}

// offsetOf returns the byte offset of a token's line and column (both from
// 1, the column in characters).
func offsetOf(text string, tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return len(text)
	}
	off := 0
	for l := 1; l < tk.Position.Line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	for col := 1; col < tk.Position.Column && off < len(text) && text[off] != '\n'; col++ {
		_, n := utf8.DecodeRuneInString(text[off:])
		off += n
	}
	return off
}

func invalidUTF8(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// tooDeep returns the offset where flow collections ('[' and '{') nest
// deeper than MaxDepth, or -1: the parser recurses once a level and has no
// bound of its own. Brackets inside quoted scalars are skipped; the count
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
			if i == 0 || strings.IndexByte(" \t\n[{,:-", text[i-1]) >= 0 {
				quote = ch
			}
		case ch == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\n'):
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

// FromJSON writes v as block YAML with indent spaces a level (2 to 8),
// ending with a line break. Members keep their order; strings are plain
// when no YAML reader could take them for anything else, double-quoted
// otherwise.
func FromJSON(v jsontree.Value, indent, maxBytes int) (string, error) {
	if indent < 2 || indent > 8 {
		return "", ErrIndent
	}
	w := &emitter{indent: indent, max: maxBytes}
	w.node(v, 0)
	w.b.WriteByte('\n')
	if w.full {
		return "", ErrTooLarge
	}
	return w.b.String(), nil
}

type emitter struct {
	b      strings.Builder
	indent int
	max    int
	full   bool
}

func (w *emitter) pad(col int) {
	w.b.WriteByte('\n')
	for range col {
		w.b.WriteByte(' ')
	}
}

func collection(v jsontree.Value) bool {
	return v.Kind == jsontree.Object && len(v.Members) > 0 || v.Kind == jsontree.Array && len(v.Items) > 0
}

// node writes v starting at the current position, which is column col.
func (w *emitter) node(v jsontree.Value, col int) {
	if w.full || w.max > 0 && w.b.Len() > w.max {
		w.full = true
		return
	}
	switch {
	case v.Kind == jsontree.Object && len(v.Members) > 0:
		for i, m := range v.Members {
			if i > 0 {
				w.pad(col)
			}
			w.scalarString(m.Key)
			w.b.WriteByte(':')
			if collection(m.Value) {
				w.pad(col + w.indent)
				w.node(m.Value, col+w.indent)
			} else {
				w.b.WriteByte(' ')
				w.node(m.Value, col+w.indent)
			}
		}
	case v.Kind == jsontree.Array && len(v.Items) > 0:
		for i, item := range v.Items {
			if i > 0 {
				w.pad(col)
			}
			w.b.WriteString("- ")
			w.node(item, col+2)
		}
	case v.Kind == jsontree.Object:
		w.b.WriteString("{}")
	case v.Kind == jsontree.Array:
		w.b.WriteString("[]")
	case v.Kind == jsontree.Null:
		w.b.WriteString("null")
	case v.Kind == jsontree.Bool:
		w.b.WriteString(strconv.FormatBool(v.Bool))
	case v.Kind == jsontree.Number:
		w.b.WriteString(v.Text)
	case v.Kind == jsontree.String:
		w.scalarString(v.Text)
	}
}

// reserved are the plain scalars YAML 1.1 or 1.2 resolves to something
// other than a string (compared in lower case), and the merge key.
var reserved = map[string]bool{
	"": true, "~": true, "null": true, "true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true, "<<": true, "=": true,
}

// plain reports whether s can be written as a plain scalar and read back
// as the same string by any YAML 1.1 or 1.2 reader.
func plain(s string) bool {
	if reserved[strings.ToLower(s)] || len(s) > 1024 {
		return false
	}
	switch s[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '.', '+':
		return false
	}
	if '0' <= s[0] && s[0] <= '9' {
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == ':' {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || r == 0xfeff || r == 0x85 || r == 0x2028 || r == 0x2029 || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
		switch r {
		case ',', '[', ']', '{', '}':
			// Fine in block context, but a reader may meet the key in a
			// flow one after a hand edit: quote.
			return false
		}
	}
	return true
}

func (w *emitter) scalarString(s string) {
	if plain(s) {
		w.b.WriteString(s)
		return
	}
	const hex = "0123456789ABCDEF"
	w.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			w.b.WriteString(`\"`)
		case '\\':
			w.b.WriteString(`\\`)
		case '\n':
			w.b.WriteString(`\n`)
		case '\t':
			w.b.WriteString(`\t`)
		case '\r':
			w.b.WriteString(`\r`)
		case 0:
			w.b.WriteString(`\0`)
		case 0x85:
			w.b.WriteString(`\N`)
		case 0x2028:
			w.b.WriteString(`\L`)
		case 0x2029:
			w.b.WriteString(`\P`)
		default:
			switch {
			case r < ' ' || r == 0x7f:
				w.b.WriteString(`\x`)
				w.b.WriteByte(hex[r>>4])
				w.b.WriteByte(hex[r&0xf])
			case r == 0xfeff || r > 0x7f && !unicode.IsPrint(r):
				if r > 0xffff {
					w.b.WriteString(`\U`)
					for shift := 28; shift >= 0; shift -= 4 {
						w.b.WriteByte(hex[(r>>shift)&0xf])
					}
				} else {
					w.b.WriteString(`\u`)
					for shift := 12; shift >= 0; shift -= 4 {
						w.b.WriteByte(hex[(r>>shift)&0xf])
					}
				}
			default:
				w.b.WriteRune(r)
			}
		}
	}
	w.b.WriteByte('"')
}

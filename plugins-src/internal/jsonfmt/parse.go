package jsonfmt

import (
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// kind is the kind of a token.
type kind uint8

const (
	objectStart kind = iota
	objectEnd
	arrayStart
	arrayEnd
	str
	number
	literal
)

// token is one JSON token: its kind and the bytes [start, end) of the text
// it was read from. For objectStart and arrayStart, match is the index of the
// closing token, so a writer can skip or reorder whole values.
type token struct {
	kind       kind
	start, end int32
	match      int32
}

// parser reads one JSON text into a token list. It is strict RFC 8259: no
// comments, no trailing commas, no single quotes, no leading zeros, no byte
// order mark, whitespace only space, tab, LF and CR.
type parser struct {
	text  string
	pos   int
	depth int
	toks  []token
	err   *textpos.Error
}

// parse tokenizes text. The returned error is a *textpos.Error.
func parse(text string) ([]token, error) {
	if i := invalidUTF8(text); i >= 0 {
		return nil, textpos.New(text, i, subject, "invalid UTF-8")
	}
	p := &parser{text: text, toks: make([]token, 0, 16+len(text)/6)}
	p.skipSpace()
	if p.pos == len(text) {
		p.fail(p.pos, "empty input")
		return nil, p.err
	}
	if !p.value() {
		return nil, p.err
	}
	p.skipSpace()
	if p.pos < len(text) {
		p.fail(p.pos, "unexpected data after the top-level value")
		return nil, p.err
	}
	return p.toks, nil
}

// fail records the parse's error, the first one only, and returns false
// for the reader that met it to return.
func (p *parser) fail(offset int, reason string) bool {
	if p.err == nil {
		p.err = textpos.New(p.text, offset, subject, reason)
	}
	return false
}

func (p *parser) skipSpace() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) emit(k kind, start, end int) int {
	p.toks = append(p.toks, token{kind: k, start: int32(start), end: int32(end)})
	return len(p.toks) - 1
}

// value reads one value at p.pos (whitespace already skipped).
func (p *parser) value() bool {
	if p.pos >= len(p.text) {
		return p.fail(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		return p.fail(p.pos, unexpected(p.text, p.pos, "expected a value"))
	}
}

// unexpected names the common mistakes at offset, or falls back to "unexpected
// character, <expected>".
func unexpected(text string, offset int, expected string) string {
	switch {
	case text[offset] == '\'':
		return "strings must use double quotes"
	case text[offset] == '/':
		return "comments are not allowed"
	case offset == 0 && len(text) >= 3 && text[:3] == "\uFEFF":
		return "byte order mark is not allowed"
	}
	return "unexpected character, " + expected
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth > MaxDepth {
		return p.fail(p.pos, "nesting deeper than 1000 levels")
	}
	return true
}

func (p *parser) object() bool {
	if !p.enter() {
		return false
	}
	open := p.emit(objectStart, p.pos, p.pos+1)
	p.pos++
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		return p.close(open, objectEnd)
	}
	for {
		if p.pos >= len(p.text) {
			return p.fail(p.pos, "unexpected end of input, expected an object key")
		}
		if p.text[p.pos] != '"' {
			return p.fail(p.pos, unexpected(p.text, p.pos, "expected a double-quoted object key"))
		}
		if !p.string() {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.fail(p.pos, "unexpected end of input, expected ':' after object key")
		}
		if p.text[p.pos] != ':' {
			return p.fail(p.pos, "expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		if !p.value() {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.fail(p.pos, "unexpected end of input, expected ',' or '}'")
		}
		switch p.text[p.pos] {
		case '}':
			return p.close(open, objectEnd)
		case ',':
			comma := p.pos
			p.pos++
			p.skipSpace()
			if p.pos < len(p.text) && p.text[p.pos] == '}' {
				return p.fail(comma, "trailing comma before '}'")
			}
		default:
			return p.fail(p.pos, unexpected(p.text, p.pos, "expected ',' or '}' after object member"))
		}
	}
}

func (p *parser) array() bool {
	if !p.enter() {
		return false
	}
	open := p.emit(arrayStart, p.pos, p.pos+1)
	p.pos++
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		return p.close(open, arrayEnd)
	}
	for {
		if !p.value() {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.text) {
			return p.fail(p.pos, "unexpected end of input, expected ',' or ']'")
		}
		switch p.text[p.pos] {
		case ']':
			return p.close(open, arrayEnd)
		case ',':
			comma := p.pos
			p.pos++
			p.skipSpace()
			if p.pos < len(p.text) && p.text[p.pos] == ']' {
				return p.fail(comma, "trailing comma before ']'")
			}
		default:
			return p.fail(p.pos, unexpected(p.text, p.pos, "expected ',' or ']' after array element"))
		}
	}
}

// close records the closing token at p.pos for the container opened at open.
func (p *parser) close(open int, k kind) bool {
	end := p.emit(k, p.pos, p.pos+1)
	p.toks[open].match = int32(end)
	p.pos++
	p.depth--
	return true
}

func (p *parser) string() bool {
	start := p.pos
	i := p.pos + 1
	for i < len(p.text) {
		c := p.text[i]
		switch {
		case c == '"':
			p.emit(str, start, i+1)
			p.pos = i + 1
			return true
		case c == '\\':
			if i+1 >= len(p.text) {
				return p.fail(i+1, "unexpected end of input in string")
			}
			switch p.text[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(p.text) {
						return p.fail(j, "unexpected end of input in \\u escape")
					}
					if !isHex(p.text[j]) {
						return p.fail(j, "invalid \\u escape, expected 4 hex digits")
					}
				}
				i += 6
			default:
				return p.fail(i, "invalid escape in string")
			}
		case c < 0x20:
			return p.fail(i, "control character in string, must be escaped")
		default:
			i++
		}
	}
	return p.fail(start, "unterminated string")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *parser) number() bool {
	start, i, t := p.pos, p.pos, p.text
	if t[i] == '-' {
		i++
	}
	switch {
	case i >= len(t) || !isDigit(t[i]):
		return p.fail(i, "invalid number, expected a digit")
	case t[i] == '0':
		i++
		if i < len(t) && isDigit(t[i]) {
			return p.fail(i, "invalid number, leading zero")
		}
	default:
		for i < len(t) && isDigit(t[i]) {
			i++
		}
	}
	if i < len(t) && t[i] == '.' {
		i++
		if i >= len(t) || !isDigit(t[i]) {
			return p.fail(i, "invalid number, expected a digit after the decimal point")
		}
		for i < len(t) && isDigit(t[i]) {
			i++
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		if i >= len(t) || !isDigit(t[i]) {
			return p.fail(i, "invalid number, expected a digit in the exponent")
		}
		for i < len(t) && isDigit(t[i]) {
			i++
		}
	}
	p.emit(number, start, i)
	p.pos = i
	return true
}

func (p *parser) literal(word string) bool {
	for k := 0; k < len(word); k++ {
		if p.pos+k >= len(p.text) || p.text[p.pos+k] != word[k] {
			return p.fail(p.pos, "invalid literal, expected true, false or null")
		}
	}
	p.emit(literal, p.pos, p.pos+len(word))
	p.pos += len(word)
	return true
}

// invalidUTF8 returns the offset of the first byte that is not part of valid
// UTF-8, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

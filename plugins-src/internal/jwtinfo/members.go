package jwtinfo

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The header and the claims are read without encoding/json, which would
// add about half a megabyte to the module for five members: jsonfmt's
// strict parser validates the text (RFC 8259, bounded nesting), and the
// functions below walk the top level of the object it accepted.

// members returns the top-level members of a JSON text that jsonfmt
// accepted — each name, unescaped, and its value's raw text — or false
// when the text is not an object. A repeated name keeps its last value, as
// RFC 7515 §4 allows a parser to.
func members(text string) (map[string]string, bool) {
	i := skipSpace(text, 0)
	if i >= len(text) || text[i] != '{' {
		return nil, false
	}
	m := map[string]string{}
	i = skipSpace(text, i+1)
	for i < len(text) && text[i] != '}' {
		end := stringEnd(text, i)
		name := unquote(text[i:end])
		i = skipSpace(text, skipSpace(text, end)+1) // past the ':'
		vend := valueEnd(text, i)
		m[name] = text[i:vend]
		i = skipSpace(text, vend)
		if i < len(text) && text[i] == ',' {
			i = skipSpace(text, i+1)
		}
	}
	return m, true
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at s[i].
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// valueEnd returns the index after the value that starts at s[i].
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = stringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n,}]", rune(s[j])) {
		j++
	}
	return j
}

// unquote returns the value of a valid JSON string literal q; a lone
// surrogate escape is U+FFFD.
func unquote(q string) string {
	q = q[1 : len(q)-1]
	if !strings.ContainsRune(q, '\\') {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] != '\\' {
			b.WriteByte(q[i])
			continue
		}
		i++
		switch q[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(q[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(q) && q[i+1] == '\\' && q[i+2] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(q[i+3:i+7])); pair != utf8.RuneError {
					r = pair
					i += 6
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default: // " \ /
			b.WriteByte(q[i])
		}
	}
	return b.String()
}

func hex4(s string) rune {
	n, _ := strconv.ParseUint(s, 16, 16)
	return rune(n)
}

// stringValue returns the value of the raw member value v when it is a
// JSON string.
func stringValue(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	return unquote(v), true
}

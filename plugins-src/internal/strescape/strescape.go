// Package strescape escapes text as the contents of a JSON string
// (RFC 8259, section 7) or of a JavaScript string literal (ECMA-262,
// "String Literals"), and reads such contents back. It is written by hand:
// encoding/json escapes <, > and & for HTML and has no JavaScript forms,
// and strconv.Quote is Go's syntax, not these.
//
// Unescaping never quotes the text in an error: a fault is a
// *textpos.Error at the byte it starts.
package strescape

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

const hexDigits = "0123456789ABCDEF"

// JSONEscape returns text as the contents of a JSON string: '"' and '\'
// escaped, the control characters U+0000–U+001F as \b \f \n \r \t or
// \u00XX, and, when ascii, every code point above U+007E as \uXXXX (a
// surrogate pair above U+FFFF). quote adds the surrounding quotes.
func JSONEscape(text string, ascii, quote bool) string {
	var b strings.Builder
	b.Grow(len(text) + 2)
	if quote {
		b.WriteByte('"')
	}
	for _, r := range text {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20:
				writeU(&b, r)
			case ascii && r > 0x7e:
				writeUTF16(&b, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	if quote {
		b.WriteByte('"')
	}
	return b.String()
}

// JSEscape returns text as the contents of a JavaScript string literal in
// single or double quotes (or a template literal: '`' and "${" are escaped
// too): '\', both quotes and '`' escaped, \b \f \n \r \t \v, the other
// controls (U+0000–U+001F, U+007F) as \xHH, U+2028 and U+2029 as \u2028
// and \u2029, and, when ascii, every code point above U+007E as \uXXXX
// (a surrogate pair above U+FFFF, valid in every edition).
func JSEscape(text string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(text))
	for i, r := range text {
		switch r {
		case '\\', '\'', '"', '`':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '$':
			if i+1 < len(text) && text[i+1] == '{' {
				b.WriteString(`\$`)
			} else {
				b.WriteByte('$')
			}
		case 0x2028, 0x2029:
			writeU(&b, r)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xf])
			case ascii && r > 0x7e:
				writeUTF16(&b, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// writeU writes \uXXXX for a code point of the BMP.
func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}

// writeUTF16 writes r as \uXXXX, or as a surrogate pair above U+FFFF.
func writeUTF16(b *strings.Builder, r rune) {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		writeU(b, hi)
		writeU(b, lo)
		return
	}
	writeU(b, r)
}

// The subjects of the unescape errors.
const (
	notJSON = "text is not a valid JSON string"
	notJS   = "text is not a valid JavaScript string"
)

// JSONUnescape reads the contents of a JSON string, or a whole JSON string
// literal when text starts with '"' (a raw '"' cannot be contents). It
// refuses what RFC 8259 refuses — a raw '"' or control character, an
// escape other than \" \\ \/ \b \f \n \r \t \uXXXX — and a \u escape of a
// lone surrogate, which no UTF-8 text can hold.
func JSONUnescape(text string) (string, error) {
	body, base := text, 0
	if strings.HasPrefix(text, `"`) {
		if len(text) < 2 || !strings.HasSuffix(text, `"`) || strings.HasSuffix(text, `\"`) && !evenBackslashesBefore(text, len(text)-1) {
			return "", textpos.New(text, len(text), notJSON, "unterminated string literal")
		}
		body, base = text[1:len(text)-1], 1
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			return "", textpos.New(text, base+i, notJSON, "unescaped quote")
		case c < 0x20:
			return "", textpos.New(text, base+i, notJSON, "unescaped control character")
		case c != '\\':
			_, size := utf8.DecodeRuneInString(body[i:])
			b.WriteString(body[i : i+size])
			i += size
			continue
		}
		if i+1 >= len(body) {
			return "", textpos.New(text, base+i, notJSON, "incomplete escape")
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
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
			r, n, reason := readU(body, i, false)
			if reason != "" {
				return "", textpos.New(text, base+i, notJSON, reason)
			}
			b.WriteRune(r)
			i += n
			continue
		default:
			return "", textpos.New(text, base+i, notJSON, "invalid escape")
		}
		i += 2
	}
	return b.String(), nil
}

// evenBackslashesBefore reports whether an even number of backslashes
// stands right before byte end of s (so the quote at end is not escaped).
func evenBackslashesBefore(s string, end int) bool {
	n := 0
	for i := end - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

// readU reads the \u escape at s[i:] — \uXXXX, a surrogate pair of two,
// and with braces (JavaScript) \u{X…} — and returns the code point, the
// bytes read, or the reason it is not one.
func readU(s string, i int, braces bool) (rune, int, string) {
	if braces && i+2 < len(s) && s[i+2] == '{' {
		end := strings.IndexByte(s[i+3:], '}')
		if end < 1 || end > 8 {
			return 0, 0, `invalid \u{…} escape`
		}
		v, err := strconv.ParseUint(s[i+3:i+3+end], 16, 32)
		if err != nil || v > utf8.MaxRune {
			return 0, 0, `invalid \u{…} escape`
		}
		if utf16.IsSurrogate(rune(v)) {
			return 0, 0, "lone surrogate"
		}
		return rune(v), 4 + end, ""
	}
	hi, ok := hex4(s, i+2)
	if !ok {
		return 0, 0, `incomplete \u escape`
	}
	if !utf16.IsSurrogate(hi) {
		return hi, 6, ""
	}
	if hi < 0xdc00 && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
		if lo, ok := hex4(s, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return utf16.DecodeRune(hi, lo), 12, ""
		}
	}
	return 0, 0, "lone surrogate"
}

// hex4 parses the four hexadecimal digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(v), err == nil
}

// JSUnescape reads the contents of a JavaScript string literal (without
// its quotes): \b \f \n \r \t \v, \0 not followed by a digit, \xHH,
// \uXXXX (surrogate pairs joined), \u{X…}, a backslash before a line
// break (a line continuation, which adds nothing) and a backslash before
// any other character, which stands for that character (\' \" \\ \q). It
// refuses what strict-mode code refuses — the legacy octal escapes \1 to
// \7 and \0 followed by a digit, and \8 \9 — a malformed \x or \u, and a
// lone surrogate, which no UTF-8 text can hold.
func JSUnescape(text string) (string, error) {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		if text[i] != '\\' {
			_, size := utf8.DecodeRuneInString(text[i:])
			b.WriteString(text[i : i+size])
			i += size
			continue
		}
		if i+1 >= len(text) {
			return "", textpos.New(text, i, notJS, "incomplete escape")
		}
		n := 2
		switch e := text[i+1]; e {
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
		case 'v':
			b.WriteByte('\v')
		case '0':
			if i+2 < len(text) && text[i+2] >= '0' && text[i+2] <= '9' {
				return "", textpos.New(text, i, notJS, "octal escape (not allowed in strict mode)")
			}
			b.WriteByte(0)
		case '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return "", textpos.New(text, i, notJS, "octal escape (not allowed in strict mode)")
		case 'x':
			digits := substr(text, i+2, 2)
			v, err := strconv.ParseUint(digits, 16, 8)
			if err != nil || len(digits) != 2 {
				return "", textpos.New(text, i, notJS, `incomplete \x escape`)
			}
			b.WriteRune(rune(v))
			n = 4
		case 'u':
			r, size, reason := readU(text, i, true)
			if reason != "" {
				return "", textpos.New(text, i, notJS, reason)
			}
			b.WriteRune(r)
			n = size
		case '\n':
			// a line continuation
		case '\r':
			if i+2 < len(text) && text[i+2] == '\n' {
				n = 3
			}
		default:
			r, size := utf8.DecodeRuneInString(text[i+1:])
			n = 1 + size
			if r != 0x2028 && r != 0x2029 { // U+2028 and U+2029 continue the line too
				b.WriteString(text[i+1 : i+n])
			}
		}
		i += n
	}
	return b.String(), nil
}

// substr is s[i:i+n], or what there is of it.
func substr(s string, i, n int) string {
	if i >= len(s) {
		return ""
	}
	return s[i:min(i+n, len(s))]
}

package strescape

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// samples are texts every escape must carry unchanged through its unescape.
var samples = []string{
	"", "plain", `quote " and back\slash`, "tab\tline\nreturn\r\x00\x01\x1f\x7f",
	"héllo 中文 😀 \u2028\u2029", "it's `${x}` $y", "\b\f\v",
}

// The reference implementation for JSON is encoding/json: what JSONEscape
// writes, json.Unmarshal must read back to the same text, and for valid
// contents JSONUnescape must read what json.Unmarshal reads.
func TestJSONRoundTrip(t *testing.T) {
	for _, s := range samples {
		for _, ascii := range []bool{false, true} {
			esc := JSONEscape(s, ascii, true)
			var got string
			if err := json.Unmarshal([]byte(esc), &got); err != nil || got != s {
				t.Errorf("JSONEscape(%q, %v) = %s: json reads %q, %v", s, ascii, esc, got, err)
			}
			if ascii && strings.ContainsFunc(esc, func(r rune) bool { return r > 0x7e }) {
				t.Errorf("JSONEscape(%q, ascii) = %s is not ASCII", s, esc)
			}
			if got, err := JSONUnescape(esc); err != nil || got != s {
				t.Errorf("JSONUnescape(%s) = %q, %v", esc, got, err)
			}
			if got, err := JSONUnescape(esc[1 : len(esc)-1]); err != nil || got != s {
				t.Errorf("JSONUnescape(contents of %s) = %q, %v", esc, got, err)
			}
		}
	}
}

// RFC 8259, section 7: the escapes, and "\uD834\uDD1E" for U+1D11E (G clef).
func TestJSON(t *testing.T) {
	if got := JSONEscape("a\"b\\c\n\u0001é😀</", false, false); got != `a\"b\\c\n\u0001é😀</` {
		t.Errorf("JSONEscape = %s", got)
	}
	if got := JSONEscape("é\U0001D11E", true, false); got != `\u00E9\uD834\uDD1E` {
		t.Errorf("JSONEscape(ascii) = %s", got)
	}
	for in, want := range map[string]string{
		`\uD834\uDD1E`:         "\U0001D11E",
		`\u00e9\/\"`:           `é/"`,
		`"quoted \"literal\""`: `quoted "literal"`,
		`""`:                   "",
		`a'b`:                  "a'b",
	} {
		if got, err := JSONUnescape(in); err != nil || got != want {
			t.Errorf("JSONUnescape(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []struct {
		in     string
		offset int
		reason string
	}{
		{`ab"c`, 2, "unescaped quote"},
		{"a\tb", 1, "unescaped control character"},
		{`a\x41`, 1, "invalid escape"},
		{`a\'`, 1, "invalid escape"},
		{`a\`, 1, "incomplete escape"},
		{`\u12`, 0, `incomplete \u escape`},
		{`\uD834`, 0, "lone surrogate"},
		{`\uDD1E\uD834`, 0, "lone surrogate"},
		{`"abc`, 4, "unterminated string literal"},
		{`"abc\"`, 6, "unterminated string literal"},
		{`"`, 1, "unterminated string literal"},
		{`"a"b"`, 2, "unescaped quote"},
	}
	for _, tt := range bad {
		_, err := JSONUnescape(tt.in)
		var pe *textpos.Error
		if !errors.As(err, &pe) || pe.Subject != notJSON || pe.Reason != tt.reason || pe.Position.Offset != tt.offset {
			t.Errorf("JSONUnescape(%s) = %v; want %q at byte %d", tt.in, err, tt.reason, tt.offset)
		}
	}
}

// ECMA-262, "String Literals" (SingleEscapeCharacter, HexEscapeSequence,
// UnicodeEscapeSequence, LineContinuation, NonEscapeCharacter) and the
// strict-mode rule on LegacyOctalEscapeSequence and \8 \9.
func TestJS(t *testing.T) {
	if got := JSEscape("it's \"q\" `t` ${x} $y \\ \n\r\t\b\f\v\x00\x1b\x7f \u2028", false); got != `it\'s \"q\" \`+"`"+`t\`+"`"+` \${x} $y \\ \n\r\t\b\f\v\x00\x1B\x7F \u2028` {
		t.Errorf("JSEscape = %s", got)
	}
	if got := JSEscape("é😀", true); got != `\u00E9\uD83D\uDE00` {
		t.Errorf("JSEscape(ascii) = %s", got)
	}
	for in, want := range map[string]string{
		`\b\f\n\r\t\v\0`:         "\b\f\n\r\t\v\x00",
		`\x41\u0042\u{43}`:       "ABC",
		`\u{1F600}\uD83D\uDE00`:  "😀😀",
		`\'\"\\\q\$`:             `'"\q$`,
		"a\\\nb\\\r\nc\\\u2028d": "abcd",
		`it's "raw"`:             `it's "raw"`,
	} {
		if got, err := JSUnescape(in); err != nil || got != want {
			t.Errorf("JSUnescape(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, s := range samples {
		for _, ascii := range []bool{false, true} {
			if got, err := JSUnescape(JSEscape(s, ascii)); err != nil || got != s {
				t.Errorf("JSUnescape(JSEscape(%q, %v)) = %q, %v", s, ascii, got, err)
			}
		}
	}
	bad := []struct {
		in     string
		offset int
		reason string
	}{
		{`a\1`, 1, "octal escape (not allowed in strict mode)"},
		{`\01`, 0, "octal escape (not allowed in strict mode)"},
		{`\8`, 0, "octal escape (not allowed in strict mode)"},
		{`\x4`, 0, `incomplete \x escape`},
		{`\xZZ`, 0, `incomplete \x escape`},
		{`\u004`, 0, `incomplete \u escape`},
		{`\u{110000}`, 0, `invalid \u{…} escape`},
		{`\u{}`, 0, `invalid \u{…} escape`},
		{`\u{D800}`, 0, "lone surrogate"},
		{`\uDE00`, 0, "lone surrogate"},
		{`ab\`, 2, "incomplete escape"},
	}
	for _, tt := range bad {
		_, err := JSUnescape(tt.in)
		var pe *textpos.Error
		if !errors.As(err, &pe) || pe.Subject != notJS || pe.Reason != tt.reason || pe.Position.Offset != tt.offset {
			t.Errorf("JSUnescape(%s) = %v; want %q at byte %d", tt.in, err, tt.reason, tt.offset)
		}
	}
}

func FuzzUnescape(f *testing.F) {
	for _, s := range samples {
		f.Add(JSONEscape(s, true, false))
		f.Add(JSEscape(s, true))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // parameters are JSON: their strings are UTF-8
		}
		if out, err := JSONUnescape(s); err == nil {
			var ref string
			if json.Unmarshal([]byte(`"`+strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)+`"`), &ref) == nil && strings.HasPrefix(s, `"`) == strings.HasSuffix(s, `"`) && ref != out {
				t.Errorf("JSONUnescape(%q) = %q, encoding/json reads %q", s, out, ref)
			}
		}
		JSUnescape(s)
	})
}

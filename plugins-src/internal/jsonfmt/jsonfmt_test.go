package jsonfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		text string
		o    Options
		want string
	}{
		{name: "indent 2", text: `{"a":1,"b":[true,null]}`, o: Options{Indent: 2},
			want: "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}"},
		{name: "indent 4", text: `[1,{"x":"y"}]`, o: Options{Indent: 4},
			want: "[\n    1,\n    {\n        \"x\": \"y\"\n    }\n]"},
		{name: "indent 0 is compact", text: " { \"a\" : [ 1 , 2 ] } ", o: Options{Indent: 0},
			want: `{"a":[1,2]}`},
		{name: "empty containers stay on one line", text: `{"a":{ },"b":[ ]}`, o: Options{Indent: 2},
			want: "{\n  \"a\": {},\n  \"b\": []\n}"},
		{name: "scalar top level", text: "  42  ", o: Options{Indent: 2}, want: "42"},
		{name: "numbers kept as written", text: `[1.0,-0,1E+2,12345678901234567890123]`, o: Options{},
			want: `[1.0,-0,1E+2,12345678901234567890123]`},
		{name: "escapes kept as written", text: `["\u00e9\n\/"]`, o: Options{}, want: `["\u00e9\n\/"]`},
		{name: "unicode passes through", text: `{"clé":"😀 中文"}`, o: Options{Indent: 1},
			want: "{\n \"clé\": \"😀 中文\"\n}"},
		{name: "sort keys", text: `{"b":1,"a":{"d":2,"c":3}}`, o: Options{Indent: 2, SortKeys: true},
			want: "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}"},
		{name: "sort keys compact", text: `{"b":1,"a":2}`, o: Options{SortKeys: true}, want: `{"a":2,"b":1}`},
		{name: "sort keys by code point after unescaping", text: `{"é":1,"\u0065":2,"z":3,"😀":4,"\ud83d\ude00x":5}`,
			o: Options{SortKeys: true}, want: `{"\u0065":2,"z":3,"é":1,"😀":4,"\ud83d\ude00x":5}`},
		{name: "sort keys keeps duplicates in order", text: `{"b":1,"a":2,"b":3}`, o: Options{SortKeys: true},
			want: `{"a":2,"b":1,"b":3}`},
		{name: "sort keys inside arrays", text: `[{"b":1,"a":2}]`, o: Options{SortKeys: true}, want: `[{"a":2,"b":1}]`},
		{name: "lone surrogate key sorts", text: `{"\udc00":1,"\uffff":2,"a":3}`, o: Options{SortKeys: true},
			want: `{"a":3,"\udc00":1,"\uffff":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Format(tt.text, tt.o)
			if err != nil {
				t.Fatalf("Format: %v", err)
			}
			if got != tt.want {
				t.Errorf("Format = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMinify(t *testing.T) {
	got, err := Minify("{\n  \"a\": [1, 2],\n\t\"b\": \" spaced  string \"\r\n}")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[1,2],"b":" spaced  string "}`; got != want {
		t.Errorf("Minify = %q, want %q", got, want)
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		offset int
		line   int
		column int
		reason string
	}{
		{name: "empty", text: "", offset: 0, line: 1, column: 1, reason: "empty input"},
		{name: "whitespace only", text: " \n ", offset: 3, line: 2, column: 2, reason: "empty input"},
		{name: "missing colon", text: `{"a" 1}`, offset: 5, line: 1, column: 6, reason: "expected ':' after object key"},
		{name: "trailing comma object", text: "{\"a\":1,\n}", offset: 6, line: 1, column: 7, reason: "trailing comma before '}'"},
		{name: "trailing comma array", text: `[1,2,]`, offset: 4, line: 1, column: 5, reason: "trailing comma before ']'"},
		{name: "single quotes", text: `{'a':1}`, offset: 1, line: 1, column: 2, reason: "strings must use double quotes"},
		{name: "unquoted key", text: `{a:1}`, offset: 1, line: 1, column: 2, reason: "unexpected character, expected a double-quoted object key"},
		{name: "comment", text: "[1, // x\n2]", offset: 4, line: 1, column: 5, reason: "comments are not allowed"},
		{name: "unterminated string", text: `["abc`, offset: 1, line: 1, column: 2, reason: "unterminated string"},
		{name: "bad escape", text: `["a\x"]`, offset: 3, line: 1, column: 4, reason: "invalid escape in string"},
		{name: "bad unicode escape", text: `["\u12g4"]`, offset: 6, line: 1, column: 7, reason: "invalid \\u escape, expected 4 hex digits"},
		{name: "raw control character", text: "[\"a\tb\"]", offset: 3, line: 1, column: 4, reason: "control character in string, must be escaped"},
		{name: "leading zero", text: `[01]`, offset: 2, line: 1, column: 3, reason: "invalid number, leading zero"},
		{name: "bare minus", text: `-`, offset: 1, line: 1, column: 2, reason: "invalid number, expected a digit"},
		{name: "bare decimal point", text: `1.`, offset: 2, line: 1, column: 3, reason: "invalid number, expected a digit after the decimal point"},
		{name: "empty exponent", text: `1e+`, offset: 3, line: 1, column: 4, reason: "invalid number, expected a digit in the exponent"},
		{name: "bad literal", text: `[tru]`, offset: 1, line: 1, column: 2, reason: "invalid literal, expected true, false or null"},
		{name: "NaN", text: `NaN`, offset: 0, line: 1, column: 1, reason: "unexpected character, expected a value"},
		{name: "two values", text: `1 2`, offset: 2, line: 1, column: 3, reason: "unexpected data after the top-level value"},
		{name: "unclosed object", text: `{"a":1`, offset: 6, line: 1, column: 7, reason: "unexpected end of input, expected ',' or '}'"},
		{name: "unclosed array", text: "[\n1,", offset: 4, line: 2, column: 3, reason: "unexpected end of input, expected a value"},
		{name: "missing comma", text: `[1 2]`, offset: 3, line: 1, column: 4, reason: "unexpected character, expected ',' or ']' after array element"},
		{name: "byte order mark", text: "\uFEFF{}", offset: 0, line: 1, column: 1, reason: "byte order mark is not allowed"},
		{name: "position after unicode", text: `{"é😀": x}`, offset: 11, line: 1, column: 8, reason: "unexpected character, expected a value"},
		{name: "crlf lines", text: "{\r\n\"a\":\r\n}", offset: 9, line: 3, column: 1, reason: "unexpected character, expected a value"},
		{name: "invalid utf-8", text: "[\"\xff\"]", offset: 2, line: 1, column: 3, reason: "invalid UTF-8"},
		{name: "too deep", text: strings.Repeat("[", MaxDepth+1), offset: MaxDepth, line: 1, column: MaxDepth + 1, reason: "nesting deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.text)
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Validate = %v, want a *textpos.Error", err)
			}
			want := textpos.Position{Offset: tt.offset, Line: tt.line, Column: tt.column}
			if pe.Position != want || pe.Reason != tt.reason {
				t.Errorf("got %+v %q, want %+v %q", pe.Position, pe.Reason, want, tt.reason)
			}
			if _, err := Format(tt.text, Options{Indent: 2}); !errors.As(err, &pe) {
				t.Errorf("Format = %v, want a *textpos.Error", err)
			}
			if _, err := Minify(tt.text); !errors.As(err, &pe) {
				t.Errorf("Minify = %v, want a *textpos.Error", err)
			}
		})
	}
}

func TestErrorDoesNotQuoteText(t *testing.T) {
	err := Validate(`{"secret-value" 1}`)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Validate = %v", err)
	}
	if want := "text is not valid JSON: expected ':' after object key at line 1, column 17 (byte 16)"; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}

func TestDepthLimitAccepted(t *testing.T) {
	text := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if err := Validate(text); err != nil {
		t.Fatalf("Validate at MaxDepth: %v", err)
	}
}

func TestIndentRange(t *testing.T) {
	for _, indent := range []int{-1, MaxIndent + 1, 1 << 30} {
		if _, err := Format(`{}`, Options{Indent: indent}); !errors.Is(err, ErrIndent) {
			t.Errorf("Format indent %d = %v, want ErrIndent", indent, err)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	text := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Format(text, Options{Indent: 8, MaxBytes: 256 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Format = %v, want ErrTooLarge", err)
	}
	got, err := Format(`[1,2]`, Options{Indent: 2, MaxBytes: 12})
	if err != nil || got != "[\n  1,\n  2\n]" {
		t.Errorf("Format at exactly the limit = %q, %v", got, err)
	}
	if _, err := Format(`[1,2]`, Options{Indent: 2, MaxBytes: 11}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Format one byte over = %v, want ErrTooLarge", err)
	}
}

// TestAgreesWithEncodingJSON checks validity and compaction against the
// standard library on a small corpus.
func TestAgreesWithEncodingJSON(t *testing.T) {
	corpus := []string{
		`{}`, `[]`, `""`, `0`, `-0.5e-3`, `true`, `{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}`,
		`{"a" : 1 , }`, `[1,,2]`, `{"a":1}}`, `01`, `.5`, `1.e3`, `"\u00"`, `[`, `]`, `nul`, "\"a\nb\"",
		" [ 1 , 2 ] ", `{"a":"b","a":"c"}`, `"\ud800"`,
	}
	for _, text := range corpus {
		want := json.Valid([]byte(text))
		if got := Validate(text) == nil; got != want {
			t.Errorf("Validate(%q) valid = %v, encoding/json says %v", text, got, want)
			continue
		}
		if !want {
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(text)); err != nil {
			t.Fatal(err)
		}
		got, err := Minify(text)
		if err != nil || got != compact.String() {
			t.Errorf("Minify(%q) = %q, %v, want %q", text, got, err, compact.String())
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id":12345,"name":"élément 😀","tags":["a","b"],"ok":true,"ratio":0.25}`)
	}
	sb.WriteString("]")
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Format(text, Options{Indent: 2, SortKeys: true}); err != nil {
			b.Fatal(err)
		}
	}
}

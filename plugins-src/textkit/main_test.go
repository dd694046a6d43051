package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/bundledtest"
)

// codes are the package's services, in declaration order.
var codes = []string{"text_stats", "lines", "whitespace", "line_endings"}

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, codes...)
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for _, c := range []struct{ code, op string }{
		{"text_stats", "count"}, {"lines", "sort"}, {"lines", "shuffle"}, {"whitespace", "trim"}, {"line_endings", "convert"},
	} {
		if got := tools.MaxLength(c.code, c.op, "text"); got != bundled.MaxTextLength {
			t.Errorf("%s/%s text maxLength = %d", c.code, c.op, got)
		}
	}
}

// want runs an item that must succeed and compares its canonical result.
func want(t *testing.T, tools *bundledtest.Tools, code, params, result string) {
	t.Helper()
	got, err := tools.Run(t, code, params)
	if err != nil {
		t.Fatalf("%s %s: %v", code, params, err)
	}
	if g, w := canon(t, got), canonString(t, result); g != w {
		t.Errorf("%s %s:\n got %s\nwant %s", code, params, g, w)
	}
}

func TestTextStats(t *testing.T) {
	tools := load(t)
	// "😀".length is 2 in JavaScript (UTF-16), 1 code point, 4 bytes.
	want(t, tools, "text_stats", `{"operation":"count","text":"Héllo wörld 😀\n\n  line 3\r\n"}`,
		`{"bytes":30,"code_points":25,"utf16_units":26,"letters":14,"digits":1,"spaces":9,"words":5,"lines":3,"blank_lines":1,"longest_line":13}`)
	want(t, tools, "text_stats", `{"operation":"count","text":""}`,
		`{"bytes":0,"code_points":0,"utf16_units":0,"letters":0,"digits":0,"spaces":0,"words":0,"lines":0,"blank_lines":0,"longest_line":0}`)
	tools.Refused(t, "text_stats", `{"operation":"count"}`)
	tools.Refused(t, "text_stats", `{"operation":"count","text":"x","extra":1}`)
	tools.Refused(t, "text_stats", `{"operation":"count","text":"`+strings.Repeat("a", bundled.MaxTextLength+1)+`"}`)
}

func TestLines(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, result string }{
		{"sort", `{"operation":"sort","text":"pear\nApple\nbanana\n"}`, `{"text":"Apple\nbanana\npear\n","lines":3}`},
		{"sort desc ignoring case", `{"operation":"sort","text":"b\nA\nc","order":"desc","ignore_case":true}`, `{"text":"c\nb\nA","lines":3}`},
		{"sort numeric", `{"operation":"sort","text":"10 x\r\n9 x\r\nz\r\n-1 x","numeric":true}`, `{"text":"-1 x\r\n9 x\r\n10 x\r\nz","lines":4}`},
		{"dedupe", `{"operation":"dedupe","text":"a\nb\na\nA\n"}`, `{"text":"a\nb\nA\n","lines":3,"removed":1}`},
		{"dedupe ignoring case", `{"operation":"dedupe","text":"a\nb\na\nA\n","ignore_case":true}`, `{"text":"a\nb\n","lines":2,"removed":2}`},
		{"reverse", `{"operation":"reverse","text":"1\n2\n3"}`, `{"text":"3\n2\n1","lines":3}`},
		{"shuffle", `{"operation":"shuffle","text":"a\nb\nc\nd\ne\nf\ng","seed":42}`, `{"text":"d\nb\ng\ne\na\nf\nc","lines":7}`},
		{"empty", `{"operation":"reverse","text":""}`, `{"text":"","lines":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { want(t, tools, "lines", tt.params, tt.result) })
	}
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a"}`)
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a","seed":-1}`)
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a","seed":9007199254740992}`)
	tools.Refused(t, "lines", `{"operation":"reverse","text":"a","seed":1}`)
	tools.Refused(t, "lines", `{"operation":"sort","text":"a","order":"up"}`)
	tools.Refused(t, "lines", `{"operation":"dedupe","text":"a","numeric":true}`)
	tools.Refused(t, "lines", `{"operation":"rotate","text":"a"}`)
}

func TestWhitespace(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, result string }{
		{"trim lines", `{"operation":"trim","text":"  a \n\tb\t"}`, `{"text":"a\nb"}`},
		{"trim text end", `{"operation":"trim","text":"  a \n\n","where":"end","scope":"text"}`, `{"text":"  a"}`},
		{"trim start", `{"operation":"trim","text":"  a \n  b ","where":"start"}`, `{"text":"a \nb "}`},
		{"collapse", `{"operation":"collapse","text":" a  \t b \n\u00a0c\u3000 d"}`, `{"text":"a b\nc d"}`},
		{"remove blank lines", `{"operation":"remove_blank_lines","text":"a\n\n \nb\n"}`, `{"text":"a\nb\n","removed":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { want(t, tools, "whitespace", tt.params, tt.result) })
	}
	tools.Refused(t, "whitespace", `{"operation":"trim","text":"a","where":"middle"}`)
	tools.Refused(t, "whitespace", `{"operation":"collapse","text":"a","scope":"text"}`)
}

func TestLineEndings(t *testing.T) {
	tools := load(t)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\r\nb\nc\rd","to":"crlf"}`, `{"text":"a\r\nb\r\nc\r\nd"}`)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\r\nb\r\n","to":"lf"}`, `{"text":"a\nb\n"}`)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\nb","to":"cr"}`, `{"text":"a\rb"}`)
	want(t, tools, "line_endings", `{"operation":"detect","text":"a\r\nb\nc\r\n"}`, `{"lf":1,"crlf":2,"cr":0,"style":"mixed"}`)
	want(t, tools, "line_endings", `{"operation":"detect","text":"abc"}`, `{"lf":0,"crlf":0,"cr":0,"style":"none"}`)
	tools.Refused(t, "line_endings", `{"operation":"convert","text":"a"}`)
	tools.Refused(t, "line_endings", `{"operation":"convert","text":"a","to":"nel"}`)
	tools.Refused(t, "line_endings", `{"operation":"detect","text":"a","to":"lf"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "textkit")
	long := strings.Repeat(`Héllo wörld  \t 12 Привет 中文 😀\r\n  \nzeta 3\n`, 1500) // JSON escapes
	for _, item := range []struct{ code, params string }{
		{"text_stats", `{"operation":"count","text":"` + long + `"}`},
		{"text_stats", `{"operation":"count","text":"é😀\n"}`},
		{"lines", `{"operation":"sort","text":"` + long + `","numeric":true,"ignore_case":true}`},
		{"lines", `{"operation":"sort","text":"` + long + `","order":"desc"}`},
		{"lines", `{"operation":"dedupe","text":"` + long + `"}`},
		{"lines", `{"operation":"reverse","text":"` + long + `"}`},
		{"lines", `{"operation":"shuffle","text":"` + long + `","seed":9007199254740991}`},
		{"whitespace", `{"operation":"trim","text":"` + long + `","where":"end"}`},
		{"whitespace", `{"operation":"collapse","text":"` + long + `"}`},
		{"whitespace", `{"operation":"remove_blank_lines","text":"` + long + `"}`},
		{"line_endings", `{"operation":"convert","text":"` + long + `","to":"cr"}`},
		{"line_endings", `{"operation":"detect","text":"` + long + `"}`},
	} {
		tools.Same(t, mod, item.code, item.params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range codes {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}

package cssfmt

import (
	"errors"
	"strings"
	"testing"
)

func TestBeautify(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		indent int
		want   string
	}{
		{name: "empty", text: "", indent: 2, want: ""},
		{name: "whitespace only", text: " \n\t ", indent: 2, want: ""},
		{name: "one rule", text: "a{color:red;margin:0 auto}", indent: 2,
			want: "a {\n  color: red;\n  margin: 0 auto\n}"},
		{name: "two rules and a blank line", text: "a{color:red}b{color:blue}", indent: 4,
			want: "a {\n    color: red\n}\n\nb {\n    color: blue\n}"},
		{name: "selector colons untouched", text: "a:hover , li:nth-child(2n+1)::before{x:y}", indent: 2,
			want: "a:hover , li:nth-child(2n+1)::before {\n  x: y\n}"},
		{name: "media nesting", text: "@media (min-width:600px){.a{display:none;}}", indent: 2,
			want: "@media (min-width:600px) {\n  .a {\n    display: none;\n  }\n}"},
		{name: "url with semicolon", text: "a{background:url(data:image/png;base64,AAAA);}", indent: 2,
			want: "a {\n  background: url(data:image/png;base64,AAAA);\n}"},
		{name: "strings kept", text: "a::after{content:\"  a;{b}  \";font-family:'My  Font'}", indent: 2,
			want: "a::after {\n  content: \"  a;{b}  \";\n  font-family: 'My  Font'\n}"},
		{name: "comments", text: "/* head */\na{ /* in */ color : red ; /* after */ }", indent: 2,
			want: "/* head */\na {\n  /* in */\n  color: red;\n  /* after */\n}"},
		{name: "import and charset", text: "@charset \"utf-8\";@import url(x.css) screen;a{b:c}", indent: 2,
			want: "@charset \"utf-8\";\n@import url(x.css) screen;\na {\n  b: c\n}"},
		{name: "empty statements dropped", text: "a{;;color:red;;}", indent: 2, want: "a {\n  color: red;\n}"},
		{name: "indent 0", text: "a{b:c}", indent: 0, want: "a {\nb: c\n}"},
		{name: "unicode", text: ".café::before{content:\"😀 中\"}", indent: 2,
			want: ".café::before {\n  content: \"😀 中\"\n}"},
		{name: "escape", text: ".a\\:b{c:d}", indent: 2, want: ".a\\:b {\n  c: d\n}"},
		{name: "unbalanced close", text: "}a{b:c}", indent: 2, want: "}\n\na {\n  b: c\n}"},
		{name: "unclosed block", text: "a{b:c", indent: 2, want: "a {\n  b: c"},
		{name: "unterminated comment", text: "a{b:c}/* open", indent: 2, want: "a {\n  b: c\n}\n\n/* open"},
		{name: "important", text: "a{color:red!important}", indent: 2, want: "a {\n  color: red!important\n}"},
		{name: "nested css", text: ".a{color:red;&:hover{color:blue}}", indent: 2,
			want: ".a {\n  color: red;\n  &:hover {\n    color: blue\n  }\n}"},
		{name: "custom property", text: ":root{--gap:  4px  8px}", indent: 2, want: ":root {\n  --gap: 4px 8px\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Beautify(tt.text, tt.indent, 0)
			if err != nil {
				t.Fatalf("Beautify: %v", err)
			}
			if got != tt.want {
				t.Errorf("Beautify =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestBeautifyLimits(t *testing.T) {
	if _, err := Beautify("a{}", 9, 0); !errors.Is(err, ErrIndent) {
		t.Errorf("indent 9: %v, want ErrIndent", err)
	}
	if _, err := Beautify("a{}", -1, 0); !errors.Is(err, ErrIndent) {
		t.Errorf("indent -1: %v, want ErrIndent", err)
	}
	deep := strings.Repeat("a{", 5000)
	if _, err := Beautify(deep, 8, 64<<10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("deep: %v, want ErrTooLarge", err)
	}
}

func BenchmarkBeautify(b *testing.B) {
	text := strings.Repeat(".card > .title:hover{color:#333;background:url(a.png) no-repeat;margin:0 auto}@media (max-width:600px){.x{display:none}}", 500)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Beautify(text, 2, 0); err != nil {
			b.Fatal(err)
		}
	}
}

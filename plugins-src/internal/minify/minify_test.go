package minify

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestMinify(t *testing.T) {
	tests := []struct {
		name string
		lang Language
		text string
		want string
	}{
		{name: "html", lang: HTML,
			text: "<!DOCTYPE html>\n<html>\n <head><title> T </title></head>\n <body>\n  <p  class=\"a\">Hi   <b>there</b></p>\n  <!-- note -->\n </body>\n</html>",
			want: "<!doctype html><html><head><title>T</title></head><body><p class=\"a\">Hi <b>there</b></p></body></html>"},
		{name: "html embedded code", lang: HTML,
			text: "<style>a { color : #ff0000 }</style><script>var x = 1 + 2 ;</script>",
			want: "<style>a{color:red}</style><script>var x=1+2</script>"},
		{name: "html keeps a script that does not parse", lang: HTML,
			text: "<p>x</p>\n<script>var x = 1 + ;</script>",
			want: "<p>x</p><script>var x = 1 + ;</script>"},
		{name: "html keeps conditional comments", lang: HTML,
			text: "<!--[if IE]><p>old</p><![endif]--><p>new</p>",
			want: "<!--[if IE]><p>old</p><![endif]--><p>new</p>"},
		{name: "html unicode", lang: HTML, text: "<p>  Héllo   😀 中文 </p>", want: "<p>Héllo 😀 中文</p>"},
		{name: "css", lang: CSS, text: "a { color: #ff0000; margin: 0px 0px; }\n/* c */\nb:hover { }", want: "a{color:red;margin:0}"},
		{name: "js", lang: JS, text: "function add ( a , b ) {\n  return a + b ;\n}\nconsole.log(add(1, 2));",
			want: "function add(e,t){return e+t}console.log(add(1,2))"},
		{name: "js unicode", lang: JS, text: "var s = \"é😀中\";", want: "var s=\"é😀中\""},
		{name: "svg", lang: SVG,
			text: "<svg xmlns=\"http://www.w3.org/2000/svg\" >\n  <rect x=\"0.000\" y=\"0\" width=\"10\" height=\"10\"/>\n</svg>",
			want: "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect x=\"0\" y=\"0\" width=\"10\" height=\"10\"/></svg>"},
		{name: "xml", lang: XML, text: "<?xml version=\"1.0\"?>\n<a>\n  <b> x </b>\n  <c/>\n</a>",
			want: "<?xml version=\"1.0\"?><a><b>x</b><c/></a>"},
		{name: "empty", lang: HTML, text: "", want: ""},
		{name: "empty js", lang: JS, text: "", want: ""},
		{name: "empty xml", lang: XML, text: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Minify(tt.lang, tt.text)
			if err != nil {
				t.Fatalf("Minify: %v", err)
			}
			if got != tt.want {
				t.Errorf("Minify =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestMinifyFaults(t *testing.T) {
	tests := []struct {
		name    string
		lang    Language
		text    string
		message string
	}{
		{name: "js syntax", lang: JS, text: "var x = \n  (1 + ;",
			message: "text is not valid JavaScript: unexpected token in expression at line 2, column 8 (byte 16)"},
		{name: "js redeclared identifier is not quoted", lang: JS, text: "let secretName = 1; let secretName = 2;",
			message: "text is not valid JavaScript: identifier declared twice at line 1, column 25 (byte 24)"},
		{name: "js unterminated string", lang: JS, text: "var s = 'secret",
			message: "text is not valid JavaScript: unterminated string literal in expression at line 1, column 9 (byte 8)"},
		{name: "js expected", lang: JS, text: "if (secret",
			message: "text is not valid JavaScript: expected ) in if statement at line 1, column 11 (byte 10)"},
		{name: "js position after unicode", lang: JS, text: "var é = '😀'; )",
			message: "text is not valid JavaScript: unexpected token in expression at line 1, column 14 (byte 17)"},
		{name: "xml mismatched end tag", lang: XML, text: "<a><b></a>",
			message: "text is not well-formed XML: end tag does not match the open element at line 1, column 7 (byte 6)"},
		{name: "xml unclosed element", lang: XML, text: "<a>\n<b>x</b>",
			message: "text is not well-formed XML: element is not closed at line 1, column 1 (byte 0)"},
		{name: "xml stray end tag", lang: XML, text: "<a/></b>",
			message: "text is not well-formed XML: end tag without a start tag at line 1, column 5 (byte 4)"},
		{name: "xml unterminated tag", lang: XML, text: "<a><b x=\"1\"",
			message: "text is not well-formed XML: tag is not terminated at line 1, column 4 (byte 3)"},
		{name: "xml unterminated comment", lang: XML, text: "<a/><!-- x",
			message: "text is not well-formed XML: comment is not terminated at line 1, column 5 (byte 4)"},
		{name: "xml bare less-than", lang: XML, text: "<a>1 < 2</a>",
			message: "text is not well-formed XML: tag has no name at line 1, column 6 (byte 5)"},
		{name: "xml NUL", lang: XML, text: "<a>\x00</a>",
			message: "text is not well-formed XML: NUL character at line 1, column 4 (byte 3)"},
		{name: "svg unclosed", lang: SVG, text: "<svg><rect",
			message: "text is not well-formed SVG: tag is not terminated at line 1, column 6 (byte 5)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Minify(tt.lang, tt.text)
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Minify = %v, want a *textpos.Error", err)
			}
			if err.Error() != tt.message {
				t.Errorf("message =\n%s\nwant\n%s", err.Error(), tt.message)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("message quotes the text: %s", err.Error())
			}
		})
	}
}

func TestMinifyUnknownLanguage(t *testing.T) {
	if _, err := Minify("yaml", "a: b"); !errors.Is(err, ErrLanguage) {
		t.Errorf("Minify(yaml) = %v, want ErrLanguage", err)
	}
}

func TestReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"unexpected foo in expression", "unexpected token in expression"},
		{"unexpected ' in ' in statement", "unexpected token in statement"},
		{"unexpected x in y", "unexpected token"},
		{"expected Identifier or ( instead of 'secret' in function declaration", "expected Identifier or ( in function declaration"},
		{"identifier secret has already been declared", "identifier declared twice"},
		{"unexpected EOF", "unexpected end of input"},
		{"unexpected EOF in expression", "unexpected end of input in expression"},
		{"invalid parameters in arrow function", "invalid parameters in arrow function"},
		{"unexpected let [ in single-statement context", "unexpected let [ in single-statement context"},
		{"something new about secret", "syntax error"},
	}
	for _, tt := range tests {
		if got := reason(tt.in); got != tt.want {
			t.Errorf("reason(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkMinifyHTML(b *testing.B) {
	text := strings.Repeat("<div class=\"card\"><h2>Title <small>sub</small></h2><p>Some <a href=\"#\">linked</a> text.</p><ul><li>one</li><li>two</li></ul><script>var a = 1 < 2;</script></div>", 560)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Minify(HTML, text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMinifyJS(b *testing.B) {
	text := strings.Repeat("function add ( a , b ) { var total = a + b ; return total ; }\n", 1600)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Minify(JS, text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMinifyManyStatements(b *testing.B) {
	for _, c := range []struct {
		name string
		lang Language
		text string
	}{
		{"js", JS, strings.Repeat("a=1;", 30000)},
		{"css", CSS, strings.Repeat("a{b:c}", 20000)},
		{"html", HTML, strings.Repeat("<p>x", 30000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				if _, err := Minify(c.lang, c.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

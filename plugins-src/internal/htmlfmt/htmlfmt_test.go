package htmlfmt

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestBeautify(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		indent int
		want   string
	}{
		{name: "empty", text: "", indent: 2, want: ""},
		{name: "whitespace only", text: "  \n\t", indent: 2, want: ""},
		{name: "text only", text: "  hello   world \n", indent: 2, want: "hello world"},
		{
			name:   "document",
			text:   "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>T  i</title></head><body><div><p>Hello <b>world</b>!</p></div></body></html>",
			indent: 2,
			want: "<!DOCTYPE html>\n<html>\n  <head>\n    <meta charset=\"utf-8\">\n    <title>T  i</title>\n  </head>\n" +
				"  <body>\n    <div>\n      <p>Hello <b>world</b>!</p>\n    </div>\n  </body>\n</html>",
		},
		{name: "inline neighbours gain no space", text: "<p><b>a</b><i>b</i></p>", indent: 2, want: "<p><b>a</b><i>b</i></p>"},
		{name: "text whitespace collapsed", text: "<p>\n   a\n   b  <em> c </em>\n</p>", indent: 2, want: "<p>a b <em> c </em></p>"},
		{name: "void elements", text: "<div><img src=a.png><br/><input type=text ><hr></div>", indent: 2,
			want: "<div>\n  <img src=a.png><br/><input type=text>\n  <hr>\n</div>"},
		{name: "self-closing slash spacing kept", text: "<div><br /></div>", indent: 2, want: "<div><br /></div>"},
		{name: "attribute whitespace normalised, values kept", text: "<div   class=\"a  b\"\n     data-x='1\n2'  hidden>x</div>", indent: 2,
			want: "<div class=\"a  b\" data-x='1\n2' hidden>x</div>"},
		{name: "case kept", text: "<DIV Class=A><P>x</P></DIV>", indent: 2, want: "<DIV Class=A>\n  <P>x</P>\n</DIV>"},
		{name: "pre untouched", text: "<div><pre>  a\n    <b>b</b>\n</pre></div>", indent: 2,
			want: "<div>\n  <pre>  a\n    <b>b</b>\n</pre>\n</div>"},
		{name: "nested pre", text: "<pre>a<pre> b </pre> c </pre><p>x</p>", indent: 2,
			want: "<pre>a<pre> b </pre> c </pre>\n<p>x</p>"},
		{name: "textarea untouched", text: "<form><textarea name=t>  line1\n  <b>line2</b>\n</textarea></form>", indent: 2,
			want: "<form><textarea name=t>  line1\n  <b>line2</b>\n</textarea></form>"},
		{name: "script and style untouched", text: "<head><style>\na{b:c}\n</style><script>if (a < b && c > d) {\n  x();\n}</script></head>", indent: 4,
			want: "<head>\n    <style>\na{b:c}\n</style>\n    <script>if (a < b && c > d) {\n  x();\n}</script>\n</head>"},
		{name: "script with closing tag in string", text: "<div><script>var s = \"<div>\";</script></div>", indent: 2,
			want: "<div>\n  <script>var s = \"<div>\";</script>\n</div>"},
		{name: "svg verbatim", text: "<div><svg viewBox=\"0 0 1 1\">\n<path d=\"M0 0\"/></svg></div>", indent: 2,
			want: "<div><svg viewBox=\"0 0 1 1\">\n<path d=\"M0 0\"/></svg></div>"},
		{name: "comments", text: "<div><!-- a  b --><p>x</p></div>", indent: 2, want: "<div>\n  <!-- a  b -->\n  <p>x</p>\n</div>"},
		{name: "implied li", text: "<ul><li>one<li>two</ul>", indent: 2, want: "<ul>\n  <li>one\n  <li>two\n</ul>"},
		{name: "implied cells", text: "<table><tr><td>a<td>b<tr><td>c</table>", indent: 1,
			want: "<table>\n <tr>\n  <td>a\n  <td>b\n <tr>\n  <td>c\n</table>"},
		{name: "end tag closes open descendants", text: "<div><span>a<p>b</div><p>c</p>", indent: 2,
			want: "<div>\n  <span>a\n    <p>b\n</div>\n<p>c</p>"},
		{name: "select breaks inside only", text: "<p>Pick<select><option>a<option>b</select>now</p>", indent: 2,
			want: "<p>\n  Pick<select>\n    <option>a\n    <option>b\n  </select>now\n</p>"},
		{name: "inline element with text then block", text: "<div>x<span> a <div>b</div> c </span>y</div>", indent: 2,
			want: "<div>\n  x<span> a\n    <div>b</div>\n    c </span>y\n</div>"},
		{name: "stray end tag kept", text: "<div>a</span>b</p>c</div>", indent: 2, want: "<div>\n  a</span>b\n  </p>\n  c\n</div>"},
		{name: "inline element with block child", text: "<a href=x><div>y</div></a>", indent: 2, want: "<a href=x>\n  <div>y</div>\n</a>"},
		{name: "indent 0", text: "<div><p>x</p></div>", indent: 0, want: "<div>\n<p>x</p>\n</div>"},
		{name: "unicode", text: "<p>Héllo  😀\n中文</p>", indent: 2, want: "<p>Héllo 😀 中文</p>"},
		{name: "nbsp is not whitespace", text: "<p>a\u00a0\u00a0b &nbsp; c</p>", indent: 2, want: "<p>a\u00a0\u00a0b &nbsp; c</p>"},
		{name: "unclosed tag at end kept", text: "<div>x</div><a href=", indent: 2, want: "<div>x</div>\n<a href="},
		{name: "unclosed elements", text: "<div><p>x", indent: 2, want: "<div>\n  <p>x"},
		{name: "cdata kept", text: "<div><![CDATA[ a  b ]]></div>", indent: 2, want: "<div><![CDATA[ a  b ]]></div>"},
		{name: "plaintext to end", text: "<div><plaintext>a\n  <b>", indent: 2, want: "<div>\n  <plaintext>a\n  <b>"},
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

func TestBeautifyIsStable(t *testing.T) {
	text := "<!doctype html><html><body><ul><li><a href=\"#\">x</a> y</li><li>z</li></ul><pre> p </pre><p>a <b>b</b></p></body></html>"
	once, err := Beautify(text, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Beautify(once, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if once != twice {
		t.Errorf("not stable:\n%s\n---\n%s", once, twice)
	}
}

func TestBeautifyFaults(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		offset int
		reason string
	}{
		{name: "NUL in svg", text: "<p>x</p><svg>\x00</svg>", offset: 13, reason: "NUL character inside an svg or math element"},
		{name: "too deep", text: strings.Repeat("<div>", MaxDepth+1), offset: MaxDepth * 5, reason: "elements nested deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Beautify(tt.text, 2, 0)
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Beautify = %v, want a *textpos.Error", err)
			}
			if pe.Position.Offset != tt.offset || pe.Reason != tt.reason {
				t.Errorf("got %+v %q, want offset %d %q", pe.Position, pe.Reason, tt.offset, tt.reason)
			}
		})
	}
	if _, err := Beautify(strings.Repeat("<div>", MaxDepth), 2, 0); err != nil {
		t.Errorf("nesting at MaxDepth: %v", err)
	}
}

func TestBeautifyLimits(t *testing.T) {
	if _, err := Beautify("<p>", 9, 0); !errors.Is(err, ErrIndent) {
		t.Errorf("indent 9: %v, want ErrIndent", err)
	}
	if _, err := Beautify(strings.Repeat("<div>", 900), 8, 64<<10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("deep: %v, want ErrTooLarge", err)
	}
}

func BenchmarkBeautify(b *testing.B) {
	text := strings.Repeat("<div class=\"card\"><h2>Title <small>sub</small></h2><p>Some <a href=\"#\">linked</a> text, and more text.</p><ul><li>one</li><li>two</li></ul><script>var a = 1 < 2;</script></div>", 400)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Beautify(text, 2, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBeautifyManyElements(b *testing.B) {
	text := strings.Repeat("<p>x", 30000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Beautify(text, 2, 0); err != nil {
			b.Fatal(err)
		}
	}
}

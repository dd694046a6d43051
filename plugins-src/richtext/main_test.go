package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

var codes = []string{"markdown", "html_to_text"}

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, codes...)
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for code, op := range map[string]string{"markdown": "to_html", "html_to_text": "convert"} {
		if got := tools.MaxLength(code, op, "text"); got != bundled.MaxTextLength {
			t.Errorf("%s/%s text maxLength = %d", code, op, got)
		}
	}
}

func TestMarkdown(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"gfm", `{"operation":"to_html","text":"# Hi\n\n| a | b |\n| - | - |\n| 1 | ~~2~~ |\n"}`, "<h1>Hi</h1>\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td><del>2</del></td>\n</tr>\n</tbody>\n</table>\n"},
		{"commonmark only", `{"operation":"to_html","text":"~~x~~ www.x.test","gfm":false}`, "<p>~~x~~ www.x.test</p>\n"},
		{"hard wraps", `{"operation":"to_html","text":"a\nb","hard_wraps":true}`, "<p>a<br>\nb</p>\n"},
		{"sanitised", `{"operation":"to_html","text":"<b onclick=x>hi</b> [a](javascript:alert(1)) ![i](data:image/svg+xml,x)"}`, "<p><!-- raw HTML omitted -->hi<!-- raw HTML omitted --> <a href=\"\">a</a> <img src=\"\" alt=\"i\"></p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "markdown", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := tools.ToolError(t, "markdown", `{"operation":"to_html","text":"`+strings.Repeat(">", 200)+`"}`),
		"text cannot be rendered as Markdown: more than 100 nested quote or list markers open a line at line 1, column 101 (byte 100)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.Refused(t, "markdown", `{"operation":"to_html","text":"x","xhtml":true}`)
}

func TestHTMLToText(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"document", `{"operation":"convert","text":"<html><head><title>T</title></head><body><h1>Café</h1><p>One &amp; <b>two</b></p><ul><li>a</li><li>b</li></ul><script>x()</script></body></html>"}`, "Café\n\nOne & two\n\n- a\n- b"},
		{"links", `{"operation":"convert","text":"<a href='https://x.test'>docs</a>","links":true}`, "docs <https://x.test>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "html_to_text", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	tools.Refused(t, "html_to_text", `{"operation":"convert"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "richtext")
	md := strings.Repeat(`## Zoë's *notes*\n\n- [x] item with [a link](https://x.test/?a=1&b=2) and `+"`code`"+`\n- www.example.com\n\n| k | v |\n|---|---|\n| é | 😀 |\n\n> quote <script>x</script>\n\n`, 500)
	for _, params := range []string{
		`{"operation":"to_html","text":"` + md + `"}`,
		`{"operation":"to_html","text":"` + md + `","gfm":false,"hard_wraps":true}`,
		`{"operation":"to_html","text":"` + strings.Repeat("[", 101) + `"}`,
	} {
		tools.Same(t, mod, "markdown", params)
	}
	page := `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>` +
		strings.Repeat(`<h2>Zoë &amp; co</h2><p>Text with <a href=\"https://x.test\">a link</a>&nbsp;and &#x1F600;.</p><ul><li>one</li><li>two <ol><li>n</li></ol></li></ul><table><tr><td>a</td><td>b</td></tr></table><pre>  kept\n  lines</pre><script>var x = \"<p>\";</script>`, 300) +
		`</body></html>`
	for _, params := range []string{
		`{"operation":"convert","text":"` + page + `"}`,
		`{"operation":"convert","text":"` + page + `","links":true}`,
	} {
		tools.Same(t, mod, "html_to_text", params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range codes {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}

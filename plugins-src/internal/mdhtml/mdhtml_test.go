package mdhtml

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// CommonMark 0.31.2 spec examples (by number) and GFM spec examples
// (tables 198, strikethrough 491, task lists 279, autolinks 621), rendered
// as the specs show them, except that raw HTML is omitted.
func TestToHTML(t *testing.T) {
	tests := []struct {
		name, md, want string
		o              Options
	}{
		{"CM 62 ATX headings", "# foo\n## foo\n", "<h1>foo</h1>\n<h2>foo</h2>\n", Options{}},
		{"CM 119 fenced code", "```\n<\n >\n```\n", "<pre><code>&lt;\n &gt;\n</code></pre>\n", Options{}},
		{"CM 301 list", "- foo\n- bar\n+ baz\n", "<ul>\n<li>foo</li>\n<li>bar</li>\n</ul>\n<ul>\n<li>baz</li>\n</ul>\n", Options{}},
		{"CM 482 link", "[link](/uri \"title\")\n", "<p><a href=\"/uri\" title=\"title\">link</a></p>\n", Options{}},
		{"CM 350 emphasis", "*foo bar*\n", "<p><em>foo bar</em></p>\n", Options{}},
		{"CM 633 hard break", "foo  \nbaz\n", "<p>foo<br>\nbaz</p>\n", Options{}},
		{"GFM 198 table", "| foo | bar |\n| --- | --- |\n| baz | bim |\n", "<table>\n<thead>\n<tr>\n<th>foo</th>\n<th>bar</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>baz</td>\n<td>bim</td>\n</tr>\n</tbody>\n</table>\n", Options{GFM: true}},
		{"GFM 491 strikethrough", "~~Hi~~ Hello, world!\n", "<p><del>Hi</del> Hello, world!</p>\n", Options{GFM: true}},
		{"GFM 279 task list", "- [ ] foo\n- [x] bar\n", "<ul>\n<li><input disabled=\"\" type=\"checkbox\"> foo</li>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> bar</li>\n</ul>\n", Options{GFM: true}},
		{"GFM 621 autolink", "www.commonmark.org\n", "<p><a href=\"http://www.commonmark.org\">www.commonmark.org</a></p>\n", Options{GFM: true}},
		{"no GFM: table is text", "| a |\n| - |\n", "<p>| a |\n| - |</p>\n", Options{}},
		{"hard wraps", "a\nb\n", "<p>a<br>\nb</p>\n", Options{HardWraps: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToHTML(tt.md, tt.o)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

// The sanitising: OWASP's XSS filter evasion vectors, as Markdown.
func TestSanitised(t *testing.T) {
	tests := []struct{ md, want string }{
		{"<script>alert(1)</script>\n", "<!-- raw HTML omitted -->\n"},
		{"a <img src=x onerror=alert(1)> b\n", "<p>a <!-- raw HTML omitted --> b</p>\n"},
		{"[x](javascript:alert(1))\n", "<p><a href=\"\">x</a></p>\n"},
		{"[x](JaVaScRiPt:alert(1))\n", "<p><a href=\"\">x</a></p>\n"},
		{"[x](java&#115;cript:alert(1))\n", "<p><a href=\"\">x</a></p>\n"},
		{"[x](<java\tscript:alert(1)>)\n", "<p><a href=\"\">x</a></p>\n"},
		{"![i](data:text/html;base64,PHNjcmlwdD4=)\n", "<p><img src=\"\" alt=\"i\"></p>\n"},
		{"<vbscript:msgbox(1)>\n", "<p>vbscript:msgbox(1)</p>\n"},
		{"[ok](https://example.com/a?b=c#d) [rel](../x:y) [m](mailto:a@b.c)\n", "<p><a href=\"https://example.com/a?b=c#d\">ok</a> <a href=\"../x:y\">rel</a> <a href=\"mailto:a@b.c\">m</a></p>\n"},
		{"[x](\"onmouseover=alert(1))\n", "<p><a href=\"%22onmouseover=alert(1)\">x</a></p>\n"},
	}
	for _, tt := range tests {
		got, err := ToHTML(tt.md, Options{GFM: true})
		if err != nil || got != tt.want {
			t.Errorf("%q: got %q, %v\nwant %q", tt.md, got, err, tt.want)
		}
	}
}

// TestPathological runs inputs that make Markdown parsers slow
// (commonmark's pathological_tests.py) at the tool's input size. Those
// whose cost grows with the square of a nesting are refused at once; the
// others finish far below the fuel budget. (Thousands of unclosed link
// openers in one word, "[a](b[a](b…", still cost goldmark seconds: the
// item's fuel and deadline bound them; docs/tools/markdown.md says so.)
func TestPathological(t *testing.T) {
	n := 120 << 10
	refused := map[string]string{
		"nested blockquote": strings.Repeat(">", n),
		"nested lists":      strings.Repeat("- ", n/2) + "x",
		"nested brackets":   strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		"mixed markers":     strings.Repeat("> 1. ", 101) + "x",
	}
	for name, in := range refused {
		_, err := ToHTML(in, Options{GFM: true})
		var pe *textpos.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	fine := map[string]string{
		"emphasis openers": strings.Repeat("*a ", n/3),
		"backticks":        strings.Repeat("`a", n/2),
		"underscores":      strings.Repeat("_a", n/2),
		"table cells":      "|" + strings.Repeat("a|", n/4) + "\n|" + strings.Repeat("-|", n/4) + "\n",
		"quotes at 100":    strings.Repeat(">", 100) + " x\n",
		"many brackets":    strings.Repeat("[a] ", n/4),
		"many links":       strings.Repeat("[a](b) ", n/7),
	}
	for name, in := range fine {
		start := time.Now()
		if _, err := ToHTML(in, Options{GFM: true, MaxBytes: 256 << 10}); err != nil && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, time.Since(start))
	}
}

func TestSafe(t *testing.T) {
	for url, want := range map[string]bool{
		"": true, "/a": true, "a/b:c": true, "?q=a:b": true, "#x:y": true, "//host/p": true,
		"http://x": true, "HTTPS://x": true, "mailto:a@b": true,
		"javascript:x": false, " javascript:x": false, "java\nscript:x": false, "data:x": false, "file:///etc": false, "ftp://x": false, "tel:1": false,
	} {
		if got := Safe(url); got != want {
			t.Errorf("Safe(%q) = %v", url, got)
		}
	}
}

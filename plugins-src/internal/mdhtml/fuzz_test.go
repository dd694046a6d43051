package mdhtml

import (
	"errors"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// tag matches a start or end tag; the comment goldmark writes for raw HTML
// does not match.
var tag = regexp.MustCompile(`</?([A-Za-z][A-Za-z0-9]*)`)

// urlAttr matches the URL attributes goldmark writes.
var urlAttr = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// allowed are the elements goldmark's CommonMark and GFM renderers write.
var allowed = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "em": true, "strong": true,
	"a": true, "img": true, "code": true, "pre": true, "ul": true, "ol": true, "li": true, "blockquote": true,
	"hr": true, "br": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"del": true, "input": true,
}

// FuzzToHTML: any text renders (or is refused for its nesting), never a
// panic, and the HTML never holds a tag the Markdown wrote or a script URL.
func FuzzToHTML(f *testing.F) {
	for _, s := range []string{"# a\n\n*b* [c](d)", "<script>x</script>", "[x](javascript:y)", "| a |\n| - |\n| b |", "- [x] t", "<a href=x>", "![i](data:x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ToHTML(s, Options{GFM: true})
		if err != nil {
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v", s, err)
			}
			return
		}
		for _, m := range tag.FindAllStringSubmatch(out, -1) {
			if !allowed[strings.ToLower(m[1])] {
				t.Fatalf("%q renders %q, which holds a <%s> tag", s, out, m[1])
			}
		}
		for _, m := range urlAttr.FindAllStringSubmatch(out, -1) {
			if !Safe(html.UnescapeString(m[1])) {
				t.Fatalf("%q renders %q, which holds the URL %q", s, out, m[1])
			}
		}
	})
}

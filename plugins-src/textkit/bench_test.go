package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
)

// BenchmarkLoad is the module's load on a cold compilation cache: wazero's
// compile, the pre-initialisation and describe; the text package's module
// beside it, a reference under the same machine load.
func BenchmarkLoad(b *testing.B) { bundledtest.BenchLoad(b, "textkit", "text") }

// BenchmarkFreshItem is the whole per-item path — strict decoding, input
// validation, a fresh instance from the pre-initialised image, compute,
// output validation and encoding — for each service on 1 KiB of text, as
// internal/wasmtool's BenchmarkFreshItem does for the first bundled tools.
func BenchmarkFreshItem(b *testing.B) {
	kib := strings.Repeat("Héllo Wörld, ", 1024/14+1)[:1024]
	lines := strings.Repeat(`pear 12\napple 3\n  Banana\t\n`, 40)
	items := []bundledtest.BenchItem{
		{Name: "text_stats", Code: "text_stats", Params: `{"operation":"count","text":"` + kib + `"}`},
		{Name: "lines_sort", Code: "lines", Params: `{"operation":"sort","text":"` + lines + `","numeric":true}`},
		{Name: "whitespace_collapse", Code: "whitespace", Params: `{"operation":"collapse","text":"` + lines + `"}`},
		{Name: "line_endings_convert", Code: "line_endings", Params: `{"operation":"convert","text":"` + lines + `","to":"crlf"}`},
		{Name: "unicode_normalize_nfd", Code: "unicode_normalize", Params: `{"operation":"normalize","text":"` + kib + `","form":"nfd"}`},
		{Name: "html_entities_encode", Code: "html_entities", Params: `{"operation":"encode","text":"` + kib + `","mode":"non_ascii"}`},
		{Name: "string_escape_json", Code: "string_escape", Params: `{"operation":"json_escape","text":"` + kib + `","ascii":true}`},
		{Name: "rot13", Code: "rot13", Params: `{"operation":"rot13","text":"` + kib + `"}`},
		{Name: "lorem_ipsum_paragraph", Code: "lorem_ipsum", Params: `{"operation":"generate","unit":"paragraphs","count":2,"seed":7}`},
		{Name: "line_diff", Code: "line_diff", Params: `{"operation":"unified","old":"` + lines + `","new":"` + strings.Replace(lines, "apple", "apricot", 5) + `"}`},
		{Name: "regex_extract", Code: "regex", Params: `{"operation":"extract","pattern":"(\\p{L}+) (\\p{L}+)","text":"` + kib + `"}`},
	}
	bundledtest.BenchItems(b, "textkit", items)
}

package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
)

// BenchmarkLoad is the module's load on a cold compilation cache: wazero's
// compile, the pre-initialisation and describe; the text package's module
// beside it, a reference under the same machine load.
func BenchmarkLoad(b *testing.B) { bundledtest.BenchLoad(b, "richtext", "text") }

// BenchmarkFreshItem is the whole per-item path — strict decoding, input
// validation, a fresh instance from the pre-initialised image, compute,
// output validation and encoding — for each service on about 1 KiB of
// input, as internal/wasmtool's BenchmarkFreshItem does for the first
// bundled tools.
func BenchmarkFreshItem(b *testing.B) {
	md := strings.Repeat(`## Notes\n\nSome *emphasis*, a [link](https://x.test) and `+"`code`"+`.\n\n- [x] done\n- todo\n\n`, 12)
	page := `<html><head><title>T</title></head><body>` + strings.Repeat(`<h2>Zoë</h2><p>Text &amp; <a href=\"https://x.test\">a link</a>.</p><ul><li>one</li></ul>`, 12) + `</body></html>`
	items := []bundledtest.BenchItem{
		{Name: "markdown_to_html", Code: "markdown", Params: `{"operation":"to_html","text":"` + md + `"}`},
		{Name: "html_to_text", Code: "html_to_text", Params: `{"operation":"convert","text":"` + page + `"}`},
	}
	bundledtest.BenchItems(b, "richtext", items)
}

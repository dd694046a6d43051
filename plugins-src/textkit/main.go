// Command textkit is the bundled tool package of the everyday text
// transforms of issue 19: statistics, line operations, white space, line
// endings, Unicode normalisation, HTML entities, string escapes, ROT13 and
// Caesar, lorem ipsum, a line diff and regular expressions (RE2), the
// server engines of the browser-only tools of the same names (ADR-027). It
// is built with
//
//	go generate ./plugins-src/textkit
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/textkit.wasm ./plugins-src/textkit
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below.
package main

//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen

import (
	"errors"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func init() {
	guest.Register(guest.Package{
		ContractVersion:       bundled.ContractVersion,
		ImplementationVersion: bundled.ImplementationVersion,
		Services: []guest.Declaration{
			bundled.Service("text_stats", "text", statsTexts, bundled.Operations("count"), computeStats),
			bundled.Service("lines", "text", linesTexts, bundled.Operations("sort", "dedupe", "reverse", "shuffle"), computeLines),
			bundled.Service("whitespace", "text", whitespaceTexts, bundled.Operations("trim", "collapse", "remove_blank_lines"), computeWhitespace),
			bundled.Service("line_endings", "text", endingsTexts, bundled.Operations("convert", "detect"), computeEndings),
			bundled.Service("unicode_normalize", "text", normalizeTexts, bundled.Operations("normalize", "check"), computeNormalize),
			bundled.Service("html_entities", "encoding", entitiesTexts, bundled.Operations("encode", "decode"), computeEntities),
			bundled.Service("string_escape", "encoding", escapeTexts, bundled.Operations("json_escape", "json_unescape", "js_escape", "js_unescape"), computeEscape),
			bundled.Service("rot13", "text", rotTexts, bundled.Operations("rot13", "rot47", "caesar"), computeRot),
			bundled.Service("lorem_ipsum", "text", loremTexts, bundled.Operations("generate"), computeLorem),
			bundled.Service("line_diff", "text", diffTexts, bundled.Operations("unified"), computeDiff),
			bundled.Service("regex", "dev", regexTexts, bundled.Operations("test", "replace", "extract"), computeRegex),
		},
	})
}

func main() {}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The transformed text."`
}

// errTooLarge is a transform's result over bundled.MaxResultBytes: an
// escape or a normalisation can grow its text several times over.
var errTooLarge = errors.New("the result would exceed the 256 KiB result limit")

// bounded returns text, or errTooLarge when it is over the result bound.
func bounded(text string) (textOutput, error) {
	if len(text) > bundled.MaxResultBytes {
		return textOutput{}, guest.InvalidInput("%s", errTooLarge.Error())
	}
	return textOutput{Text: text}, nil
}

// Command markup is the bundled tool package of the markup transforms: the
// json, minify and beautify services, the server engines of the
// browser-only tools of the same names (ADR-027). It is built with
//
//	go generate ./plugins-src/markup
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/markup.wasm ./plugins-src/markup
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below.
//
// It alone links github.com/tdewolff/minify/v2, so that the other bundled
// modules stay small.
package main

//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func init() {
	guest.Register(guest.Package{
		ContractVersion:       bundled.ContractVersion,
		ImplementationVersion: bundled.ImplementationVersion,
		Services: []guest.Declaration{
			bundled.Service("json", "dev", jsonTexts, bundled.Operations("format", "minify", "validate"), computeJSON),
			bundled.Service("minify", "dev", minifyTexts, bundled.Operations("html", "css", "js", "svg", "xml"), computeMinify),
			bundled.Service("beautify", "dev", beautifyTexts, bundled.Operations("json", "html", "css"), computeBeautify),
		},
	})
}

func main() {}

var jsonTexts = map[string]guest.Text{
	"en": {Name: "JSON formatter", Description: "Format, minify or validate JSON text."},
	"it": {Name: "Formattatore JSON", Description: "Formatta, minifica o convalida testo JSON."},
	"fr": {Name: "Formateur JSON", Description: "Formater, minifier ou valider du texte JSON."},
	"es": {Name: "Formateador JSON", Description: "Formatea, minifica o valida texto JSON."},
}

var minifyTexts = map[string]guest.Text{
	"en": {Name: "Minifier", Description: "Minify HTML, CSS, JavaScript, SVG or XML."},
	"it": {Name: "Minificatore", Description: "Minifica HTML, CSS, JavaScript, SVG o XML."},
	"fr": {Name: "Minificateur", Description: "Minifier du HTML, du CSS, du JavaScript, du SVG ou du XML."},
	"es": {Name: "Minificador", Description: "Minifica HTML, CSS, JavaScript, SVG o XML."},
}

var beautifyTexts = map[string]guest.Text{
	"en": {Name: "Code beautifier", Description: "Re-indent JSON, HTML or CSS to make it readable."},
	"it": {Name: "Formattatore di codice", Description: "Reindenta JSON, HTML o CSS per renderli leggibili."},
	"fr": {Name: "Embellisseur de code", Description: "Réindenter du JSON, du HTML ou du CSS pour le rendre lisible."},
	"es": {Name: "Embellecedor de código", Description: "Reindenta JSON, HTML o CSS para hacerlos legibles."},
}

// Command richtext is the bundled tool package of the rich-text
// transforms: Markdown to HTML and HTML to text, the server engines of the
// browser-only tools of the same names (ADR-027, issue 19). It is built
// with
//
//	go generate ./plugins-src/richtext
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/richtext.wasm ./plugins-src/richtext
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below.
//
// It alone links github.com/yuin/goldmark and golang.org/x/net/html, so
// that plugins-src/dataformat, the other data-format package, stays
// smaller.
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
			bundled.Service("markdown", "text", markdownTexts, bundled.Operations("to_html"), computeMarkdown),
			bundled.Service("html_to_text", "text", htmlTextTexts, bundled.Operations("convert"), computeHTMLText),
		},
	})
}

func main() {}

var markdownTexts = map[string]guest.Text{
	"en": {Name: "Markdown to HTML", Description: "Render Markdown (CommonMark and GitHub Flavored Markdown) to safe HTML: no raw HTML, no script URLs."},
	"it": {Name: "Da Markdown a HTML", Description: "Converte Markdown (CommonMark e GitHub Flavored Markdown) in HTML sicuro: niente HTML grezzo, niente URL di script."},
	"fr": {Name: "Markdown vers HTML", Description: "Convertir du Markdown (CommonMark et GitHub Flavored Markdown) en HTML sûr : pas de HTML brut, pas d'URL de script."},
	"es": {Name: "De Markdown a HTML", Description: "Convierte Markdown (CommonMark y GitHub Flavored Markdown) en HTML seguro: sin HTML sin procesar ni URL de script."},
}

var htmlTextTexts = map[string]guest.Text{
	"en": {Name: "HTML to text", Description: "Extract the readable text of an HTML page: paragraphs, lists and tables as plain text, scripts and styles dropped."},
	"it": {Name: "Da HTML a testo", Description: "Estrae il testo leggibile di una pagina HTML: paragrafi, elenchi e tabelle come testo semplice, script e stili esclusi."},
	"fr": {Name: "HTML vers texte", Description: "Extraire le texte lisible d'une page HTML : paragraphes, listes et tableaux en texte brut, scripts et styles retirés."},
	"es": {Name: "De HTML a texto", Description: "Extrae el texto legible de una página HTML: párrafos, listas y tablas como texto plano, sin scripts ni estilos."},
}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The HTML, or the text."`
}

// Command text is the bundled tool package of the text transforms: the case
// and slug services, the server engines of the browser-only tools of the
// same names (ADR-027). It is built with
//
//	go generate ./plugins-src/text
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/text.wasm ./plugins-src/text
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below.
package main

//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/slugify"
	"github.com/toolhost/toolhost/plugins-src/internal/textcase"
)

func init() {
	guest.Register(guest.Package{
		ContractVersion:       bundled.ContractVersion,
		ImplementationVersion: bundled.ImplementationVersion,
		Services: []guest.Declaration{
			bundled.Service("case", "text", caseTexts, bundled.Operations("convert"), computeCase),
			bundled.Service("slug", "text", slugTexts, bundled.Operations("slugify"), computeSlug),
		},
	})
}

func main() {}

var caseTexts = map[string]guest.Text{
	"en": {Name: "Case converter", Description: "Convert text to upper, lower, title, sentence, camel, Pascal, snake, kebab or constant case."},
	"it": {Name: "Convertitore di maiuscole e minuscole", Description: "Converte il testo in maiuscolo, minuscolo, iniziali maiuscole, maiuscola a inizio frase, camelCase, PascalCase, snake_case, kebab-case o COSTANTE."},
	"fr": {Name: "Convertisseur de casse", Description: "Convertir du texte en majuscules, minuscules, casse de titre, casse de phrase, camelCase, PascalCase, snake_case, kebab-case ou CONSTANTE."},
	"es": {Name: "Conversor de mayúsculas y minúsculas", Description: "Convierte texto a mayúsculas, minúsculas, tipo título, tipo oración, camelCase, PascalCase, snake_case, kebab-case o CONSTANTE."},
}

var slugTexts = map[string]guest.Text{
	"en": {Name: "Slug generator", Description: "Turn text into a URL slug, transliterating accents and other scripts to ASCII."},
	"it": {Name: "Generatore di slug", Description: "Trasforma il testo in uno slug per URL, traslitterando accenti e altri alfabeti in ASCII."},
	"fr": {Name: "Générateur de slug", Description: "Transformer un texte en slug d'URL, en translittérant les accents et les autres écritures en ASCII."},
	"es": {Name: "Generador de slugs", Description: "Convierte texto en un slug para URL, transliterando acentos y otras escrituras a ASCII."},
}

// caseInput is the case service's parameters.
type caseInput struct {
	Operation string `json:"operation" doc:"convert: change the case of the text."`
	Text      string `json:"text" maxLength:"130048" doc:"The text to convert."`
	To        string `json:"to" enum:"upper,lower,title,sentence,camel,pascal,snake,kebab,constant" doc:"The target case. upper, lower, title and sentence change letters only; camel, pascal, snake, kebab and constant split the text into words and join them."`
}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The transformed text."`
}

func computeCase(ctx *guest.Context, in caseInput) (textOutput, error) {
	out, err := textcase.Convert(in.Text, textcase.Case(in.To))
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{textcase.ErrCase: "unknown case"})
}

// slugInput is the slug service's parameters.
type slugInput struct {
	Operation string  `json:"operation" doc:"slugify: make a URL slug of the text."`
	Text      string  `json:"text" maxLength:"130048" doc:"The text to make a slug of."`
	Separator *string `json:"separator,omitempty" minLength:"1" maxLength:"8" pattern:"^[A-Za-z0-9._~-]{1,8}$" default:"-" doc:"What joins the words: 1 to 8 of the characters a-z, A-Z, 0-9, '-', '_', '.', '~'."`
}

func computeSlug(ctx *guest.Context, in slugInput) (textOutput, error) {
	out, err := slugify.Make(in.Text, bundled.String(in.Separator, "-"))
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{slugify.ErrSeparator: "separator must be 1 to 8 of the characters a-z A-Z 0-9 - _ . ~"})
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/strescape"
)

var escapeTexts = map[string]guest.Text{
	"en": {Name: "String escaper", Description: "Escape text as the contents of a JSON or JavaScript string, or unescape such contents."},
	"it": {Name: "Escape di stringhe", Description: "Converte il testo nel contenuto di una stringa JSON o JavaScript con le sequenze di escape, o lo riporta al testo."},
	"fr": {Name: "Échappement de chaînes", Description: "Échapper un texte comme contenu d'une chaîne JSON ou JavaScript, ou déséchapper un tel contenu."},
	"es": {Name: "Escapado de cadenas", Description: "Escapa texto como contenido de una cadena JSON o JavaScript, o revierte el escapado de ese contenido."},
}

// escapeInput is the string_escape service's parameters.
type escapeInput struct {
	Operation string `json:"operation" doc:"json_escape, js_escape: the text as string contents; json_unescape, js_unescape: string contents back to text."`
	Text      string `json:"text" maxLength:"130048" doc:"The text, or the string contents to unescape (json_unescape also takes a whole quoted literal)."`
	ASCII     *bool  `json:"ascii,omitempty" ops:"json_escape,js_escape" default:"false" doc:"Also escape every character past U+007E as \\uXXXX (a surrogate pair past U+FFFF)."`
	Quote     *bool  `json:"quote,omitempty" ops:"json_escape" default:"false" doc:"Add the surrounding double quotes."`
}

func computeEscape(ctx *guest.Context, in escapeInput) (textOutput, error) {
	switch in.Operation {
	case "json_escape":
		return bounded(strescape.JSONEscape(in.Text, bundled.Bool(in.ASCII, false), bundled.Bool(in.Quote, false)))
	case "js_escape":
		return bounded(strescape.JSEscape(in.Text, bundled.Bool(in.ASCII, false)))
	case "json_unescape":
		out, err := strescape.JSONUnescape(in.Text)
		return textOutput{Text: out}, bundled.ToolError(err, nil)
	case "js_unescape":
		out, err := strescape.JSUnescape(in.Text)
		return textOutput{Text: out}, bundled.ToolError(err, nil)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

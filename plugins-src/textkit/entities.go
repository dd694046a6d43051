package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/entities"
)

var entitiesTexts = map[string]guest.Text{
	"en": {Name: "HTML entities", Description: "Escape text as HTML character references, or decode named and numeric references."},
	"it": {Name: "Entità HTML", Description: "Converte il testo in riferimenti a caratteri HTML, o decodifica i riferimenti con nome e numerici."},
	"fr": {Name: "Entités HTML", Description: "Échapper un texte en références de caractères HTML, ou décoder les références nommées et numériques."},
	"es": {Name: "Entidades HTML", Description: "Escapa texto como referencias de caracteres HTML, o decodifica las referencias con nombre y numéricas."},
}

// entitiesInput is the html_entities service's parameters.
type entitiesInput struct {
	Operation string  `json:"operation" doc:"encode: escape the text for HTML; decode: replace character references by their characters."`
	Text      string  `json:"text" maxLength:"130048" doc:"The text, or the HTML to decode."`
	Mode      *string `json:"mode,omitempty" ops:"encode" enum:"minimal,non_ascii" default:"minimal" doc:"minimal: the five characters & < > \" '; non_ascii: those and every character past U+007E as &#x…;."`
}

func computeEntities(ctx *guest.Context, in entitiesInput) (textOutput, error) {
	switch in.Operation {
	case "encode":
		out, err := entities.Encode(in.Text, bundled.String(in.Mode, "minimal"))
		if err != nil {
			return textOutput{}, bundled.ToolError(err, map[error]string{entities.ErrMode: "unknown mode"})
		}
		return bounded(out)
	case "decode":
		return textOutput{Text: entities.Decode(in.Text)}, nil
	}
	return textOutput{}, guest.Failed("unknown operation")
}

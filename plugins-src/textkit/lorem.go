package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/lorem"
)

var loremTexts = map[string]guest.Text{
	"en": {Name: "Lorem ipsum generator", Description: "Generate lorem ipsum placeholder words, sentences or paragraphs, the same for the same seed."},
	"it": {Name: "Generatore di lorem ipsum", Description: "Genera parole, frasi o paragrafi segnaposto lorem ipsum, uguali a parità di seme."},
	"fr": {Name: "Générateur de lorem ipsum", Description: "Générer des mots, phrases ou paragraphes de faux texte lorem ipsum, identiques pour une même graine."},
	"es": {Name: "Generador de lorem ipsum", Description: "Genera palabras, frases o párrafos de relleno lorem ipsum, iguales para la misma semilla."},
}

// loremInput is the lorem_ipsum service's parameters.
type loremInput struct {
	Operation string `json:"operation" doc:"generate: make placeholder text."`
	Unit      string `json:"unit" enum:"words,sentences,paragraphs" doc:"What count counts."`
	Count     int    `json:"count" minimum:"1" maximum:"10000" doc:"How many: at most 10,000 words, 1,000 sentences or 100 paragraphs."`
	Seed      *int64 `json:"seed,omitempty" minimum:"0" maximum:"9007199254740991" default:"0" doc:"The seed: the same seed, unit and count give the same text."`
	Classic   *bool  `json:"classic,omitempty" default:"true" doc:"Start with \"Lorem ipsum dolor sit amet\"."`
}

// loremOutput is its result.
type loremOutput struct {
	Text  string `json:"text" doc:"The placeholder text; paragraphs are separated by a blank line."`
	Words int    `json:"words" doc:"How many words the text has."`
}

func computeLorem(ctx *guest.Context, in loremInput) (loremOutput, error) {
	var seed int64
	if in.Seed != nil {
		seed = *in.Seed
	}
	text, n, err := lorem.Generate(in.Unit, in.Count, uint64(seed), bundled.Bool(in.Classic, true))
	return loremOutput{Text: text, Words: n}, bundled.ToolError(err, map[error]string{
		lorem.ErrCount: "count must be 1 to 10000 words, 1 to 1000 sentences or 1 to 100 paragraphs",
		lorem.ErrUnit:  "unknown unit",
	})
}

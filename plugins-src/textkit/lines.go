package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/linetext"
)

var linesTexts = map[string]guest.Text{
	"en": {Name: "Line tools", Description: "Sort, deduplicate, reverse or shuffle (with a seed) the lines of a text."},
	"it": {Name: "Strumenti per righe", Description: "Ordina, deduplica, inverte o mescola (con un seme) le righe di un testo."},
	"fr": {Name: "Outils de lignes", Description: "Trier, dédoublonner, inverser ou mélanger (avec une graine) les lignes d'un texte."},
	"es": {Name: "Herramientas de líneas", Description: "Ordena, elimina duplicados, invierte o baraja (con una semilla) las líneas de un texto."},
}

// linesInput is the lines service's parameters.
type linesInput struct {
	Operation  string  `json:"operation" doc:"sort: order the lines; dedupe: keep the first of equal lines; reverse: the last line first; shuffle: a seeded random order."`
	Text       string  `json:"text" maxLength:"130048" doc:"The text; lines end at LF, CRLF or CR."`
	Order      *string `json:"order,omitempty" ops:"sort" enum:"asc,desc" default:"asc" doc:"asc or desc."`
	IgnoreCase *bool   `json:"ignore_case,omitempty" ops:"sort,dedupe" default:"false" doc:"Compare the lines' lower-case forms."`
	Numeric    *bool   `json:"numeric,omitempty" ops:"sort" default:"false" doc:"Lines that start with a decimal number sort by it, before the other lines."`
	Seed       int64   `json:"seed" ops:"shuffle" minimum:"0" maximum:"9007199254740991" doc:"The seed of the order: the same seed and text give the same order."`
}

// linesOutput is its result.
type linesOutput struct {
	Text    string `json:"text" doc:"The lines, joined with the text's first line break; a final line break is kept."`
	Lines   int    `json:"lines" doc:"How many lines the result has."`
	Removed int    `json:"removed" ops:"dedupe" doc:"How many duplicate lines were removed."`
}

func computeLines(ctx *guest.Context, in linesInput) (linesOutput, error) {
	t := linetext.Split(in.Text)
	out := linesOutput{}
	switch in.Operation {
	case "sort":
		linetext.Sort(t.Lines, linetext.SortOptions{
			Descending: bundled.String(in.Order, "asc") == "desc",
			IgnoreCase: bundled.Bool(in.IgnoreCase, false),
			Numeric:    bundled.Bool(in.Numeric, false),
		})
	case "dedupe":
		t.Lines, out.Removed = linetext.Dedupe(t.Lines, bundled.Bool(in.IgnoreCase, false))
	case "reverse":
		linetext.Reverse(t.Lines)
	case "shuffle":
		linetext.Shuffle(t.Lines, uint64(in.Seed))
	default:
		return linesOutput{}, guest.Failed("unknown operation")
	}
	out.Text, out.Lines = t.Join(), len(t.Lines)
	return out, nil
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/linetext"
)

var whitespaceTexts = map[string]guest.Text{
	"en": {Name: "Whitespace cleaner", Description: "Trim a text or its lines, collapse runs of spaces, or remove blank lines."},
	"it": {Name: "Pulizia degli spazi", Description: "Rimuove gli spazi ai bordi del testo o delle righe, riduce le sequenze di spazi o elimina le righe vuote."},
	"fr": {Name: "Nettoyage des espaces", Description: "Supprimer les espaces aux bords d'un texte ou de ses lignes, réduire les suites d'espaces ou retirer les lignes vides."},
	"es": {Name: "Limpieza de espacios", Description: "Recorta los espacios de un texto o de sus líneas, reduce las series de espacios o elimina las líneas en blanco."},
}

// whitespaceInput is the whitespace service's parameters.
type whitespaceInput struct {
	Operation string  `json:"operation" doc:"trim: remove white space at the edges; collapse: one space for every run of spaces, lines trimmed; remove_blank_lines: drop empty and white-space-only lines."`
	Text      string  `json:"text" maxLength:"130048" doc:"The text."`
	Where     *string `json:"where,omitempty" ops:"trim" enum:"both,start,end" default:"both" doc:"Which edges to trim."`
	Scope     *string `json:"scope,omitempty" ops:"trim" enum:"lines,text" default:"lines" doc:"lines: trim every line; text: trim the whole text, blank lines at its edges included."`
}

// whitespaceOutput is its result.
type whitespaceOutput struct {
	Text    string `json:"text" doc:"The cleaned text."`
	Removed int    `json:"removed" ops:"remove_blank_lines" doc:"How many blank lines were removed."`
}

func computeWhitespace(ctx *guest.Context, in whitespaceInput) (whitespaceOutput, error) {
	switch in.Operation {
	case "trim":
		out, err := linetext.Trim(in.Text, bundled.String(in.Where, "both"), bundled.String(in.Scope, "lines"))
		return whitespaceOutput{Text: out}, bundled.ToolError(err, map[error]string{linetext.ErrOption: "unknown where or scope"})
	case "collapse":
		return whitespaceOutput{Text: linetext.Collapse(in.Text)}, nil
	case "remove_blank_lines":
		out, n := linetext.RemoveBlankLines(in.Text)
		return whitespaceOutput{Text: out, Removed: n}, nil
	}
	return whitespaceOutput{}, guest.Failed("unknown operation")
}

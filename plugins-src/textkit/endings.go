package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/linetext"
)

var endingsTexts = map[string]guest.Text{
	"en": {Name: "Line endings", Description: "Convert a text's line endings to LF, CRLF or CR, or detect which it uses."},
	"it": {Name: "Fine riga", Description: "Converte i fine riga di un testo in LF, CRLF o CR, o rileva quali usa."},
	"fr": {Name: "Fins de ligne", Description: "Convertir les fins de ligne d'un texte en LF, CRLF ou CR, ou détecter lesquelles il utilise."},
	"es": {Name: "Finales de línea", Description: "Convierte los finales de línea de un texto a LF, CRLF o CR, o detecta cuáles usa."},
}

// endingsInput is the line_endings service's parameters.
type endingsInput struct {
	Operation string `json:"operation" doc:"convert: every line break to one kind; detect: count the line breaks by kind."`
	Text      string `json:"text" maxLength:"130048" doc:"The text."`
	To        string `json:"to" ops:"convert" enum:"lf,crlf,cr" doc:"lf (Unix), crlf (Windows) or cr (classic Mac OS)."`
}

// endingsOutput is its result.
type endingsOutput struct {
	Text  string `json:"text" ops:"convert" doc:"The text with every LF, CRLF and lone CR replaced."`
	LF    int    `json:"lf" ops:"detect" doc:"Line feeds not preceded by a carriage return."`
	CRLF  int    `json:"crlf" ops:"detect" doc:"Carriage return and line feed pairs."`
	CR    int    `json:"cr" ops:"detect" doc:"Carriage returns not followed by a line feed."`
	Style string `json:"style" ops:"detect" enum:"lf,crlf,cr,mixed,none" doc:"The one kind of line break, mixed for several kinds, none for none."`
}

func computeEndings(ctx *guest.Context, in endingsInput) (endingsOutput, error) {
	switch in.Operation {
	case "convert":
		out, err := linetext.Convert(in.Text, in.To)
		return endingsOutput{Text: out}, bundled.ToolError(err, map[error]string{linetext.ErrOption: "unknown line ending"})
	case "detect":
		b := linetext.Detect(in.Text)
		return endingsOutput{LF: b.LF, CRLF: b.CRLF, CR: b.CR, Style: b.Style()}, nil
	}
	return endingsOutput{}, guest.Failed("unknown operation")
}

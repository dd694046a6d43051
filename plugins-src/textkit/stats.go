package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/textstats"
)

var statsTexts = map[string]guest.Text{
	"en": {Name: "Text statistics", Description: "Count a text's bytes, code points, UTF-16 units, letters, digits, spaces, words and lines."},
	"it": {Name: "Statistiche del testo", Description: "Conta byte, code point, unità UTF-16, lettere, cifre, spazi, parole e righe di un testo."},
	"fr": {Name: "Statistiques de texte", Description: "Compter les octets, points de code, unités UTF-16, lettres, chiffres, espaces, mots et lignes d'un texte."},
	"es": {Name: "Estadísticas de texto", Description: "Cuenta los bytes, puntos de código, unidades UTF-16, letras, dígitos, espacios, palabras y líneas de un texto."},
}

// statsInput is the text_stats service's parameters.
type statsInput struct {
	Operation string `json:"operation" doc:"count: count what the text is made of."`
	Text      string `json:"text" maxLength:"130048" doc:"The text to count."`
}

// statsOutput is its result; docs/tools/text_stats.md defines each count.
type statsOutput struct {
	Bytes       int `json:"bytes" doc:"Bytes of the text's UTF-8 encoding."`
	CodePoints  int `json:"code_points" doc:"Unicode code points (not grapheme clusters: an accent written as a combining mark counts apart)."`
	UTF16Units  int `json:"utf16_units" doc:"UTF-16 code units, what a JavaScript string's length says: code points above U+FFFF count 2."`
	Letters     int `json:"letters" doc:"Code points of the Unicode category L (letters)."`
	Digits      int `json:"digits" doc:"Code points of the Unicode category Nd (decimal digits)."`
	Spaces      int `json:"spaces" doc:"White-space code points, line breaks included."`
	Words       int `json:"words" doc:"Runs of code points that are not white space."`
	Lines       int `json:"lines" doc:"Lines: line breaks (LF, CRLF, CR) plus one for a last line without a break; 0 for empty text."`
	BlankLines  int `json:"blank_lines" doc:"Lines that are empty or white space only."`
	LongestLine int `json:"longest_line" doc:"Code points of the longest line, its line break excluded."`
}

func computeStats(ctx *guest.Context, in statsInput) (statsOutput, error) {
	s := textstats.Count(in.Text)
	return statsOutput{Bytes: s.Bytes, CodePoints: s.CodePoints, UTF16Units: s.UTF16Units, Letters: s.Letters,
		Digits: s.Digits, Spaces: s.Spaces, Words: s.Words, Lines: s.Lines, BlankLines: s.BlankLines,
		LongestLine: s.LongestLine}, nil
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/linediff"
)

var diffTexts = map[string]guest.Text{
	"en": {Name: "Text diff", Description: "Compare two texts line by line and show the differences as a unified diff."},
	"it": {Name: "Confronto di testi", Description: "Confronta due testi riga per riga e mostra le differenze come diff unificato."},
	"fr": {Name: "Comparaison de textes", Description: "Comparer deux textes ligne à ligne et afficher les différences en diff unifié."},
	"es": {Name: "Comparador de textos", Description: "Compara dos textos línea a línea y muestra las diferencias como un diff unificado."},
}

// diffInput is the line_diff service's parameters.
type diffInput struct {
	Operation string  `json:"operation" doc:"unified: the differences as a unified diff."`
	Old       string  `json:"old" maxLength:"130048" doc:"The original text; with new, at most 128 KiB of parameters."`
	New       string  `json:"new" maxLength:"130048" doc:"The changed text."`
	Context   *int    `json:"context,omitempty" minimum:"0" maximum:"100" default:"3" doc:"Unchanged lines shown around each change."`
	OldLabel  *string `json:"old_label,omitempty" maxLength:"256" pattern:"^[^\\r\\n]*$" default:"old" doc:"The name after ---, on one line."`
	NewLabel  *string `json:"new_label,omitempty" maxLength:"256" pattern:"^[^\\r\\n]*$" default:"new" doc:"The name after +++, on one line."`
}

// diffOutput is its result.
type diffOutput struct {
	Text    string `json:"text" doc:"The unified diff; empty when the texts are equal."`
	Equal   bool   `json:"equal" doc:"Whether the texts are equal."`
	Added   int    `json:"added" doc:"Lines only in the new text."`
	Removed int    `json:"removed" doc:"Lines only in the old text."`
	Hunks   int    `json:"hunks" doc:"How many hunks the diff has."`
}

func computeDiff(ctx *guest.Context, in diffInput) (diffOutput, error) {
	r := linediff.Unified(in.Old, in.New, bundled.String(in.OldLabel, "old"), bundled.String(in.NewLabel, "new"), bundled.Int(in.Context, 3))
	if _, err := bounded(r.Text); err != nil {
		return diffOutput{}, err
	}
	return diffOutput{Text: r.Text, Equal: r.Hunks == 0, Added: r.Added, Removed: r.Removed, Hunks: r.Hunks}, nil
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/unorm"
)

var normalizeTexts = map[string]guest.Text{
	"en": {Name: "Unicode normalizer", Description: "Normalize text to NFC, NFD, NFKC or NFKD, or check whether it already is."},
	"it": {Name: "Normalizzatore Unicode", Description: "Normalizza il testo in NFC, NFD, NFKC o NFKD, o verifica se lo è già."},
	"fr": {Name: "Normaliseur Unicode", Description: "Normaliser un texte en NFC, NFD, NFKC ou NFKD, ou vérifier s'il l'est déjà."},
	"es": {Name: "Normalizador Unicode", Description: "Normaliza texto a NFC, NFD, NFKC o NFKD, o comprueba si ya lo está."},
}

// normalizeInput is the unicode_normalize service's parameters.
type normalizeInput struct {
	Operation string `json:"operation" doc:"normalize: the text in the form; check: whether the text is already in it."`
	Text      string `json:"text" maxLength:"130048" doc:"The text."`
	Form      string `json:"form" enum:"nfc,nfd,nfkc,nfkd" doc:"nfc and nfd: canonical composition and decomposition; nfkc and nfkd: compatibility ones, which also fold ligatures, widths, superscripts and the like (UAX #15)."`
}

// normalizeOutput is its result.
type normalizeOutput struct {
	Text       string `json:"text" ops:"normalize" doc:"The normalized text."`
	Normalized bool   `json:"normalized" ops:"check" doc:"Whether the text is already in the form."`
}

func computeNormalize(ctx *guest.Context, in normalizeInput) (normalizeOutput, error) {
	errs := map[error]string{unorm.ErrForm: "unknown form"}
	switch in.Operation {
	case "normalize":
		out, err := unorm.Normalize(in.Text, in.Form)
		if err != nil {
			return normalizeOutput{}, bundled.ToolError(err, errs)
		}
		t, err := bounded(out)
		return normalizeOutput{Text: t.Text}, err
	case "check":
		ok, err := unorm.IsNormal(in.Text, in.Form)
		return normalizeOutput{Normalized: ok}, bundled.ToolError(err, errs)
	}
	return normalizeOutput{}, guest.Failed("unknown operation")
}

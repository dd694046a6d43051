package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/rot"
)

var rotTexts = map[string]guest.Text{
	"en": {Name: "ROT13 and Caesar", Description: "Rotate letters with ROT13 or a Caesar shift, or printable ASCII with ROT47."},
	"it": {Name: "ROT13 e cifrario di Cesare", Description: "Ruota le lettere con ROT13 o uno spostamento di Cesare, o l'ASCII stampabile con ROT47."},
	"fr": {Name: "ROT13 et code de César", Description: "Faire tourner les lettres avec ROT13 ou un décalage de César, ou l'ASCII imprimable avec ROT47."},
	"es": {Name: "ROT13 y cifrado César", Description: "Rota las letras con ROT13 o un desplazamiento César, o el ASCII imprimible con ROT47."},
}

// rotInput is the rot13 service's parameters.
type rotInput struct {
	Operation string `json:"operation" doc:"rot13: letters by 13 places; rot47: printable ASCII by 47 places; caesar: letters by shift places."`
	Text      string `json:"text" maxLength:"130048" doc:"The text; only ASCII letters (rot47: ASCII from ! to ~) change."`
	Shift     int    `json:"shift" ops:"caesar" minimum:"-25" maximum:"25" doc:"Places to shift each letter forward; a negative shift goes back (decodes)."`
}

func computeRot(ctx *guest.Context, in rotInput) (textOutput, error) {
	switch in.Operation {
	case "rot13":
		return textOutput{Text: rot.Rot13(in.Text)}, nil
	case "rot47":
		return textOutput{Text: rot.Rot47(in.Text)}, nil
	case "caesar":
		out, err := rot.Caesar(in.Text, in.Shift)
		return textOutput{Text: out}, bundled.ToolError(err, map[error]string{rot.ErrShift: "shift must be between -25 and 25"})
	}
	return textOutput{}, guest.Failed("unknown operation")
}

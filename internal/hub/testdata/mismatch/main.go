// Command mismatch is the browser test's tool module of two services that
// clash with the hub's compiled contracts on purpose:
//
//   - case: the bundled case service's code, contract version and UI, but
//     the operations convert and shout, where the compiled contract has
//     convert only: the hub shows operation_mismatch;
//   - url: the code codec.wasm also declares, so both claims are
//     quarantined (duplicate_code) and the catalogue lists url as an
//     unavailable summary: the hub shows tool_unavailable.
//
// The test builds it for wasip1 with internal/testkit; it is not a
// bundled tool.
package main

import (
	"strings"

	"github.com/toolhost/toolhost/guest"
)

func init() {
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{
			service("case", "Case converter", []guest.Operation{{Name: "convert", Deterministic: true}, {Name: "shout", Deterministic: true}}),
			service("url", "URL encoder (a duplicate)", []guest.Operation{{Name: "encode", Deterministic: true}}),
		},
	})
}

func main() {}

func service(code, name string, ops []guest.Operation) *guest.Service[input, output] {
	return &guest.Service[input, output]{
		Code:           code,
		Name:           name,
		Description:    "A test service whose contract differs from the compiled one.",
		NameKey:        "tools." + code + ".name",
		DescriptionKey: "tools." + code + ".description",
		Texts: map[string]guest.Text{
			"en": {Name: name, Description: "A test service whose contract differs from the compiled one."},
			"it": {Name: name + " (it)", Description: "Un servizio di prova il cui contratto differisce da quello compilato."},
			"fr": {Name: name + " (fr)", Description: "Un service de test dont le contrat diffère du contrat compilé."},
			"es": {Name: name + " (es)", Description: "Un servicio de prueba cuyo contrato difiere del compilado."},
		},
		Category:      "test",
		IconKey:       code,
		UI:            guest.UI{Kind: "custom", ComponentKey: code, Version: "1.0.0"},
		Documentation: guest.Documentation{Path: "tools/" + code, Version: "1.0.0"},
		Operations:    ops,
		Compute:       compute,
	}
}

type input struct {
	Operation string `json:"operation" doc:"The operation."`
	Text      string `json:"text" maxLength:"1024" doc:"The text."`
}

type output struct {
	Text string `json:"text" doc:"The text."`
}

func compute(ctx *guest.Context, in input) (output, error) {
	return output{Text: strings.ToUpper(in.Text)}, nil
}

// Command echo is the smallest tool: its one service returns the text it
// is given, so that what an item costs is the SDK's own work (reading the
// input, decoding the parameters, encoding the result). The benchmarks of
// package guesttest build it for wasip1.
package main

import "github.com/toolhost/toolhost/guest"

type input struct {
	Operation string `json:"operation"`
	Text      string `json:"text"`
}

type output struct {
	Text string `json:"text"`
}

func init() {
	t := guest.Text{Name: "Echo", Description: "Return the text."}
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[input, output]{
			Code:          "echo",
			Name:          t.Name,
			Description:   t.Description,
			Texts:         map[string]guest.Text{"en": t, "it": t, "fr": t, "es": t},
			Category:      "dev",
			IconKey:       "echo",
			UI:            guest.UI{Kind: "custom", ComponentKey: "echo", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/echo", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "echo", Deterministic: true}},
			Compute: func(ctx *guest.Context, in input) (output, error) {
				return output{Text: in.Text}, nil
			},
		}},
	})
}

func main() {}

//go:build !guestgen

package guest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolhost/toolhost/guest"
)

// Input is the textcase service's parameters.
type Input struct {
	Operation string  `json:"operation"`
	Text      string  `json:"text" maxLength:"10000" doc:"The text to convert."`
	Style     *string `json:"style,omitempty" enum:"upper,lower" default:"upper"`
}

// Output is its result.
type Output struct {
	Text string `json:"text"`
}

func convert(ctx *guest.Context, in Input) (Output, error) {
	if err := ctx.Checkpoint(); err != nil {
		return Output{}, err
	}
	if in.Style != nil && *in.Style == "lower" { // absent: the tool's own default
		return Output{Text: strings.ToLower(in.Text)}, nil
	}
	return Output{Text: strings.ToUpper(in.Text)}, nil
}

func init() {
	text := guest.Text{Name: "Text case", Description: "Convert text to upper or lower case."}
	guest.Register(guest.Package{
		ContractVersion:       "1.0.0",
		ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[Input, Output]{
			Code:          "textcase",
			Name:          text.Name,
			Description:   text.Description,
			Texts:         map[string]guest.Text{"en": text, "it": text, "fr": text, "es": text},
			Category:      "text",
			IconKey:       "textcase",
			UI:            guest.UI{Kind: "custom", ComponentKey: "textcase", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/textcase", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "convert", Deterministic: true}},
			Compute:       convert,
		}},
	})
}

func Example() {
	decl, err := guest.Describe()
	if err != nil {
		fmt.Println(err)
		return
	}
	var d struct {
		Services []struct {
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"services"`
	}
	if err := json.Unmarshal(decl, &d); err != nil {
		fmt.Println(err)
		return
	}
	var schema bytes.Buffer
	json.Indent(&schema, d.Services[0].InputSchema, "", "  ")
	fmt.Println(schema.String())

	out, err := guest.Invoke([]byte(`{"tool_code":"textcase","operation":"convert",` +
		`"parameters":{"operation":"convert","text":"Hello"}}`))
	fmt.Println(string(out), err)
	// Output:
	// {
	//   "$schema": "https://json-schema.org/draft/2020-12/schema",
	//   "additionalProperties": false,
	//   "properties": {
	//     "operation": {
	//       "const": "convert",
	//       "type": "string"
	//     },
	//     "style": {
	//       "default": "upper",
	//       "enum": [
	//         "upper",
	//         "lower"
	//       ],
	//       "type": "string"
	//     },
	//     "text": {
	//       "description": "The text to convert.",
	//       "maxLength": 10000,
	//       "type": "string"
	//     }
	//   },
	//   "required": [
	//     "operation",
	//     "text"
	//   ],
	//   "type": "object"
	// }
	// {"text":"HELLO"} <nil>
}

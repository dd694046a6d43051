package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/tomljson"
)

// tomlInput is the toml_json service's parameters.
type tomlInput struct {
	Operation string `json:"operation" doc:"toml_to_json: a TOML document to a JSON object; json_to_toml: a JSON object to a TOML document."`
	Text      string `json:"text" maxLength:"130048" doc:"toml_to_json: the TOML (v1.0.0). json_to_toml: the JSON object."`
	Indent    *int   `json:"indent,omitempty" ops:"toml_to_json" minimum:"0" maximum:"8" default:"2" doc:"Spaces per nesting level of the JSON; 0 is compact."`
}

var tomlErrors = map[error]string{
	tomljson.ErrNotTable: "text must be a JSON object: a TOML document is a table",
	tomljson.ErrInfinity: "text holds inf or nan, which JSON cannot hold",
	tomljson.ErrTooLarge: "the converted text would exceed the 256 KiB result limit",
	jsontree.ErrTooLarge: "the converted text would exceed the 256 KiB result limit",
}

func computeTOML(ctx *guest.Context, in tomlInput) (textOutput, error) {
	switch in.Operation {
	case "toml_to_json":
		v, err := tomljson.ToJSON(in.Text)
		if err != nil {
			return textOutput{}, bundled.ToolError(err, tomlErrors)
		}
		out, err := jsontree.Encode(v, bundled.Int(in.Indent, 2), bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, tomlErrors)
	case "json_to_toml":
		v, err := jsontree.Parse(in.Text, "text is not valid JSON")
		if err != nil {
			return textOutput{}, bundled.ToolError(err, tomlErrors)
		}
		out, err := tomljson.FromJSON(v, in.Text, bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, tomlErrors)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

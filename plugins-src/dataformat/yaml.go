package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/yamljson"
)

// yamlInput is the yaml_json service's parameters.
type yamlInput struct {
	Operation    string `json:"operation" doc:"yaml_to_json: YAML text to JSON; json_to_yaml: JSON text to block YAML."`
	Text         string `json:"text" maxLength:"130048" doc:"yaml_to_json: the YAML (1.2; anchors, aliases and merge keys expanded). json_to_yaml: the JSON."`
	Indent       *int   `json:"indent,omitempty" minimum:"0" maximum:"8" default:"2" doc:"yaml_to_json: spaces per level of the JSON, 0 compact. json_to_yaml: spaces per level of the YAML, 2 to 8."`
	AllDocuments *bool  `json:"all_documents,omitempty" ops:"yaml_to_json" default:"false" doc:"Convert every document of a multi-document stream (--- separated) into an element of a JSON array; otherwise more than one document is refused."`
}

var yamlErrors = map[error]string{
	yamljson.ErrIndent:   "indent must be between 2 and 8 for YAML",
	yamljson.ErrTooLarge: "the converted text would exceed the 256 KiB result limit",
	jsontree.ErrTooLarge: "the converted text would exceed the 256 KiB result limit",
}

func computeYAML(ctx *guest.Context, in yamlInput) (textOutput, error) {
	indent := bundled.Int(in.Indent, 2)
	switch in.Operation {
	case "yaml_to_json":
		v, err := yamljson.ToJSON(in.Text, bundled.Bool(in.AllDocuments, false))
		if err != nil {
			return textOutput{}, bundled.ToolError(err, yamlErrors)
		}
		out, err := jsontree.Encode(v, indent, bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, yamlErrors)
	case "json_to_yaml":
		v, err := jsontree.Parse(in.Text, "text is not valid JSON")
		if err != nil {
			return textOutput{}, bundled.ToolError(err, yamlErrors)
		}
		out, err := yamljson.FromJSON(v, indent, bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, yamlErrors)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

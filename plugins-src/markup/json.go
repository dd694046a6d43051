package main

import (
	"errors"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jsonfmt"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// jsonInput is the json service's parameters.
type jsonInput struct {
	Operation string `json:"operation" doc:"format: re-indent; minify: remove insignificant whitespace; validate: check and locate the first fault."`
	Text      string `json:"text" maxLength:"130048" doc:"The JSON text."`
	Indent    *int   `json:"indent,omitempty" ops:"format" minimum:"0" maximum:"8" default:"2" doc:"Spaces per nesting level; 0 is compact output."`
	SortKeys  *bool  `json:"sort_keys,omitempty" ops:"format" default:"false" doc:"Order object members by key (code point order); members with equal keys keep their order."`
}

// jsonOutput is its result: text for format and minify, a verdict for
// validate.
type jsonOutput struct {
	Text     string  `json:"text" ops:"format,minify" doc:"The formatted or minified JSON."`
	Valid    bool    `json:"valid" ops:"validate" doc:"Whether the text is one valid JSON value."`
	Position *int    `json:"position,omitempty" ops:"validate" doc:"When invalid: the byte offset (0-based, UTF-8) of the first fault."`
	Line     *int    `json:"line,omitempty" ops:"validate" doc:"When invalid: the fault's line, from 1."`
	Column   *int    `json:"column,omitempty" ops:"validate" doc:"When invalid: the fault's column, from 1, in characters."`
	Reason   *string `json:"reason,omitempty" ops:"validate" doc:"When invalid: what is wrong, in a few words."`
}

// jsonErrors are the jsonfmt errors that are the caller's to fix.
var jsonErrors = map[error]string{
	jsonfmt.ErrIndent:   "indent must be between 0 and 8",
	jsonfmt.ErrTooLarge: "the formatted text would exceed the 256 KiB result limit: use a smaller indent or the minify operation",
}

func computeJSON(ctx *guest.Context, in jsonInput) (jsonOutput, error) {
	switch in.Operation {
	case "format":
		out, err := jsonfmt.Format(in.Text, jsonfmt.Options{
			Indent:   bundled.Int(in.Indent, 2),
			SortKeys: bundled.Bool(in.SortKeys, false),
			MaxBytes: bundled.MaxResultBytes,
		})
		return jsonOutput{Text: out}, bundled.ToolError(err, jsonErrors)
	case "minify":
		out, err := jsonfmt.Minify(in.Text)
		return jsonOutput{Text: out}, bundled.ToolError(err, jsonErrors)
	case "validate":
		err := jsonfmt.Validate(in.Text)
		var pe *textpos.Error
		if err == nil {
			return jsonOutput{Valid: true}, nil
		}
		if !errors.As(err, &pe) {
			return jsonOutput{}, bundled.ToolError(err, jsonErrors)
		}
		return jsonOutput{
			Valid:    false,
			Position: &pe.Position.Offset,
			Line:     &pe.Position.Line,
			Column:   &pe.Position.Column,
			Reason:   &pe.Reason,
		}, nil
	}
	return jsonOutput{}, guest.Failed("unknown operation")
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/xmlfmt"
)

// xmlInput is the xml service's parameters.
type xmlInput struct {
	Operation string `json:"operation" doc:"format: one element a line, indented; minify: remove the white space between elements and the comments."`
	Text      string `json:"text" maxLength:"130048" doc:"The XML document (well-formed XML 1.0, one root element)."`
	Indent    *int   `json:"indent,omitempty" ops:"format" minimum:"1" maximum:"8" default:"2" doc:"Spaces per nesting level."`
	Comments  *bool  `json:"comments,omitempty" ops:"format" default:"true" doc:"Keep comments (false drops them)."`
}

var xmlErrors = map[error]string{
	xmlfmt.ErrIndent:   "indent must be between 1 and 8",
	xmlfmt.ErrTooLarge: "the formatted text would exceed the 256 KiB result limit: use a smaller indent or the minify operation",
}

func computeXML(ctx *guest.Context, in xmlInput) (textOutput, error) {
	switch in.Operation {
	case "format":
		out, err := xmlfmt.Format(in.Text, xmlfmt.Options{
			Indent:   bundled.Int(in.Indent, 2),
			Comments: bundled.Bool(in.Comments, true),
			MaxBytes: bundled.MaxResultBytes,
		})
		return textOutput{Text: out}, bundled.ToolError(err, xmlErrors)
	case "minify":
		out, err := xmlfmt.Minify(in.Text, bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, xmlErrors)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

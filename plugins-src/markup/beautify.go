package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/cssfmt"
	"github.com/toolhost/toolhost/plugins-src/internal/htmlfmt"
	"github.com/toolhost/toolhost/plugins-src/internal/jsonfmt"
)

// beautifyInput is the beautify service's parameters; the operation names
// the language.
type beautifyInput struct {
	Operation string `json:"operation" doc:"The language of the text: json, html or css."`
	Text      string `json:"text" maxLength:"130048" doc:"The text to re-indent."`
	Indent    *int   `json:"indent,omitempty" minimum:"0" maximum:"8" default:"2" doc:"Spaces per nesting level. For json, 0 is compact output; for html and css, 0 keeps the line breaks without indenting."`
	SortKeys  *bool  `json:"sort_keys,omitempty" ops:"json" default:"false" doc:"Order object members by key (code point order)."`
}

var beautifyErrors = map[error]string{
	jsonfmt.ErrIndent:   "indent must be between 0 and 8",
	htmlfmt.ErrIndent:   "indent must be between 0 and 8",
	cssfmt.ErrIndent:    "indent must be between 0 and 8",
	jsonfmt.ErrTooLarge: "the re-indented text would exceed the 256 KiB result limit: use a smaller indent",
	htmlfmt.ErrTooLarge: "the re-indented text would exceed the 256 KiB result limit: use a smaller indent",
	cssfmt.ErrTooLarge:  "the re-indented text would exceed the 256 KiB result limit: use a smaller indent",
}

func computeBeautify(ctx *guest.Context, in beautifyInput) (textOutput, error) {
	indent := bundled.Int(in.Indent, 2)
	var out string
	var err error
	switch in.Operation {
	case "json":
		out, err = jsonfmt.Format(in.Text, jsonfmt.Options{
			Indent:   indent,
			SortKeys: bundled.Bool(in.SortKeys, false),
			MaxBytes: bundled.MaxResultBytes,
		})
	case "html":
		out, err = htmlfmt.Beautify(in.Text, indent, bundled.MaxResultBytes)
	case "css":
		out, err = cssfmt.Beautify(in.Text, indent, bundled.MaxResultBytes)
	default:
		return textOutput{}, guest.Failed("unknown operation")
	}
	return textOutput{Text: out}, bundled.ToolError(err, beautifyErrors)
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/percent"
)

// urlInput is the url service's parameters.
type urlInput struct {
	Operation string  `json:"operation" doc:"encode: percent-encode the text; decode: decode percent-encoded text."`
	Text      string  `json:"text" maxLength:"130048" doc:"The text to encode or decode."`
	Component *string `json:"component,omitempty" enum:"query,path" default:"query" doc:"query: a query parameter name or value (space as '+'); path: one path segment (space as %20, '+' kept)."`
}

func computeURL(ctx *guest.Context, in urlInput) (textOutput, error) {
	c := percent.Component(bundled.String(in.Component, "query"))
	var out string
	var err error
	switch in.Operation {
	case "encode":
		out, err = percent.Encode(in.Text, c)
	case "decode":
		out, err = percent.Decode(in.Text, c)
	default:
		return textOutput{}, guest.Failed("unknown operation")
	}
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{percent.ErrComponent: "unknown component"})
}

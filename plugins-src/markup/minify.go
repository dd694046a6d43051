package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/minify"
)

// minifyInput is the minify service's parameters; the operation names the
// language.
type minifyInput struct {
	Operation string `json:"operation" doc:"The language of the text: html, css, js, svg or xml."`
	Text      string `json:"text" maxLength:"130048" doc:"The text to minify."`
}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The transformed text."`
}

func computeMinify(ctx *guest.Context, in minifyInput) (textOutput, error) {
	out, err := minify.Minify(minify.Language(in.Operation), in.Text)
	return textOutput{Text: out}, bundled.ToolError(err, nil)
}

package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/htmltext"
)

// htmlTextInput is the html_to_text service's parameters.
type htmlTextInput struct {
	Operation string `json:"operation" doc:"convert: the readable text of the HTML."`
	Text      string `json:"text" maxLength:"130048" doc:"The HTML: a whole document or a fragment."`
	Links     *bool  `json:"links,omitempty" default:"false" doc:"Write an http, https or mailto link's URL after its text, as <URL>, unless the text is the URL."`
}

func computeHTMLText(ctx *guest.Context, in htmlTextInput) (textOutput, error) {
	if in.Operation != "convert" {
		return textOutput{}, guest.Failed("unknown operation")
	}
	out, err := htmltext.Text(in.Text, htmltext.Options{Links: bundled.Bool(in.Links, false), MaxBytes: bundled.MaxResultBytes})
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{
		htmltext.ErrTooLarge: "the text would exceed the 256 KiB result limit",
	})
}

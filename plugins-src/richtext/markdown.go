package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/mdhtml"
)

// markdownInput is the markdown service's parameters.
type markdownInput struct {
	Operation string `json:"operation" doc:"to_html: render the Markdown as an HTML fragment."`
	Text      string `json:"text" maxLength:"130048" doc:"The Markdown."`
	GFM       *bool  `json:"gfm,omitempty" default:"true" doc:"GitHub Flavored Markdown's extensions: tables, strikethrough, autolinks (www. and bare URLs) and task lists; false is plain CommonMark."`
	HardWraps *bool  `json:"hard_wraps,omitempty" default:"false" doc:"Render every line break inside a paragraph as <br> (as GitHub comments do), not as a space."`
}

func computeMarkdown(ctx *guest.Context, in markdownInput) (textOutput, error) {
	if in.Operation != "to_html" {
		return textOutput{}, guest.Failed("unknown operation")
	}
	out, err := mdhtml.ToHTML(in.Text, mdhtml.Options{
		GFM:       bundled.Bool(in.GFM, true),
		HardWraps: bundled.Bool(in.HardWraps, false),
		MaxBytes:  bundled.MaxResultBytes,
	})
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{
		mdhtml.ErrTooLarge: "the HTML would exceed the 256 KiB result limit",
	})
}

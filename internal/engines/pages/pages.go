// Package pages declares the page-only tools: tools people use on their
// page, which the catalogue lists but no API runs (ADR-027: the YouTube
// downloader stays a page, for YouTube's terms and the legal exposure). Each
// declares api false, so its descriptor has run null and the run route
// answers 404 tools.tool.not_runnable; the seed-000 catalogue lists it as
// unavailable (page_only). Its Runner refuses every item: nothing of a page
// tool ever runs on the server.
package pages

import (
	"context"
	_ "embed"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Name names the package among the builtins: "builtin/pages".
const Name = "pages"

//go:embed yt.json
var declaration []byte

// Declaration returns the package declaration of the page-only tools.
func Declaration() []byte { return append([]byte(nil), declaration...) }

// Runner refuses every item of a page-only tool with tool_unavailable.
type Runner struct{}

// Run refuses job: a page-only tool has no server engine.
func (Runner) Run(context.Context, engine.Job) (*engine.Outcome, error) {
	return nil, toolerr.New(toolerr.ToolUnavailable)
}

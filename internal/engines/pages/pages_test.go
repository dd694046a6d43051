package pages_test

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/pages"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestDeclarationIsPageOnly(t *testing.T) {
	pkg, err := tooldef.Decode(pages.Declaration(), tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range pkg.Services {
		if s.Definition == nil {
			t.Fatalf("%s refused: %v", s.ToolCode, s.Refusal)
		}
		if s.Definition.Platform.API {
			t.Errorf("%s: api true, want a page-only tool", s.ToolCode)
		}
	}
}

func TestRunnerRefuses(t *testing.T) {
	_, err := pages.Runner{}.Run(context.Background(), engine.Job{ToolCode: "yt"})
	if code, _ := toolerr.CodeOf(err); code != toolerr.ToolUnavailable {
		t.Errorf("Run = %v, want tool_unavailable", err)
	}
}

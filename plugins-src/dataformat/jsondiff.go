package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jsondiff"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// diffInput is the json_diff service's parameters.
type diffInput struct {
	Operation string `json:"operation" doc:"diff: the JSON Patch (RFC 6902) that turns a into b."`
	A         string `json:"a" maxLength:"130048" doc:"The first JSON document, the one the patch applies to."`
	B         string `json:"b" maxLength:"130048" doc:"The second JSON document, the one the patch produces."`
	Indent    *int   `json:"indent,omitempty" minimum:"0" maximum:"8" default:"0" doc:"Spaces per nesting level of the patch; 0 is compact."`
}

// diffOutput is its result.
type diffOutput struct {
	Equal      bool   `json:"equal" doc:"Whether the documents are equal (then the patch is [])."`
	Operations int    `json:"operations" doc:"The number of operations in the patch."`
	Text       string `json:"text" doc:"The JSON Patch: an array of add, remove and replace operations, in the order they apply."`
}

func computeDiff(ctx *guest.Context, in diffInput) (diffOutput, error) {
	invalid := map[error]string{jsontree.ErrTooLarge: "the patch would exceed the 256 KiB result limit"}
	a, err := jsontree.Parse(in.A, "a is not valid JSON")
	if err != nil {
		return diffOutput{}, bundled.ToolError(err, invalid)
	}
	b, err := jsontree.Parse(in.B, "b is not valid JSON")
	if err != nil {
		return diffOutput{}, bundled.ToolError(err, invalid)
	}
	ops := jsondiff.Diff(a, b)
	text, err := jsontree.Encode(jsondiff.Patch(ops), bundled.Int(in.Indent, 0), bundled.MaxResultBytes)
	if err != nil {
		return diffOutput{}, bundled.ToolError(err, invalid)
	}
	return diffOutput{Equal: len(ops) == 0, Operations: len(ops), Text: text}, nil
}

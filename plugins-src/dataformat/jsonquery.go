package main

import (
	"errors"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jsonquery"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// jsonQueryInput is the json_query service's parameters.
type jsonQueryInput struct {
	Operation string `json:"operation" doc:"query: select the nodes a JSONPath query (RFC 9535) designates."`
	Text      string `json:"text" maxLength:"130048" doc:"The JSON document."`
	Query     string `json:"query" minLength:"1" maxLength:"4096" doc:"The JSONPath query, starting with $ (RFC 9535: names, wildcards, indexes, slices, descendants, filters and the functions length, count, match, search and value)."`
	Indent    *int   `json:"indent,omitempty" minimum:"0" maximum:"8" default:"2" doc:"Spaces per nesting level of the result text; 0 is compact."`
}

// jsonQueryOutput is its result.
type jsonQueryOutput struct {
	Count int      `json:"count" doc:"The number of nodes selected."`
	Text  string   `json:"text" doc:"The selected values as a JSON array, in the order of the nodelist, each exactly as written in the document."`
	Paths []string `json:"paths" doc:"The normalized path (RFC 9535 §2.7) of each selected node, in the same order."`
}

func computeJSONQuery(ctx *guest.Context, in jsonQueryInput) (jsonQueryOutput, error) {
	invalid := map[error]string{jsontree.ErrTooLarge: "the selected values would exceed the 256 KiB result limit"}
	doc, err := jsontree.Parse(in.Text, "text is not valid JSON")
	if err != nil {
		return jsonQueryOutput{}, bundled.ToolError(err, invalid)
	}
	nodes, err := jsonquery.Query(doc, in.Query)
	var qe *jsonquery.QueryError
	if errors.As(err, &qe) {
		return jsonQueryOutput{}, guest.InvalidInput("%s", qe.Error())
	}
	if err != nil {
		return jsonQueryOutput{}, bundled.ToolError(err, invalid)
	}
	list := jsontree.Value{Kind: jsontree.Array, Items: make([]jsontree.Value, len(nodes))}
	out := jsonQueryOutput{Count: len(nodes), Paths: make([]string, len(nodes))}
	for i, n := range nodes {
		list.Items[i], out.Paths[i] = n.Value, n.Path
	}
	out.Text, err = jsontree.Encode(list, bundled.Int(in.Indent, 2), bundled.MaxResultBytes)
	return out, bundled.ToolError(err, invalid)
}

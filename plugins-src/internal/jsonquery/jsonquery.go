// Package jsonquery runs a JSONPath query (RFC 9535) on a JSON document
// with github.com/theory/jsonpath, an implementation of the RFC that
// passes its compliance suite, and returns the selected nodes from the
// document's ordered tree: values exactly as written (member order,
// numbers) and the normalized path of each (RFC 9535 §2.7).
package jsonquery

import (
	"errors"
	"strings"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// MaxQueryBytes bounds a query.
const MaxQueryBytes = 4096

// QueryError is a query that is not valid RFC 9535 JSONPath; Reason says
// why and where, in the library's words (it quotes only the query).
type QueryError struct{ Reason string }

func (e *QueryError) Error() string {
	return "query is not valid JSONPath (RFC 9535): " + e.Reason
}

// Node is one selected node: its value and its normalized path, such as
// $['store']['book'][0].
type Node struct {
	Value jsontree.Value
	Path  string
}

// Query selects the nodes of doc that query designates, in the order
// RFC 9535 gives them (duplicates included, as the RFC's nodelists do).
func Query(doc jsontree.Value, query string) ([]Node, error) {
	if len(query) > MaxQueryBytes {
		return nil, &QueryError{Reason: "longer than 4096 bytes"}
	}
	p, err := jsonpath.Parse(query)
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), "jsonpath: ")
		if len(reason) > 300 {
			reason = reason[:300] + "…"
		}
		return nil, &QueryError{Reason: reason}
	}
	located := p.SelectLocated(doc.Any())
	nodes := make([]Node, 0, len(located))
	for _, ln := range located {
		v, err := resolve(doc, ln.Path)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, Node{Value: v, Path: ln.Path.String()})
	}
	return nodes, nil
}

// resolve finds the node at path in the ordered tree.
func resolve(doc jsontree.Value, path spec.NormalizedPath) (jsontree.Value, error) {
	v := doc
	for _, sel := range path {
		switch s := sel.(type) {
		case spec.Name:
			m, ok := v.Get(string(s))
			if !ok {
				return jsontree.Value{}, errors.New("jsonquery: selected member not in the document")
			}
			v = *m
		case spec.Index:
			if v.Kind != jsontree.Array || int(s) < 0 || int(s) >= len(v.Items) {
				return jsontree.Value{}, errors.New("jsonquery: selected element not in the document")
			}
			v = v.Items[s]
		default:
			return jsontree.Value{}, errors.New("jsonquery: unknown path selector")
		}
	}
	return v, nil
}

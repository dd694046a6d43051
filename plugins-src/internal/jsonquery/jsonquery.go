// Package jsonquery runs a JSONPath query (RFC 9535) on a JSON document
// with github.com/theory/jsonpath, an implementation of the RFC that
// passes its compliance suite, and returns the selected nodes from the
// document's ordered tree: values exactly as written (member order,
// numbers) and the normalized path of each (RFC 9535 §2.7).
package jsonquery

import (
	"errors"
	"slices"
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

// Query selects the nodes of doc that query designates, in document order
// (an ancestor before its descendants, members and elements in the order
// written), duplicates included and kept together, as RFC 9535's nodelists
// keep them.
//
// RFC 9535 leaves the order of an object's members unspecified, and the
// library visits them in Go's map order, which changes from run to run: a
// deterministic tool cannot pass that on, so the nodelist is sorted into
// document order. A selector list's own order ($[1,0]) gives way to it.
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
	type keyed struct {
		node Node
		key  []int
	}
	list := make([]keyed, 0, len(located))
	for _, ln := range located {
		v, key, err := resolve(doc, ln.Path)
		if err != nil {
			return nil, err
		}
		list = append(list, keyed{Node{Value: v, Path: ln.Path.String()}, key})
	}
	slices.SortStableFunc(list, func(a, b keyed) int { return slices.Compare(a.key, b.key) })
	nodes := make([]Node, len(list))
	for i, k := range list {
		nodes[i] = k.node
	}
	return nodes, nil
}

// resolve finds the node at path in the ordered tree, and its place in
// document order: the position of each member or element on the way.
func resolve(doc jsontree.Value, path spec.NormalizedPath) (jsontree.Value, []int, error) {
	v := doc
	key := make([]int, 0, len(path))
	for _, sel := range path {
		switch s := sel.(type) {
		case spec.Name:
			i := slices.IndexFunc(v.Members, func(m jsontree.Member) bool { return m.Key == string(s) })
			if i < 0 {
				return jsontree.Value{}, nil, errors.New("jsonquery: selected member not in the document")
			}
			key = append(key, i)
			v = v.Members[i].Value
		case spec.Index:
			if v.Kind != jsontree.Array || int(s) < 0 || int(s) >= len(v.Items) {
				return jsontree.Value{}, nil, errors.New("jsonquery: selected element not in the document")
			}
			key = append(key, int(s))
			v = v.Items[s]
		default:
			return jsontree.Value{}, nil, errors.New("jsonquery: unknown path selector")
		}
	}
	return v, key, nil
}

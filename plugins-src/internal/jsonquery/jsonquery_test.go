package jsonquery

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// store is the example document of RFC 9535 §1.5 (Figure 1).
const store = `{ "store": {
    "book": [
      { "category": "reference",
        "author": "Nigel Rees",
        "title": "Sayings of the Century",
        "price": 8.95
      },
      { "category": "fiction",
        "author": "Evelyn Waugh",
        "title": "Sword of Honour",
        "price": 12.99
      },
      { "category": "fiction",
        "author": "Herman Melville",
        "title": "Moby Dick",
        "isbn": "0-553-21311-3",
        "price": 8.99
      },
      { "category": "fiction",
        "author": "J. R. R. Tolkien",
        "title": "The Lord of the Rings",
        "isbn": "0-395-19395-8",
        "price": 22.99
      }
    ],
    "bicycle": {
      "color": "red",
      "price": 399
    }
  }
}`

// The queries and results of RFC 9535 §1.5 (Table 2) and §2.3 examples.
func TestQuery(t *testing.T) {
	doc, err := jsontree.Parse(store, "x")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  string // the values, compact JSON, space-separated
		paths string // the first node's normalized path
	}{
		{"$.store.book[*].author", `"Nigel Rees" "Evelyn Waugh" "Herman Melville" "J. R. R. Tolkien"`, "$['store']['book'][0]['author']"},
		{"$..author", `"Nigel Rees" "Evelyn Waugh" "Herman Melville" "J. R. R. Tolkien"`, "$['store']['book'][0]['author']"},
		{"$.store..price", `8.95 12.99 8.99 22.99 399`, "$['store']['book'][0]['price']"},
		{"$..book[2]", `{"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553-21311-3","price":8.99}`, "$['store']['book'][2]"},
		{"$..book[-1].title", `"The Lord of the Rings"`, "$['store']['book'][3]['title']"},
		{"$..book[0,1].price", `8.95 12.99`, "$['store']['book'][0]['price']"},
		{"$..book[:2].category", `"reference" "fiction"`, "$['store']['book'][0]['category']"},
		{"$..book[?@.isbn].title", `"Moby Dick" "The Lord of the Rings"`, "$['store']['book'][2]['title']"},
		{"$..book[?@.price<10].title", `"Sayings of the Century" "Moby Dick"`, "$['store']['book'][0]['title']"},
		{"$.store.bicycle", `{"color":"red","price":399}`, "$['store']['bicycle']"},
		{`$..book[?match(@.author, "H.*")].title`, `"Moby Dick"`, "$['store']['book'][2]['title']"},
		{"$.nothing", ``, ""},
		{"$.store.*", `[{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95},{"category":"fiction","author":"Evelyn Waugh","title":"Sword of Honour","price":12.99},{"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553-21311-3","price":8.99},{"category":"fiction","author":"J. R. R. Tolkien","title":"The Lord of the Rings","isbn":"0-395-19395-8","price":22.99}] {"color":"red","price":399}`, "$['store']['book']"},
		{"$..book[1,0].price", `8.95 12.99`, "$['store']['book'][0]['price']"},
		{"$..book[0,0].price", `8.95 8.95`, "$['store']['book'][0]['price']"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			nodes, err := Query(doc, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var vals []string
			for _, n := range nodes {
				s, _ := jsontree.Encode(n.Value, 0, 0)
				vals = append(vals, s)
			}
			if got := strings.Join(vals, " "); got != tt.want {
				t.Errorf("values %s\nwant   %s", got, tt.want)
			}
			if len(nodes) > 0 && nodes[0].Path != tt.paths {
				t.Errorf("path %s, want %s", nodes[0].Path, tt.paths)
			}
		})
	}
}

// TestDeterministic runs queries over objects many times: the library
// visits members in Go's map order, the result must not show it.
func TestDeterministic(t *testing.T) {
	doc, _ := jsontree.Parse(`{"z":1,"y":{"x":2,"w":[3,{"v":4}]},"u":5,"t":6,"s":7}`, "x")
	for _, q := range []string{"$.*", "$..*", "$..[?@ > 1]"} {
		first, _ := Query(doc, q)
		for range 50 {
			again, _ := Query(doc, q)
			for i := range first {
				if first[i].Path != again[i].Path {
					t.Fatalf("%s: %s then %s", q, first[i].Path, again[i].Path)
				}
			}
		}
	}
	nodes, _ := Query(doc, "$.*")
	if nodes[0].Path != "$['z']" || nodes[4].Path != "$['s']" {
		t.Errorf("not in document order: %v", nodes)
	}
}

func TestQueryFaults(t *testing.T) {
	doc, _ := jsontree.Parse(`{"a":1}`, "x")
	for _, q := range []string{"", "a.b", "$[", "$.a[?@.b ==]", "$[?foo(@)]", "$." + strings.Repeat("a", MaxQueryBytes)} {
		_, err := Query(doc, q)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.HasPrefix(err.Error(), "query is not valid JSONPath (RFC 9535): ") {
			t.Errorf("%q: %v, want a QueryError", q, err)
		}
	}
}

package main

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

// canon is the canonical JSON of a decoded result.
func canon(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return canonString(t, string(b))
}

// canonString is the canonical JSON of a document.
func canonString(t *testing.T, doc string) string {
	t.Helper()
	d, err := wire.Decode([]byte(doc), wire.Limits{})
	if err != nil {
		t.Fatalf("not JSON: %s: %v", doc, err)
	}
	b, err := wire.Encode(d, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package main

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/internal/wire"
)

var codes = []string{"hex", "base32", "base58", "hmac", "checksum", "uuid", "jwt", "number_base", "unix_time", "color", "semver", "ip_cidr"}

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, codes...)
}

// canon is the canonical JSON of a document.
func canon(t *testing.T, doc string) string {
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

// vector is an item and the whole result it must give.
type vector struct {
	name, params, want string
}

// runVectors runs each item of code and compares its whole result, as
// canonical JSON, with want.
func runVectors(t *testing.T, tools *bundledtest.Tools, code string, vs []vector) {
	t.Helper()
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			m, err := tools.Run(t, code, v.params)
			if err != nil {
				t.Fatalf("%s: %v", v.params, err)
			}
			b, _ := json.Marshal(m)
			if got, want := canon(t, string(b)), canon(t, v.want); got != want {
				t.Errorf("%s:\ngot  %s\nwant %s", v.params, got, want)
			}
		})
	}
}

// runFaults runs items that must fail with invalid_parameters and the
// message given.
func runFaults(t *testing.T, tools *bundledtest.Tools, code string, faults map[string]string) {
	t.Helper()
	for params, want := range faults {
		if got := tools.ToolError(t, code, params); got != want {
			t.Errorf("%s: message %q, want %q", params, got, want)
		}
	}
}

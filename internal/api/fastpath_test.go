package api

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// The request path's fast checks (docs/performance.md, "Request path")
// skip a schema validation when a document certainly passes it: each is
// held here to the schema it stands in for, on valid documents (which it
// must accept, or it saves nothing) and on documents that break each
// constraint (which it must never accept).

func decodeDoc(t *testing.T, s string) any {
	t.Helper()
	doc, err := wire.Decode([]byte(s), wire.Limits{})
	if err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return doc
}

const fingerprint = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// envelopeItem is a valid compute item with member name set to value (a
// JSON text), or removed when value is "".
func envelopeItem(name, value string) string {
	members := [][2]string{
		{"correlation_id", `"c-1"`}, {"tool_code", `"hash"`}, {"contract_version", `"1.0.0"`},
		{"implementation_version", `"1.2.3"`}, {"schema_fingerprint", `"` + fingerprint + `"`},
		{"parameters", `{"operation":"digest","text":"abc"}`},
	}
	var parts []string
	found := false
	for _, m := range members {
		if m[0] == name {
			found = true
			if value == "" {
				continue
			}
			m[1] = value
		}
		parts = append(parts, `"`+m[0]+`":`+m[1])
	}
	if !found && value != "" {
		parts = append(parts, `"`+name+`":`+value)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestPlainEnvelope(t *testing.T) {
	item := envelopeItem("", "")
	valid := []string{
		`{"request_id":"r-1","items":[` + item + `]}`,
		`{"request_id":"A.b_c:d-9","items":[` + item + `,` + envelopeItem("correlation_id", `"c-2"`) + `]}`,
		`{"items":[` + strings.Repeat(item+",", 3) + item + `],"request_id":"` + strings.Repeat("x", 128) + `"}`,
		`{"request_id":"r","items":[` + envelopeItem("parameters", `null`) + `]}`,
		`{"request_id":"r","items":[` + envelopeItem("tool_code", `"a_1"`) + `]}`,
		`{"request_id":"r","items":[` + envelopeItem("contract_version", `"`+strings.Repeat("v", 64)+`"`) + `]}`,
	}
	strValues := []string{`""`, `"` + strings.Repeat("x", 129) + `"`, `"a b"`, `"é"`, `"A"`, `"1abc"`, `"ab/c"`,
		`"` + strings.Repeat("v", 65) + `"`, `"` + strings.ToUpper(fingerprint) + `"`, `"` + fingerprint[1:] + `"`,
		`"` + fingerprint + `0"`, `"` + fingerprint[1:] + `g"`, `1`, `null`, `true`, `[]`, `{}`, `"x\n"`, `"c-1\n"`}
	var invalid []string
	for _, name := range []string{"correlation_id", "tool_code", "contract_version", "implementation_version", "schema_fingerprint"} {
		for _, v := range strValues {
			invalid = append(invalid, `{"request_id":"r","items":[`+envelopeItem(name, v)+`]}`)
		}
		invalid = append(invalid, `{"request_id":"r","items":[`+envelopeItem(name, "")+`]}`)
	}
	for _, v := range strValues {
		invalid = append(invalid, `{"request_id":`+v+`,"items":[`+item+`]}`)
	}
	invalid = append(invalid,
		`{"request_id":"r","items":[`+envelopeItem("parameters", "")+`]}`,
		`{"request_id":"r","items":[`+envelopeItem("extra", `1`)+`]}`,
		`{"request_id":"r","items":[]}`,
		`{"request_id":"r","items":[`+strings.Repeat(item+",", 4)+item+`]}`,
		`{"request_id":"r","items":[1]}`,
		`{"request_id":"r","items":{}}`,
		`{"request_id":"r"}`,
		`{"items":[`+item+`]}`,
		`{"request_id":"r","items":[`+item+`],"extra":1}`,
		`[]`, `"r"`, `null`,
	)
	for _, s := range valid {
		doc := decodeDoc(t, s)
		if err := computeEnvelope.Validate(doc, toolerr.InvalidParameters); err != nil {
			t.Fatalf("the test's valid envelope is refused by the schema: %v\n%s", err, s)
		}
		if !plainEnvelope(doc) {
			t.Errorf("a plain valid envelope takes the slow path: %s", s)
		}
	}
	for _, s := range invalid {
		doc := decodeDoc(t, s)
		if plainEnvelope(doc) && computeEnvelope.Validate(doc, toolerr.InvalidParameters) != nil {
			t.Errorf("the fast check accepts an envelope the schema refuses: %s", s)
		}
	}
}

func TestPlainRunRequest(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		plain     bool
	}{
		{"input", `{"input":{"operation":"digest","text":"abc"}}`, true},
		{"empty input", `{"input":{}}`, true},
		{"input not an object", `{"input":[]}`, false},
		{"input null", `{"input":null}`, false},
		{"no input", `{}`, false},
		{"wait_ms", `{"input":{},"wait_ms":10}`, false},
		{"unknown member", `{"input":{},"x":1}`, false},
		{"not an object", `[{"input":{}}]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := decodeDoc(t, tc.doc)
			_, plain := plainRunRequest(doc)
			if plain != tc.plain {
				t.Errorf("plainRunRequest = %v, want %v", plain, tc.plain)
			}
			if plain {
				if err := contracts.ValidateDocument(contracts.RunRequestV1, doc); err != nil {
					t.Errorf("the fast check accepts a document the contract refuses: %v", err)
				}
			}
		})
	}
}

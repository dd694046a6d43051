package schema

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// flatSchemas are flat schemas: the bundled hash tool's input, and one
// with every keyword the flat check reads.
var flatSchemas = map[string]string{
	"hash": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
		"properties":{
			"algorithm":{"description":"d","enum":["md5","sha1","sha256","sha512"],"type":"string"},
			"encoding":{"default":"hex","description":"d","enum":["hex","base64"],"type":"string"},
			"hmac_key":{"description":"d","maxLength":1024,"type":"string"},
			"operation":{"const":"digest","description":"d","type":"string"},
			"text":{"description":"d","maxLength":130048,"type":"string"}},
		"required":["operation","text","algorithm"]}`,
	"every": `{"type":"object","additionalProperties":false,"title":"t",
		"properties":{
			"operation":{"const":"go","type":"string"},
			"name":{"type":"string","minLength":2,"maxLength":3,"format":"hostname"},
			"count":{"type":"integer","minimum":-2,"maximum":10},
			"big":{"type":"integer"},
			"ratio":{"type":"number"},
			"flag":{"type":"boolean","default":false}},
		"required":["operation","count"]}`,
	"empty": `{"type":"object","additionalProperties":false}`,
}

// notFlat are schemas the flat check does not take: the validator alone
// decides them.
var notFlat = []string{
	`{"type":"object"}`,
	`{"type":"object","additionalProperties":true}`,
	`{"type":"object","additionalProperties":false,"minProperties":1}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","pattern":"^a"}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":["string","null"]}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"enum":["x"]}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","enum":["x",1]}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","const":"x","enum":["x"]}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","minimum":1.5}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","exclusiveMinimum":1}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"number","maximum":1}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":true}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":false}}}`,
	`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","contentEncoding":"base64"}}}`,
	`{"oneOf":[{"type":"object","additionalProperties":false}]}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`,
}

// flatDocs are documents for the flat schemas: valid ones, every kind of
// refusal, and values the flat check leaves to the validator.
var flatDocs = []string{
	`{"operation":"digest","text":"abc","algorithm":"sha256"}`,
	`{"operation":"digest","text":"","algorithm":"md5","encoding":"base64","hmac_key":""}`,
	`{"operation":"digest","text":"abc"}`,
	`{"operation":"digest","text":"abc","algorithm":"sha256","extra":1}`,
	`{"operation":"digest","text":"abc","algorithm":"SHA256"}`,
	`{"operation":"other","text":"abc","algorithm":"sha256"}`,
	`{"operation":"digest","text":7,"algorithm":"sha256"}`,
	`{"operation":"digest","text":null,"algorithm":"sha256"}`,
	`{"operation":"digest","text":"abc","algorithm":"sha256","hmac_key":"` + strings.Repeat("é", 1024) + `"}`,
	`{"operation":"digest","text":"abc","algorithm":"sha256","hmac_key":"` + strings.Repeat("é", 1025) + `"}`,
	`{"operation":"go","count":0}`,
	`{"operation":"go","count":-2,"name":"ab","flag":true,"ratio":1.5e3,"big":-9223372036854775808}`,
	`{"operation":"go","count":10,"name":"日本語"}`,
	`{"operation":"go","count":11}`,
	`{"operation":"go","count":-3}`,
	`{"operation":"go","count":1.0}`,
	`{"operation":"go","count":1e0}`,
	`{"operation":"go","count":-0}`,
	`{"operation":"go","count":1.5}`,
	`{"operation":"go","count":"1"}`,
	`{"operation":"go","count":1,"big":9223372036854775808}`,
	`{"operation":"go","count":1,"big":100000000000000000000000}`,
	`{"operation":"go","count":1,"name":"a"}`,
	`{"operation":"go","count":1,"name":"abcd"}`,
	`{"operation":"go","count":1,"name":"日本語x"}`,
	`{"operation":"go","count":1,"flag":"true"}`,
	`{"operation":"go","count":1,"ratio":"1"}`,
	`{"operation":"go","count":1,"ratio":-0.0}`,
	`{"operation":"go"}`,
	`{}`, `[]`, `"x"`, `null`, `{"":1}`,
}

func decodeJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := wire.Decode([]byte(s), wire.Limits{})
	if err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

// The flat check compiles for the flat shapes only, accepts no document
// the validator refuses, accepts the valid documents it decides (so that
// the fast path is taken), and leaves Validate's answer — nil or the same
// issues — as the validator alone gives it.
func TestFlatAgreesWithTheValidator(t *testing.T) {
	for _, s := range notFlat {
		v, err := Compile(decodeJSON(t, s))
		if err != nil {
			t.Fatalf("Compile(%s) = %v", s, err)
		}
		if v.flat != nil {
			t.Errorf("%s compiled to a flat check", s)
		}
	}
	accepted := 0
	for name, s := range flatSchemas {
		v, err := Compile(decodeJSON(t, s))
		if err != nil {
			t.Fatalf("Compile(%s) = %v", name, err)
		}
		if v.flat == nil {
			t.Fatalf("%s did not compile to a flat check", name)
		}
		slow := &Validator{schema: v.schema}
		for _, d := range flatDocs {
			doc := decodeJSON(t, d)
			fast := v.flat.accepts(doc)
			valid := v.schema.Validate(doc) == nil
			if fast && !valid {
				t.Errorf("%s: the flat check accepts %s, which the validator refuses", name, d)
			}
			// The values the flat check leaves to the validator on purpose:
			// integers written with a fraction or an exponent, or beyond
			// int64.
			undecided := strings.Contains(d, "1.0") || strings.Contains(d, "1e0") || strings.Contains(d, "9223372036854775808,") ||
				strings.Contains(d, "9223372036854775808}") || strings.Contains(d, "100000000000000000000000")
			if valid && !fast && !undecided {
				t.Errorf("%s: the flat check leaves the valid %s to the validator", name, d)
			}
			if fast {
				accepted++
			}
			got := v.Validate(doc, toolerr.InvalidParameters)
			want := slow.Validate(doc, toolerr.InvalidParameters)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Validate(%s) = %v, the validator alone %v", name, d, got, want)
			}
		}
	}
	if accepted < 8 {
		t.Errorf("the flat check accepted %d documents, want the valid ones", accepted)
	}
}

// FuzzFlat holds the flat check to the validator over any schema and
// document: a document the flat check accepts is one the validator
// accepts.
func FuzzFlat(f *testing.F) {
	for _, s := range flatSchemas {
		for _, d := range flatDocs {
			f.Add([]byte(s), []byte(d))
		}
	}
	for _, s := range notFlat {
		f.Add([]byte(s), []byte(`{"a":"x"}`))
	}
	f.Fuzz(func(t *testing.T, schemaJSON, docJSON []byte) {
		s, err := wire.Decode(schemaJSON, wire.Limits{MaxBytes: 1 << 16, MaxDepth: MaxDepth})
		if err != nil {
			t.Skip()
		}
		doc, err := wire.Decode(docJSON, wire.Limits{MaxBytes: 1 << 16, MaxDepth: MaxDepth})
		if err != nil {
			t.Skip()
		}
		v, err := Compile(s)
		if err != nil || v.flat == nil {
			t.Skip()
		}
		if v.flat.accepts(doc) && v.schema.Validate(doc) != nil {
			t.Fatalf("the flat check of %s accepts %s, which the validator refuses", schemaJSON, docJSON)
		}
	})
}

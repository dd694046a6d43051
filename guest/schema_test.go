//go:build !wasip1 && !guestgen

package guest

import (
	"strings"
	"testing"
)

type flatIn struct {
	Operation string  `json:"operation"`
	Text      string  `json:"text" doc:"The text."`
	Count     int     `json:"count"`
	Ratio     float64 `json:"ratio"`
	Strict    bool    `json:"strict"`
	skipped   int     // unexported: the derivation leaves it out
	Ignored   string  `json:"-"`
}

// flatIn's unexported field is there to be left out; naming it here keeps
// the linters from calling it unused.
var _ = flatIn{skipped: 0}

type flatOut struct {
	Result string `json:"result"`
}

func TestSchemaFlat(t *testing.T) {
	in, out := derive[flatIn, flatOut](t, "run")
	equalJSON(t, in, `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object", "additionalProperties": false,
		"properties": {
			"operation": {"type": "string", "const": "run"},
			"text": {"type": "string", "description": "The text."},
			"count": {"type": "integer"},
			"ratio": {"type": "number"},
			"strict": {"type": "boolean"}
		},
		"required": ["operation", "text", "count", "ratio", "strict"]
	}`)
	equalJSON(t, out, `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object", "additionalProperties": false,
		"properties": {"result": {"type": "string"}},
		"required": ["result"]
	}`)

	// Several operations with the same fields: one root, an enum.
	in, _ = derive[flatIn, flatOut](t, "run", "walk")
	equalJSON(t, get(t, in, "properties", "operation"), `{"type":"string","enum":["run","walk"]}`)
}

type multiIn struct {
	Operation string `json:"operation" doc:"What to do."`
	Text      string `json:"text" maxLength:"1000"`
	Indent    *int   `json:"indent,omitempty" ops:"format" minimum:"0" maximum:"8" default:"2"`
	Comments  bool   `json:"keep_comments,omitempty" ops:"minify"`
	Both      string `json:"both,omitempty" ops:"format,minify"`
}

type multiOut struct {
	Text  string `json:"text"`
	Saved int    `json:"saved_bytes,omitempty" ops:"minify"`
}

func TestSchemaOneOf(t *testing.T) {
	names := []string{"format", "minify", "validate"}
	in, out := derive[multiIn, multiOut](t, names...)

	equalJSON(t, get(t, in, "oneOf"), `[{"$ref":"#/$defs/format"},{"$ref":"#/$defs/minify"},{"$ref":"#/$defs/validate"}]`)
	equalJSON(t, get(t, in, "discriminator"), `{"propertyName":"operation","mapping":{
		"format":"#/$defs/format","minify":"#/$defs/minify","validate":"#/$defs/validate"}}`)
	equalJSON(t, get(t, in, "$defs", "format"), `{
		"type":"object","additionalProperties":false,
		"properties":{
			"operation":{"type":"string","const":"format","description":"What to do."},
			"text":{"type":"string","maxLength":1000},
			"indent":{"type":"integer","minimum":0,"maximum":8,"default":2},
			"both":{"type":"string"}
		},
		"required":["operation","text"]}`)
	equalJSON(t, get(t, in, "$defs", "validate", "properties"), `{
		"operation":{"type":"string","const":"validate","description":"What to do."},
		"text":{"type":"string","maxLength":1000}}`)
	if _, has := get(t, in, "$defs", "minify", "properties").(map[string]any)["indent"]; has {
		t.Error("minify accepts indent")
	}
	for _, op := range names {
		if _, has := get(t, in, "$defs", op, "properties", "operation").(map[string]any)["default"]; has {
			t.Errorf("%s: operation has a default", op)
		}
	}

	// Output: format and validate share a shape and are merged.
	equalJSON(t, get(t, out, "anyOf"), `[{"$ref":"#/$defs/format"},{"$ref":"#/$defs/minify"}]`)
	equalJSON(t, get(t, out, "$defs", "minify", "properties"), `{"text":{"type":"string"},"saved_bytes":{"type":"integer"}}`)
	equalJSON(t, get(t, out, "$defs", "format", "properties"), `{"text":{"type":"string"}}`)

}

type optionalIn struct {
	Operation string   `json:"operation"`
	Required  string   `json:"required"`
	Pointer   *string  `json:"pointer"`
	Empty     string   `json:"empty,omitempty"`
	Zero      int      `json:"zero,omitzero"`
	List      []string `json:"list"`
	OptList   []string `json:"opt_list,omitempty"`
}

func TestSchemaOptional(t *testing.T) {
	in, out := derive[optionalIn, optionalIn](t, "run")
	equalJSON(t, get(t, in, "required"), `["operation","required","list"]`)
	equalJSON(t, get(t, out, "required"), `["operation","required","list"]`)
	equalJSON(t, get(t, in, "properties", "pointer"), `{"type":"string"}`) // never null
}

type constraintIn struct {
	Operation string   `json:"operation"`
	Algorithm string   `json:"algorithm" enum:"md5,sha1,sha256" doc:"Digest algorithm."`
	Level     int      `json:"level" enum:"1,2,3"`
	Small     int8     `json:"small"`
	Byte      uint8    `json:"byte" maximum:"100"`
	Big       uint64   `json:"big"`
	Ratio     float32  `json:"ratio" minimum:"-1.5" maximum:"1e3"`
	Name      string   `json:"name" minLength:"1" maxLength:"64" pattern:"^[a-z]+$"`
	Tags      []string `json:"tags" minItems:"1" maxItems:"4" enum:"a,b"`
	Mode      *string  `json:"mode,omitempty" enum:"fast,slow" default:"fast"`
	Scale     *float64 `json:"scale,omitempty" default:"1.5"`
	Words     []string `json:"words,omitempty" default:"[\"x\"]"`
	Data      []byte   `json:"data"`
	Triple    [3]int   `json:"triple"`
}

func TestSchemaConstraints(t *testing.T) {
	in, _ := derive[constraintIn, flatOut](t, "run")
	equalJSON(t, get(t, in, "properties"), `{
		"operation": {"type":"string","const":"run"},
		"algorithm": {"type":"string","enum":["md5","sha1","sha256"],"description":"Digest algorithm."},
		"level": {"type":"integer","enum":[1,2,3]},
		"small": {"type":"integer","minimum":-128,"maximum":127},
		"byte": {"type":"integer","minimum":0,"maximum":100},
		"big": {"type":"integer","minimum":0},
		"ratio": {"type":"number","minimum":-1.5,"maximum":1e3},
		"name": {"type":"string","minLength":1,"maxLength":64,"pattern":"^[a-z]+$"},
		"tags": {"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":4},
		"mode": {"type":"string","enum":["fast","slow"],"default":"fast"},
		"scale": {"type":"number","default":1.5},
		"words": {"type":"array","items":{"type":"string"},"default":["x"]},
		"data": {"type":"string","contentEncoding":"base64"},
		"triple": {"type":"array","items":{"type":"integer"},"minItems":3,"maxItems":3}
	}`)
	// The literal is kept as written.
	if got := compact(t, get(t, in, "properties", "ratio", "maximum")); got != "1e3" {
		t.Errorf("maximum literal = %s, want 1e3", got)
	}
}

type nestedItem struct {
	Name  string  `json:"name"`
	Price float64 `json:"price" minimum:"0"`
	Note  *string `json:"note,omitempty"`
}

type nestedCommon struct {
	Currency string `json:"currency" enum:"EUR,USD"`
}

type nestedIn struct {
	Operation string `json:"operation"`
	nestedCommon
	Items  []nestedItem `json:"items" maxItems:"100"`
	Matrix [][]int      `json:"matrix,omitempty"`
	Owner  struct {
		ID string `json:"id"`
	} `json:"owner"`
}

func TestSchemaNested(t *testing.T) {
	in, _ := derive[nestedIn, nestedIn](t, "plan")
	equalJSON(t, get(t, in, "properties"), `{
		"operation": {"type":"string","const":"plan"},
		"currency": {"type":"string","enum":["EUR","USD"]},
		"items": {"type":"array","maxItems":100,"items":{
			"type":"object","additionalProperties":false,
			"properties":{"name":{"type":"string"},"price":{"type":"number","minimum":0},"note":{"type":"string"}},
			"required":["name","price"]}},
		"matrix": {"type":"array","items":{"type":"array","items":{"type":"integer"}}},
		"owner": {"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"]}
	}`)
	equalJSON(t, get(t, in, "required"), `["operation","currency","items","owner"]`)

}

type (
	mapIn struct {
		Operation string         `json:"operation"`
		Labels    map[string]int `json:"labels"`
	}
	anyIn struct {
		Operation string `json:"operation"`
		Value     any    `json:"value"`
	}
	recursiveIn struct {
		Operation string      `json:"operation"`
		Children  []recursive `json:"children"`
	}
	recursive struct {
		Children []recursive `json:"children"`
	}
	noOperationIn struct {
		Text string `json:"text"`
	}
	optionalOperationIn struct {
		Operation *string `json:"operation"`
	}
	enumOperationIn struct {
		Operation string `json:"operation" enum:"run"`
	}
	opsOperationIn struct {
		Operation string `json:"operation" ops:"run"`
		Other     string `json:"other" ops:"run"`
	}
	unknownOpsIn struct {
		Operation string `json:"operation"`
		Text      string `json:"text" ops:"fly"`
	}
	nestedOpsIn struct {
		Operation string `json:"operation"`
		Inner     struct {
			Text string `json:"text" ops:"run"`
		} `json:"inner"`
	}
	requiredDefaultIn struct {
		Operation string `json:"operation"`
		Level     int    `json:"level" default:"2"`
	}
	badDefaultIn struct {
		Operation string `json:"operation"`
		Level     *int   `json:"level,omitempty" default:"\"two\""`
	}
	defaultOutOfEnumIn struct {
		Operation string  `json:"operation"`
		Mode      *string `json:"mode,omitempty" enum:"a,b" default:"c"`
	}
	enumOnBoolIn struct {
		Operation string `json:"operation"`
		Flag      bool   `json:"flag" enum:"true"`
	}
	badMinimumIn struct {
		Operation string `json:"operation"`
		Level     uint8  `json:"level" minimum:"-1"`
	}
	minAboveMaxIn struct {
		Operation string `json:"operation"`
		Level     int    `json:"level" minimum:"5" maximum:"1"`
	}
	badPatternIn struct {
		Operation string `json:"operation"`
		Name      string `json:"name" pattern:"("`
	}
	stringOptionIn struct {
		Operation string `json:"operation"`
		Level     int    `json:"level,string"`
	}
	duplicateNameIn struct {
		Operation string `json:"operation"`
		X         string `json:"x"`
		embeddedX
	}
	embeddedX struct {
		Y string `json:"x"`
	}
	pointerSliceIn struct {
		Operation string    `json:"operation"`
		Items     []*string `json:"items"`
	}
	ownEncodingIn struct {
		Operation string      `json:"operation"`
		When      textEncoded `json:"when"`
	}
	textEncoded struct{}
)

func (textEncoded) MarshalText() ([]byte, error) { return nil, nil }

func TestDeclarationRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		decl Declaration
		want string
	}{
		{"map", testService("x", ops("run"), noCompute[mapIn, flatOut]), "maps are not supported"},
		{"interface", testService("x", ops("run"), noCompute[anyIn, flatOut]), "interface type"},
		{"recursive", testService("x", ops("run"), noCompute[recursiveIn, flatOut]), "recursive types are not supported"},
		{"no operation field", testService("x", ops("run"), noCompute[noOperationIn, flatOut]), `tagged json:"operation"`},
		{"optional operation", testService("x", ops("run"), noCompute[optionalOperationIn, flatOut]), `tagged json:"operation"`},
		{"enum on operation", testService("x", ops("run", "walk"), noCompute[enumOperationIn, flatOut]), "operation field takes only a doc tag"},
		{"ops on operation", testService("x", ops("run", "walk"), noCompute[opsOperationIn, flatOut]), "operation field takes only a doc tag"},
		{"unknown op in ops", testService("x", ops("run"), noCompute[unknownOpsIn, flatOut]), `ops names "fly"`},
		{"nested ops", testService("x", ops("run", "walk"), noCompute[nestedOpsIn, flatOut]), "ops tag is allowed only"},
		{"default on required", testService("x", ops("run"), noCompute[requiredDefaultIn, flatOut]), "a default needs an optional field"},
		{"default of wrong type", testService("x", ops("run"), noCompute[badDefaultIn, flatOut]), "default: expected an integer"},
		{"default outside enum", testService("x", ops("run"), noCompute[defaultOutOfEnumIn, flatOut]), "default: not one of the enum values"},
		{"enum on bool", testService("x", ops("run"), noCompute[enumOnBoolIn, flatOut]), "enum tag does not apply"},
		{"minimum out of range", testService("x", ops("run"), noCompute[badMinimumIn, flatOut]), "not an integer in the range of uint8"},
		{"minimum above maximum", testService("x", ops("run"), noCompute[minAboveMaxIn, flatOut]), "minimum is greater than maximum"},
		{"bad pattern", testService("x", ops("run"), noCompute[badPatternIn, flatOut]), "pattern does not compile"},
		{"string option", testService("x", ops("run"), noCompute[stringOptionIn, flatOut]), `json option "string"`},
		{"duplicate JSON name", testService("x", ops("run"), noCompute[duplicateNameIn, flatOut]), `JSON name "x" is used twice`},
		{"pointer in slice", testService("x", ops("run"), noCompute[pointerSliceIn, flatOut]), "a pointer is supported only"},
		{"own encoding", testService("x", ops("run"), noCompute[ownEncodingIn, flatOut]), "encodes itself"},
		{"output map", testService("x", ops("run"), noCompute[flatIn, mapIn]), "output type: mapIn.Labels: maps are not supported"},
		{"non-struct input", testService("x", ops("run"), noCompute[string, flatOut]), "must be a plain struct type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.decl.compile(true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("compile error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

package guesttest

import (
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The types of guest/schema_test.go, whose exact schemas that file checks:
// here the host's schema profile and validator judge them.

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

type optionalIn struct {
	Operation string   `json:"operation"`
	Required  string   `json:"required"`
	Pointer   *string  `json:"pointer"`
	Empty     string   `json:"empty,omitempty"`
	Zero      int      `json:"zero,omitzero"`
	List      []string `json:"list"`
	OptList   []string `json:"opt_list,omitempty"`
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

func TestSchemasPassProfile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		derive func(t *testing.T, names ...string) (any, any)
		ops    []string
	}{
		{"flat", derive[flatIn, flatOut], []string{"run"}},
		{"flat enum", derive[flatIn, flatOut], []string{"run", "walk"}},
		{"one of", derive[multiIn, multiOut], []string{"format", "minify", "validate"}},
		{"optional", derive[optionalIn, optionalIn], []string{"run"}},
		{"constraints", derive[constraintIn, flatOut], []string{"run"}},
		{"nested", derive[nestedIn, nestedIn], []string{"plan"}},
		{"tool", derive[toolIn, toolOut], []string{"echo", "repeat", "behave"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := tc.derive(t, tc.ops...)
			checkProfile(t, in, out, tc.ops...)
		})
	}
}

func TestSchemaOneOfValidates(t *testing.T) {
	in, _ := derive[multiIn, multiOut](t, "format", "minify", "validate")
	v := validator(t, in)
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"format", `{"operation":"format","text":"x","indent":2,"both":"y"}`, true},
		{"format without optional", `{"operation":"format","text":"x"}`, true},
		{"minify", `{"operation":"minify","text":"x","keep_comments":true}`, true},
		{"validate", `{"operation":"validate","text":"x"}`, true},
		{"field of another operation", `{"operation":"minify","text":"x","indent":2}`, false},
		{"indent above maximum", `{"operation":"format","text":"x","indent":9}`, false},
		{"unknown operation", `{"operation":"nope","text":"x"}`, false},
		{"missing text", `{"operation":"format"}`, false},
		{"unknown field", `{"operation":"validate","text":"x","extra":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(doc(t, tc.doc), toolerr.InvalidParameters)
			if (err == nil) != tc.ok {
				t.Errorf("Validate(%s) = %v, want ok=%v", tc.doc, err, tc.ok)
			}
		})
	}
}

func TestSchemaNestedValidates(t *testing.T) {
	in, _ := derive[nestedIn, nestedIn](t, "plan")
	v := validator(t, in)
	if err := v.Validate(doc(t, `{"operation":"plan","currency":"EUR","items":[{"name":"a","price":1}],"owner":{"id":"x"}}`), toolerr.InvalidParameters); err != nil {
		t.Errorf("valid document refused: %v", err)
	}
	if err := v.Validate(doc(t, `{"operation":"plan","currency":"EUR","items":[{"name":"a","price":1,"extra":true}],"owner":{"id":"x"}}`), toolerr.InvalidParameters); err == nil {
		t.Error("an unknown nested field was accepted")
	}
}

var _ guest.Declaration = testService("x", ops("run"), noCompute[flatIn, flatOut])

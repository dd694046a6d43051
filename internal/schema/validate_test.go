package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

func mustCompile(t testing.TB, schema string) *Validator {
	t.Helper()
	v, err := Compile(decode(t, schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return v
}

func issue(code string, path ...string) toolerr.Issue { return toolerr.NewIssue(code, path...) }

func TestValidateIssues(t *testing.T) {
	const union = `{"oneOf":[{"$ref":"#/$defs/V"},{"$ref":"#/$defs/P"}],"$defs":{
		"V":{"type":"object","properties":{"operation":{"const":"value"},"x":{"type":"integer","minimum":0},"unit":{"enum":["m","s"]}},"required":["operation","x"],"additionalProperties":false},
		"P":{"type":"object","properties":{"operation":{"const":"plan"},"y":{"type":"string"}},"required":["operation","y"],"additionalProperties":false}}}`
	tests := []struct {
		name   string
		schema string
		doc    string
		want   []toolerr.Issue // nil: valid
	}{
		{name: "valid", schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`, doc: `{"a":1}`},
		{name: "type", schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`, doc: `{"a":"x"}`,
			want: []toolerr.Issue{issue(IssueType, "a")}},
		{name: "integer given as 1.5", schema: `{"type":"integer"}`, doc: `1.5`,
			want: []toolerr.Issue{issue(IssueType)}},
		{name: "integer given as 1.0", schema: `{"type":"integer"}`, doc: `1.0`},
		{name: "required, one issue per name", schema: `{"type":"object","required":["b","a"]}`, doc: `{}`,
			want: []toolerr.Issue{issue(IssueRequired, "a"), issue(IssueRequired, "b")}},
		{name: "additional properties, unsafe name redacted", schema: `{"type":"object","additionalProperties":false}`, doc: `{"x":1,"bad name":2}`,
			want: []toolerr.Issue{issue(IssueAdditionalProperties, "*"), issue(IssueAdditionalProperties, "x")}},
		{name: "const", schema: `{"const":"a"}`, doc: `"b"`, want: []toolerr.Issue{issue(IssueConst)}},
		{name: "enum", schema: `{"enum":["a",1]}`, doc: `2`, want: []toolerr.Issue{issue(IssueEnum)}},
		{name: "min_length", schema: `{"minLength":2}`, doc: `"𝄞"`, want: []toolerr.Issue{issue(IssueMinLength)}},
		{name: "max_length", schema: `{"maxLength":3}`, doc: `"éééé"`, want: []toolerr.Issue{issue(IssueMaxLength)}},
		{name: "max_length counts code points", schema: `{"maxLength":3}`, doc: `"ééé"`},
		{name: "astral character is one code point", schema: `{"minLength":1,"maxLength":1}`, doc: `"𝄞"`},
		{name: "pattern", schema: `{"pattern":"^[a-z]+$"}`, doc: `"A"`, want: []toolerr.Issue{issue(IssuePattern)}},
		{name: "format is not asserted", schema: `{"format":"email"}`, doc: `"nope"`},
		{name: "minimum", schema: `{"minimum":0}`, doc: `-1`, want: []toolerr.Issue{issue(IssueMinimum)}},
		{name: "maximum beyond float precision", schema: `{"maximum":9007199254740993}`, doc: `9007199254740994`, want: []toolerr.Issue{issue(IssueMaximum)}},
		{name: "exclusive_minimum", schema: `{"exclusiveMinimum":0}`, doc: `0`, want: []toolerr.Issue{issue(IssueExclusiveMinimum)}},
		{name: "exclusive_maximum", schema: `{"exclusiveMaximum":0}`, doc: `0.0`, want: []toolerr.Issue{issue(IssueExclusiveMaximum)}},
		{name: "multiple_of", schema: `{"multipleOf":0.1}`, doc: `0.35`, want: []toolerr.Issue{issue(IssueMultipleOf)}},
		{name: "multiple_of exact decimal", schema: `{"multipleOf":0.1}`, doc: `0.3`},
		{name: "min_items", schema: `{"minItems":1}`, doc: `[]`, want: []toolerr.Issue{issue(IssueMinItems)}},
		{name: "max_items", schema: `{"maxItems":1}`, doc: `[1,2]`, want: []toolerr.Issue{issue(IssueMaxItems)}},
		{name: "unique_items", schema: `{"uniqueItems":true}`, doc: `[1,1.0]`, want: []toolerr.Issue{issue(IssueUniqueItems)}},
		{name: "contains", schema: `{"contains":{"const":1}}`, doc: `[2]`, want: []toolerr.Issue{issue(IssueContains)}},
		{name: "min_contains", schema: `{"contains":{"const":1},"minContains":2}`, doc: `[1]`, want: []toolerr.Issue{issue(IssueMinContains)}},
		{name: "max_contains", schema: `{"contains":{"const":1},"maxContains":1}`, doc: `[1,1]`, want: []toolerr.Issue{issue(IssueMaxContains)}},
		{name: "min_properties", schema: `{"minProperties":1}`, doc: `{}`, want: []toolerr.Issue{issue(IssueMinProperties)}},
		{name: "max_properties", schema: `{"maxProperties":0}`, doc: `{"a":1}`, want: []toolerr.Issue{issue(IssueMaxProperties)}},
		{name: "dependent_required", schema: `{"dependentRequired":{"a":["b"]}}`, doc: `{"a":1}`, want: []toolerr.Issue{issue(IssueDependentRequired, "b")}},
		{name: "property_names", schema: `{"propertyNames":{"maxLength":2}}`, doc: `{"abc":1}`, want: []toolerr.Issue{issue(IssuePropertyNames, "abc")}},
		{name: "property_names beside a later sibling", schema: `{"properties":{"k":{"propertyNames":{"maxLength":1}},"l":{},"m":{},"n":{"type":"object"}}}`,
			doc: `{"k":{"abc":1},"l":{"x":{"y":1}},"m":[1,[2]],"n":{"q":{"r":1}}}`, want: []toolerr.Issue{issue(IssuePropertyNames, "k", "abc")}},
		{name: "property_names in the first of two items", schema: `{"properties":{"a":{"properties":{"arr":{"items":{"propertyNames":{"pattern":"^[a-z]+$"}}}}}}}`,
			doc: `{"a":{"arr":[{"BAD":1},{"ok":{"x":1}}]}}`, want: []toolerr.Issue{issue(IssuePropertyNames, "a", "arr", "0", "BAD")}},
		{name: "not", schema: `{"not":{"type":"string"}}`, doc: `"a"`, want: []toolerr.Issue{issue(IssueNot)}},
		{name: "one_of, two match", schema: `{"oneOf":[{"type":"integer"},{"minimum":0}]}`, doc: `1`, want: []toolerr.Issue{issue(IssueOneOf)}},
		{name: "any_of, no branch for the type", schema: `{"anyOf":[{"type":"integer"},{"type":"null"}]}`, doc: `"x"`, want: []toolerr.Issue{issue(IssueAnyOf)}},
		{name: "any_of, the branch for the type", schema: `{"anyOf":[{"type":"integer","minimum":0},{"type":"null"}]}`, doc: `-1`, want: []toolerr.Issue{issue(IssueMinimum)}},
		{name: "discriminated union reports the chosen variant", schema: union, doc: `{"operation":"value","x":-1}`,
			want: []toolerr.Issue{issue(IssueMinimum, "x")}},
		{name: "discriminated union, enum failure in the chosen variant", schema: union, doc: `{"operation":"value","x":1,"unit":"zz"}`,
			want: []toolerr.Issue{issue(IssueEnum, "unit")}},
		{name: "discriminated union, wrong type", schema: union, doc: `[]`,
			want: []toolerr.Issue{issue(IssueOneOf)}},
		{name: "operation enum union", schema: `{"anyOf":[{"properties":{"operation":{"enum":["a","b"]}}},{"properties":{"operation":{"const":"c"}}}]}`, doc: `{"operation":"d"}`,
			want: []toolerr.Issue{issue(IssueEnum, "operation")}},
		{name: "discriminated union, unknown operation", schema: union, doc: `{"operation":"nope"}`,
			want: []toolerr.Issue{issue(IssueOneOf)}},
		{name: "not_allowed", schema: `{"prefixItems":[{}],"items":false}`, doc: `[1,2]`, want: []toolerr.Issue{issue(IssueNotAllowed, "1")}},
		{name: "unevaluated property", schema: `{"properties":{"a":{}},"unevaluatedProperties":false}`, doc: `{"a":1,"b":2}`,
			want: []toolerr.Issue{issue(IssueNotAllowed, "b")}},
		{name: "nested path with index, sorted numerically", schema: `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"minimum":0}}}}}}`,
			doc:  `{"items":[{"n":1},{"n":-1},{"n":0},{"n":0},{"n":0},{"n":0},{"n":0},{"n":0},{"n":0},{"n":0},{"n":-2}]}`,
			want: []toolerr.Issue{issue(IssueMinimum, "items", "1", "n"), issue(IssueMinimum, "items", "10", "n")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := mustCompile(t, tc.schema)
			err := v.Validate(decode(t, tc.doc), toolerr.InvalidParameters)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %#v, want nil", err)
				}
				return
			}
			var te *toolerr.Error
			if !errors.As(err, &te) {
				t.Fatalf("Validate() = %v, want a *toolerr.Error", err)
			}
			if te.Code != toolerr.InvalidParameters || te.Retryable {
				t.Errorf("code %s retryable %v, want invalid_parameters, false", te.Code, te.Retryable)
			}
			for _, is := range te.Issues {
				if !slices.Contains(IssueCodes, is.Code) {
					t.Errorf("issue code %q is not in IssueCodes", is.Code)
				}
			}
			if !reflect.DeepEqual(te.Issues, tc.want) || te.IssueCount != len(tc.want) {
				t.Errorf("issues = %v (count %d), want %v", te.Issues, te.IssueCount, tc.want)
			}
		})
	}
}

func TestValidateOutputCode(t *testing.T) {
	v := mustCompile(t, `{"type":"object"}`)
	err := v.Validate(decode(t, `[]`), toolerr.InvalidOutput)
	if code, _ := toolerr.CodeOf(err); code != toolerr.InvalidOutput {
		t.Fatalf("Validate() = %v, want invalid_output", err)
	}
}

func TestValidateBounds(t *testing.T) {
	var extra strings.Builder
	extra.WriteString("{")
	for i := range 40 {
		if i > 0 {
			extra.WriteString(",")
		}
		fmt.Fprintf(&extra, `"p%02d":%d`, i, i)
	}
	extra.WriteString("}")

	deepSchema := `{"type":"integer"}`
	deepDoc := `"x"`
	for range 20 {
		deepSchema = `{"type":"object","properties":{"a":` + deepSchema + `}}`
		deepDoc = `{"a":` + deepDoc + `}`
	}

	tests := []struct {
		name      string
		schema    string
		doc       string
		issues    int
		count     int
		pathLen   int
		firstPath []string
	}{
		{name: "32 issues kept, all counted", schema: `{"type":"object","additionalProperties":false}`, doc: extra.String(),
			issues: toolerr.MaxIssues, count: 40, pathLen: 1, firstPath: []string{"p00"}},
		{name: "path capped at 16 segments", schema: deepSchema, doc: deepDoc,
			issues: 1, count: 1, pathLen: toolerr.MaxPathSegments, firstPath: strings.Split(strings.Repeat("a", toolerr.MaxPathSegments), "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mustCompile(t, tc.schema).Validate(decode(t, tc.doc), toolerr.InvalidParameters)
			var te *toolerr.Error
			if !errors.As(err, &te) {
				t.Fatalf("Validate() = %v, want a *toolerr.Error", err)
			}
			if len(te.Issues) != tc.issues || te.IssueCount != tc.count {
				t.Fatalf("%d issues, count %d; want %d, %d", len(te.Issues), te.IssueCount, tc.issues, tc.count)
			}
			for _, is := range te.Issues {
				if len(is.Path) != tc.pathLen {
					t.Errorf("path %v has %d segments, want %d", is.Path, len(is.Path), tc.pathLen)
				}
			}
			if !reflect.DeepEqual(te.Issues[0].Path, tc.firstPath) {
				t.Errorf("first path %v, want %v", te.Issues[0].Path, tc.firstPath)
			}
		})
	}
}

// TestValidateLeaksNothing checks that no input value, validator message or
// schema location reaches the encoded error.
func TestValidateLeaksNothing(t *testing.T) {
	const secret = "s3cr3t"
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
		"properties":{
			"p":{"pattern":"^a$"},"e":{"enum":["a"]},"c":{"const":"a"},"n":{"maxLength":1},
			"t":{"type":"integer"},"u":{"anyOf":[{"const":"x"},{"const":"y"}]},
			"k":{"propertyNames":{"maxLength":1}},"m":{"minimum":10},
			"nested":{"$ref":"#/$defs/N"}},
		"$defs":{"N":{"type":"object","additionalProperties":false,"properties":{"q":{"const":1}}}}}`
	doc := `{"p":"s3cr3t","e":"s3cr3t","c":"s3cr3t","n":"s3cr3t","t":"s3cr3t","u":"s3cr3t",
		"k":{"s3cr3t key":1},"m":-12345,"nested":{"q":"s3cr3t","s3cr3t extra":1},"s3cr3t-value more":1}`
	err := mustCompile(t, schema).Validate(decode(t, doc), toolerr.InvalidParameters)
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	b, encErr := json.Marshal(err)
	if encErr != nil {
		t.Fatal(encErr)
	}
	for _, s := range []string{secret, "12345", "toolhost:", "schema.json", "http", "#/", "want", "got", err.Error() + " "} {
		if strings.Contains(string(b), s) {
			t.Errorf("encoded error %s contains %q", b, s)
		}
	}
	if err.Error() != string(toolerr.InvalidParameters) {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestValidateConcurrent(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"a":{"type":"string","maxLength":2}},"required":["a"],"additionalProperties":false}`)
	good, bad := decode(t, `{"a":"ok"}`), decode(t, `{"a":"long","b":1}`)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 16 {
		wg.Go(func() {
			for range 50 {
				if err := v.Validate(good, toolerr.InvalidParameters); err != nil {
					errs <- err
				}
				var te *toolerr.Error
				if err := v.Validate(bad, toolerr.InvalidParameters); !errors.As(err, &te) || te.IssueCount != 2 {
					errs <- fmt.Errorf("bad doc: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCompileRefuses(t *testing.T) {
	deep := `true`
	for range 70 {
		deep = `{"items":` + deep + `}`
	}
	tests := []struct {
		name   string
		schema string
		reason Reason
		path   string
	}{
		{name: "network reference", schema: `{"$ref":"https://example.com/s.json"}`, reason: InvalidSchema, path: "schema"},
		{name: "file reference", schema: `{"$ref":"/etc/passwd"}`, reason: InvalidSchema, path: "schema"},
		{name: "relative reference", schema: `{"$ref":"other.json#/a"}`, reason: InvalidSchema, path: "schema"},
		{name: "file URL reference", schema: `{"$ref":"file:///etc/passwd"}`, reason: InvalidSchema, path: "schema"},
		{name: "unknown dialect", schema: `{"$schema":"https://example.com/meta"}`, reason: InvalidSchema, path: "schema"},
		{name: "metaschema", schema: `{"properties":{"a":{"type":1}}}`, reason: InvalidSchema, path: "schema/properties/a/type"},
		{name: "too deep", schema: deep, reason: TooDeep, path: "schema" + strings.Repeat("/items", MaxDepth)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Compile(decode(t, tc.schema))
			var pe *ProfileError
			if v != nil || !errors.As(err, &pe) {
				t.Fatalf("Compile() = %v, %v; want a *ProfileError", v, err)
			}
			if want := (Violation{tc.reason, tc.path}); pe.Violations[0] != want {
				t.Errorf("violations %v, want %v first", pe.Violations, want)
			}
			if strings.Contains(err.Error(), "passwd") || strings.Contains(err.Error(), "example.com") {
				t.Errorf("Error() = %q leaks a location", err)
			}
		})
	}
}

// TestValidateNumbers checks that json.Number values, as package wire
// decodes them, are validated as numbers.
func TestValidateNumbers(t *testing.T) {
	v := mustCompile(t, `{"type":"integer","minimum":1,"maximum":100000000000000000000}`)
	for _, doc := range []any{json.Number("1"), json.Number("1e20"), json.Number("100000000000000000000")} {
		if err := v.Validate(doc, toolerr.InvalidParameters); err != nil {
			t.Errorf("Validate(%v) = %v", doc, err)
		}
	}
	for _, doc := range []any{json.Number("0"), json.Number("100000000000000000001"), json.Number("1.5"), "1"} {
		if err := v.Validate(doc, toolerr.InvalidParameters); err == nil {
			t.Errorf("Validate(%#v) = nil", doc)
		}
	}
}

func TestCodesAreStable(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	seen := map[string]bool{}
	codes := append([]string{}, IssueCodes...)
	for _, r := range Reasons {
		codes = append(codes, string(r))
	}
	for _, c := range codes {
		if !snake.MatchString(c) || seen[c] {
			t.Errorf("code %q is not snake_case or repeats", c)
		}
		seen[c] = true
	}
}
